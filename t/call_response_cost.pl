# call_response_cost.pl: what a server's answer may cost a backend, and what of a
# secret it may get back into an error.
#
#  1. A 60 MB JSON error body (many tiny values, the costliest kind to
#     parse) for a flush: HV000 saying the body was not decoded, and the
#     backend's peak RSS (VmHWM, reset just before) at most 4 MB above its
#     start.  Error bodies of exactly 64 kB are decoded, one byte more are
#     not.
#  2. Redaction: a server echoing the API key, whole or cut short (from its
#     first 4 bytes on), in a JSON error message or a non-JSON body: no
#     4-byte piece of the key's beginning in the errors, the server log or
#     lancelsm_checkpoint_history.  2xx answers that are not valid JSON
#     (stats, write spec, a checkpoint's stats), with the key where a
#     quoted window of the body would start inside it: the decoders quote
#     no byte of the body, so no 4-byte piece of the key from anywhere in
#     it, in the errors, the log or the history.  A request sent with one
#     bearer token whose answer echoes it after the file has changed
#     (another table's requests read the new one): still redacted.
#  3. Response header lines: 200 kB in all are read, 270 kB fail with 08006
#     whatever libcurl's own limits.
#  4. A checkpoint of 25 tables polled 10,500 times (poll interval 1 ms):
#     the backend's memory-context grand total (without the contexts of
#     the requests in flight, each at most 16 kB), taken after 500, 5,500
#     and 10,500 polls (pg_log_backend_memory_contexts), grows by at most
#     8 kB over one of the two runs of 5,000 polls: a leak grows both.
#  5. bearer_token_file naming a FIFO: F0000 at once (no open() waiting for
#     a writer), and the session goes on.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $port = start_emulator();
my $node = setup_node_conf('bounds', $port);
my ($s, $pid) = open_session($node);
$s->query_safe("SET statement_timeout = '60s'");

my $FLUSH = "SELECT lancelsm_flush('emu', 'events')";
my $client_text = '';    # everything the client was told

sub fault { emu('POST', '/_emulator/faults', $_[0]); }

# run: one statement in the session; returns (stdout, stderr, SQLSTATE).
sub run { return run_sql($s, $_[0], \$client_text); }

#
# 1. a 60 MB error body
#
emu_reset();
run($FLUSH);    # warm: connection, TLS-free curl state, caches
fault({ table => 'events', route => 'flush_lsm', status => 500,
	  json => { code => 20, error => 'warm' } });
run($FLUSH);
my $big = 60 * 1024 * 1024;
fault({ table => 'events', route => 'flush_lsm', status => 500,
	  json => { code => 20, error => 'big' }, pad_to => $big });
my ($start) = backend_rss_kb($pid);
reset_peak_rss($pid);
my $t0 = time();
my ($out, $err, $st) = run($FLUSH);
my $secs = time() - $t0;
my (undef, $peak) = backend_rss_kb($pid);
is($st, 'HV000', '60 MB error body: HV000') or diag($err);
like($err,
	qr/HTTP status 500 with a $big-byte body, longer than the 64 kB of an error body that are read; it was not decoded/,
	'60 MB error body: the detail gives its size and says it was not decoded');
diag(sprintf('60 MB error body: %.1f s, RSS at start %d kB, peak %d kB (+%d kB)',
	$secs, $start, $peak, $peak - $start));
cmp_ok($peak - $start, '<=', 4096,
	'60 MB error body: peak RSS at most 4 MB above its start');
is(emu_counts()->{flush_lsm}, 3, '60 MB error body: one request, no retry');

# the boundary: 64 kB are decoded, 64 kB + 1 are not
for my $case ([ 65536, 1 ], [ 65537, 0 ])
{
	my ($n, $decoded) = @$case;
	fault({ table => 'events', route => 'flush_lsm', status => 500,
		  json => { code => 20, error => 'padded' }, pad_to => $n });
	($out, $err, $st) = run($FLUSH);
	if ($decoded)
	{
		like($err, qr/HTTP status 500, code 20: padded\. Request ID/,
			"$n-byte error body: decoded");
	}
	else
	{
		like($err, qr/with a $n-byte body, longer than the 64 kB/,
			"$n-byte error body: not decoded");
	}
}

#
# 2. redaction of the key, whole or cut short
#
my $key = $API_KEY;
my $key4 = substr($key, 0, 4);
my $log_start = -s $node->logfile;
emu_reset();
my @echoes = (
	[ 'JSON message, whole key', 'flush_lsm', 500,
		{ json => { code => 20, error => "gateway saw key $key" } } ],
	[ 'JSON message, key cut to 7 bytes', 'flush_lsm', 500,
		{ json => { code => 20, error => 'gateway saw key ' . substr($key, 0, 7) } } ],
	[ 'JSON message, key cut to its first 4 bytes', 'flush_lsm', 401,
		{ json => { code => 2, error => "key $key4" } } ],
	[ 'non-JSON body, key cut', 'flush_lsm', 502,
		{ body => '<html>rejected ' . substr($key, 0, 10) . '</html>',
		  content_type => 'text/html' } ]);
for my $e (@echoes)
{
	my ($what, $route, $status, $body) = @$e;
	fault({ table => 'events', route => $route, status => $status, %$body });
	my $sql = $route eq 'flush_lsm' ? $FLUSH
	  : "SELECT count(*) FROM lancelsm_stats('emu', 'events')";
	($out, $err, $st) = run($sql);
	isnt($st, '', "$what: the call fails");
	like($err, qr/\*\*\*/, "$what: the error shows where the key was");
	unlike($err, qr/\Q$key4\E/, "$what: no piece of the key in the error");
}
# key_pieces: the 4-byte pieces of the key, from anywhere in it, that text
# holds (a window quoted from the middle of the key shows its tail, which
# no redaction recognises)
sub key_pieces
{
	my ($text) = @_;
	my %found;
	for my $i (0 .. length($key) - 4)
	{
		my $piece = substr($key, $i, 4);
		$found{$piece} = 1 if index($text, $piece) >= 0;
	}
	return [ sort keys %found ];
}
# 2xx answers that are not valid JSON, the key placed so that a window of
# 20 bytes quoted from its bad token starts inside the key ("x" and the
# key's tail make one word), or after the opening quote of a scalar body
my $tail = substr($key, 4);    # "secret-key": "xsecret" is one word
my $STATS = "SELECT count(*) FROM lancelsm_stats('emu', 'events')";
my $SPEC = "SELECT * FROM lancelsm_write_spec('emu', 'events')";
my @undecodable = (
	[ 'stats, a word starting inside the key', 'get_lsm_stats', $STATS,
		"{\"lsm_stats\": {\"buckets\": [ x$tail]}}",
		'The statistics the server sent could not be decoded: response body is not valid JSON: invalid token at line 1 column 35.' ],
	[ 'stats, a scalar holding the key', 'get_lsm_stats', $STATS,
		"\"0123456789$key\"",
		"The statistics the server sent could not be decoded: response body is not valid JSON: '[' or '{' expected at line 1 column 26." ],
	[ 'write spec, a word starting inside the key', 'get_lsm_write_spec', $SPEC,
		"{\"lsm_write_spec\": {\"sharding\": x$tail}}",
		'The write spec the server sent could not be decoded: response body is not valid JSON: invalid token at line 1 column 39.' ],
	[ 'write spec, a string cut inside the key', 'get_lsm_write_spec', $SPEC,
		"{\"lsm_write_spec\": \"" . substr($key, 2),
		'The write spec the server sent could not be decoded: response body is not valid JSON: premature end of input at line 1 column 32.' ]);
for my $u (@undecodable)
{
	my ($what, $route, $sql, $body, $detail) = @$u;
	fault({ table => 'events', route => $route, status => 200, body => $body });
	($out, $err, $st) = run($sql);
	is($st, '08P01', "$what: 08P01");
	like($err, qr/DETAIL:  \Q$detail\E Request ID: /,
		"$what: the reason, line and column, nothing of the body");
	is_deeply(key_pieces($err), [], "$what: no 4-byte piece of the key in the error");
}
fault({ table => 'events', route => 'get_lsm_stats', status => 200,
	  body => "{\"lsm_stats\": {\"buckets\": [ x$tail]}}" });
($out, $err, $st) = run("SELECT lancelsm_checkpoint('emu', 'events')");
is($st, '08P01', 'checkpoint reading stats that are not JSON: 08P01');
my $history = $node->safe_psql('postgres',
	"SELECT h::text FROM lancelsm_checkpoint_history h WHERE sqlstate = '08P01'");
like($history, qr/invalid token at line 1 column 35/,
	'checkpoint reading stats that are not JSON: the reason in the history');
is_deeply(key_pieces($history), [],
	'checkpoint reading stats that are not JSON: no 4-byte piece of the key in the history');
# ... a checkpoint failing the same way (after a successful flush, so that
# it enters the history): nor in its history
fault({ table => 'events', route => 'get_lsm_stats', status => 500,
	  json => { code => 20, error => 'cut ' . substr($key, 0, 6) } });
($out, $err, $st) = run("SELECT lancelsm_checkpoint('emu', 'events')");
is($st, 'HV000', 'checkpoint echoing a cut key: HV000');
$history = $node->safe_psql('postgres',
	'SELECT h::text FROM lancelsm_checkpoint_history h');
like($history, qr/\*\*\*/, 'checkpoint echoing a cut key: in the history, redacted');
unlike($history, qr/\Q$key4\E/, 'checkpoint echoing a cut key: no piece of it in the history');
unlike($client_text, qr/\Q$key4\E/, 'no piece of the key in anything the client was told');
my $log = slurp_file($node->logfile, $log_start);
like($log, qr/\*\*\*/, 'the server log has the redacted errors');
unlike($log, qr/\Q$key4\E/, 'no piece of the key in the server log');
is_deeply(key_pieces($log), [],
	'no 4-byte piece of the key, from anywhere in it, in the server log');
is_deeply(key_pieces($client_text), [],
	'no 4-byte piece of the key, from anywhere in it, in anything the client was told');

# the bearer token a request was sent with, though the file changed since:
# "events" sends its compact with token A and waits 3 s for the answer,
# which echoes A; meanwhile the file changes to B and the polls of
# "pinned" (its latch held) read B.  (The slow request is not the first
# of the call: a backend's first requests to a server wait for one
# another's connection.)
my $token_file = $node->data_dir . '/token';
my $tok_a = 'alpha-token-4f1e2d';
my $tok_b = 'bravo-token-9a8b7c';
PostgreSQL::Test::Utils::append_to_file($token_file, $tok_a);
$node->safe_psql('postgres',
	"ALTER SERVER emu OPTIONS (ADD bearer_token_file '$token_file')");
emu_reset();
emu('POST', '/_emulator/tables', { name => 'pinned', buckets => 1 });
emu('POST', '/_emulator/tables/pinned/generations', { count => 1 });
emu('POST', '/_emulator/tables/pinned/latch', { bucket => 'b0', held => JSON::PP::true });
emu('POST', '/_emulator/tables/events/generations', { count => 1 });
emu('POST', '/_emulator/latency', { table => 'events', route => 'compact_lsm', ms => 3000 });
fault({ table => 'events', route => 'compact_lsm', status => 500,
	  json => { code => 20, error => "token $tok_a refused" } });
$s->query_safe("SET lancelsm.poll_interval_max = '20ms'");
my $banner = send_query($s,
	"SELECT table_name, ok, message FROM lancelsm_checkpoint('emu', ARRAY['events', 'pinned'])");
# pinned_polls_with: wait (at most 5 s) until "pinned" was polled with
# token $tok; true when it was.
sub pinned_polls_with
{
	my ($tok) = @_;
	my $until = time() + 5;
	while (time() < $until)
	{
		my $reqs = emu('GET', '/_emulator/log?table=pinned&route=get_lsm_stats')->{requests};
		return 1 if grep { ($_->{headers}{authorization} // '') eq "Bearer $tok" } @$reqs;
		sleep(0.02);
	}
	return 0;
}
ok(pinned_polls_with($tok_a), 'token: "pinned" polls with token A while "events" waits');
# replaced atomically, as docs/configuration.md asks of the agent
PostgreSQL::Test::Utils::append_to_file("$token_file.new", $tok_b);
rename("$token_file.new", $token_file) or die "rename: $!";
ok(pinned_polls_with($tok_b), 'token: "pinned" now polls with token B');
emu('POST', '/_emulator/tables/pinned/latch', { bucket => 'b0', held => JSON::PP::false });
($out, $err) = finish_query($s, $banner);
# (the word "token" shares 4 bytes with both tokens: it is masked too)
like($out, qr/^events\|f\|.*: \*\*\* \*\*\* refused\./m,
	'token: the echo of token A is redacted although B is the token read last');
unlike($out . $err, qr/\Q$tok_a\E|alph/, 'token: no piece of token A in the result');
$s->query_safe('RESET lancelsm.poll_interval_max');

#
# 3. response header lines: capped in all
#
for my $case ([ 200, '' ], [ 270, '08006' ])
{
	my ($kb, $want) = @$case;
	emu_reset();
	fault({ table => 'events', route => 'flush_lsm',
		  raw_header_lines => [ map { sprintf('x-pad-%03d: %s', $_, 'h' x 1000) } 1 .. $kb ] });
	($out, $err, $st) = run($FLUSH);
	is($st, $want, "$kb kB of header lines: " . ($want || 'read'));
	like($err, qr/response header lines are larger than 256 kB in all/,
		"$kb kB of header lines: the detail names the cap") if $want;
}

#
# 4. memory per request: flat over two runs of 5,000 polls
#
# grand_total: ask the backend to log its memory contexts, wait for the
# dump, return its grand total in bytes without the "lancelsm request"
# contexts, and the largest of those.  A request's context holds its
# attempt's URL and body while it is in flight and is emptied when it
# ends, so whether a dump finds one in flight or between polls moves the
# grand total by a block or two per table: the rest must not move at all,
# and each request context must stay small.
my $other = $node->background_psql('postgres', timeout => 60);
sub grand_total
{
	my $from = -s $node->logfile;
	$other->query_safe("SELECT pg_log_backend_memory_contexts($pid)");
	my $until = time() + 10;
	while (time() < $until)
	{
		my $text = slurp_file($node->logfile, $from);
		if ($text =~ /\[$pid\].*Grand total: (\d+) bytes/)
		{
			my ($total, $requests, $largest) = ($1, 0, 0);
			for my $n ($text =~ /lancelsm request: (\d+) total/g)
			{
				$requests += $n;
				$largest = $n if $n > $largest;
			}
			return ($total - $requests, $largest);
		}
		sleep(0.05);
	}
	die 'no memory context dump within 10 s';
}

# stats_reads: the stats reads the emulator answered, on every table.
sub stats_reads
{
	return emu('GET', '/_emulator/counts')->{get_lsm_stats};
}

# polls_reached: wait (at most 90 s) until the emulator answered $n stats
# reads in all; true when it did.
sub polls_reached
{
	my ($n) = @_;
	my $until = time() + 90;
	while (time() < $until)
	{
		return 1 if stats_reads() >= $n;
		sleep(0.05);
	}
	return 0;
}

# Each table's checkpoint sends at most 16 requests a second (the request
# budget of src/task/task.c): 25 tables polled at once make 5,000
# polls in about 13 s, where one table would take 5 minutes.
emu_reset();
my @tables = map { "mem_$_" } 1 .. 25;
for my $t (@tables)
{
	emu('POST', '/_emulator/tables', { name => $t, buckets => 1 });
	emu('POST', "/_emulator/tables/$t/generations", { count => 1 });
	emu('POST', "/_emulator/tables/$t/latch", { bucket => 'b0', held => JSON::PP::true });
}
$s->query_safe("SET statement_timeout = '180s'");
$s->query_safe("SET lancelsm.poll_interval_min = '1ms'");
$s->query_safe("SET lancelsm.poll_interval_max = '1ms'");
my $names = join(', ', map { "'$_'" } @tables);
$banner = send_query($s,
	"SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint('emu', ARRAY[$names])");
# a first dump before the measured ones: logging the contexts allocates
# too (the error-reporting buffers), once
ok(polls_reached(100), 'checkpoint: 100 polls');
my ($warm) = grand_total();
ok(polls_reached(500), 'checkpoint: 500 polls (20 a table)');
my ($first, $largest_first) = grand_total();
my $first_polls = stats_reads();
ok(polls_reached($first_polls + 5000), 'checkpoint: 5,000 polls more');
my ($mid) = grand_total();
my $mid_polls = stats_reads();
ok(polls_reached($mid_polls + 5000), 'checkpoint: another 5,000 polls');
my ($last, $largest_last) = grand_total();
my $last_polls = stats_reads();
for my $t (@tables)
{
	emu('POST', "/_emulator/tables/$t/latch", { bucket => 'b0', held => JSON::PP::false });
}
($out, $err) = finish_query($s, $banner);
is("$out|$err", '25|', 'checkpoint: all 25 tables drained once their latches are free');
diag("memory contexts but the requests': $warm bytes after 100 polls, "
	  . "$first after $first_polls, $mid after $mid_polls, $last after $last_polls; "
	  . "largest request context $largest_first then $largest_last bytes");
# A leak grows the total in both runs of 5,000 polls.  A context that
# takes one more block once (AllocSet doubles its blocks: 64 kB was seen
# once on PostgreSQL 18, in a run that then stayed flat) grows it in one.
my ($grew1, $grew2) = (abs($mid - $first), abs($last - $mid));
cmp_ok(($grew1 < $grew2 ? $grew1 : $grew2), '<=', 8192,
	'checkpoint: memory-context total within 8 kB over one of two runs of 5,000 polls (a leak grows both)');
cmp_ok(($largest_first > $largest_last ? $largest_first : $largest_last), '<=', 16384,
	'checkpoint: no request context holds more than 16 kB');

#
# 5. a FIFO as bearer_token_file: refused at once (last: without O_NONBLOCK
# the open() waits for a writer and the session is lost)
#
my $fifo = $node->data_dir . '/token.fifo';
POSIX::mkfifo($fifo, 0600) or die "mkfifo: $!";
$node->safe_psql('postgres',
	"ALTER SERVER emu OPTIONS (SET bearer_token_file '$fifo')");
emu_reset();
my $ms;
($ms, $out, $err) = timed_query($s, $FLUSH);
is(sqlstate_of($err), 'F0000', 'FIFO token file: F0000');
like($err, qr/token\.fifo" is not a regular file/, 'FIFO token file: the detail says why');
cmp_ok($ms, '<', 2000, 'FIFO token file: refused at once, not waiting for a writer');
is(emu_counts()->{flush_lsm}, 0, 'FIFO token file: nothing sent');
is($s->query_safe('SELECT 1'), '1', 'FIFO token file: the session goes on');
$node->safe_psql('postgres', 'ALTER SERVER emu OPTIONS (DROP bearer_token_file)');

$other->quit;
$s->quit;
$node->stop;
done_testing();
