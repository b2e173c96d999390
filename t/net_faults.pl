# net_faults.pl: checkpoints and every route over a bad network.
#
# lancelsm talks to the emulator through emulator/fault_proxy.py (this
# kernel has no netem), which adds per direction latency with jitter, a
# stall that heals, a reset (RST) of a connection while its request is
# answered, and a half-open drop (no answer, no FIN, no RST).  Expected:
#  - 200 ms +- 50 ms RTT: a checkpoint converges with exactly the calls it
#    makes on loopback (server "direct", no proxy);
#  - a 5 s stall in the middle of a poll wait: converges after it heals
#    when statement_timeout allows (same calls), else 57014 at
#    statement_timeout;
#  - a half-open connection: 57014 at statement_timeout, or 08006 at the
#    read_timeout bound without statement_timeout; never later;
#  - the answer to each route reset after the server acted on it:
#    flush, compact, stats and the write spec read are re-sent once by
#    libcurl on a fresh connection when the dead connection was a reused
#    one, and succeed; set and unset go on a fresh connection, are never
#    re-sent and fail with 08006, the server having acted (a re-sent
#    unset would have failed with "nothing to unset").  On a fresh
#    connection a flush is not re-sent either: 08006.
# Every server here stops by itself (the proxy after --max-lifetime).
use strict;
use warnings FATAL => 'all';

use File::Spec;
use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

skip_in_repeat_runs();

my $POLL_MS = 300;
my $CHECKPOINT = "SELECT lancelsm_checkpoint('emu', 'events')";

my $emu_port = start_emulator();
my $proxy = start_proxy($emu_port);
my $node = setup_node('faults', $proxy->{port});
$node->safe_psql('postgres', qq{
	CREATE SERVER direct FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$emu_port');
	CREATE USER MAPPING FOR PUBLIC SERVER direct OPTIONS (api_key '$API_KEY');
});
my ($s, $pid) = open_session($node);
# a fixed poll interval: the call counts depend on the network alone
$s->query_safe("SET lancelsm.poll_interval_min = '${POLL_MS}ms'");
$s->query_safe("SET lancelsm.poll_interval_max = '${POLL_MS}ms'");

# start_proxy: the fault proxy in front of the emulator; bounded to 120 s.
sub start_proxy
{
	my ($target) = @_;
	my $root = File::Spec->rel2abs("$FindBin::RealBin/..");
	my $tmp = PostgreSQL::Test::Utils::tempdir('proxy');
	my $inst = { host => '127.0.0.1', log => "$tmp/proxy.log" };
	my $pid = fork();

	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		open(STDOUT, '>>', $inst->{log}) or POSIX::_exit(127);
		open(STDERR, '>>', $inst->{log}) or POSIX::_exit(127);
		exec('python3', "$root/emulator/fault_proxy.py",
			'--target', "127.0.0.1:$target", '--port-file', "$tmp/port",
			'--control-port-file', "$tmp/cport", '--max-lifetime', '120',
			'--seed', '11')
		  or POSIX::_exit(127);
	}
	$inst->{pid} = $pid;
	my $until = time() + 10;
	sleep(0.02) while !-s "$tmp/port" && time() < $until;
	die "the fault proxy did not start, see $inst->{log}" unless -s "$tmp/port";
	chomp($inst->{port} = slurp_file("$tmp/port"));
	chomp(my $cport = slurp_file("$tmp/cport"));
	$inst->{control} = { host => '127.0.0.1', port => $cport };
	return $inst;
}

END
{
	local $?;
	if ($proxy && $proxy->{pid})
	{
		kill('TERM', $proxy->{pid});
		waitpid($proxy->{pid}, 0);
	}
}

# px: one request to the proxy's control API.
sub px { return emu_at($proxy->{control}, @_); }

# fresh: emulator and proxy back to their start; $n L0 generations on b0.
sub fresh
{
	my ($n) = @_;

	px('POST', '/_proxy/clear');
	emu_reset();
	emu('POST', '/_emulator/tables/events/generations', { count => $n })
	  if $n;
}

# calls: "flush/compact/stats" on table events since the last reset.
sub calls
{
	my $c = emu_counts();
	return "$c->{flush_lsm}/$c->{compact_lsm}/$c->{get_lsm_stats}";
}

# checkpoint_via: run a checkpoint of events on $server; (ms, sqlstate,
# stderr, calls).
sub checkpoint_via
{
	my ($server) = @_;
	my ($ms, $out, $err) =
	  timed_query($s, "SELECT lancelsm_checkpoint('$server', 'events')");
	return ($ms, sqlstate_of($err), $err, calls());
}

# l0: the L0 generations of events' bucket b0.
sub l0
{
	my $t = emu('GET', '/_emulator/tables/events');
	return scalar @{ $t->{buckets}[0]{generations} };
}

# 1. 200 ms +- 50 ms RTT: the same calls as on loopback
fresh(3);
my ($ms, $state, $err, $loopback) = checkpoint_via('direct');
is($state . $loopback, '1/3/4',
	'loopback: 3 generations, one per pass: flush 1, compact 3, stats 4')
  or diag($err);
px('POST', '/_proxy/direction', { latency_ms => 100, jitter_ms => 25 });
($ms) = timed_query($s, "SELECT lancelsm_flush('emu', 'events')");
cmp_ok($ms, '>=', 150, 'a round trip through the proxy takes >= 150 ms');
fresh(3);
px('POST', '/_proxy/direction', { latency_ms => 100, jitter_ms => 25 });
($ms, $state, $err, my $wan) = checkpoint_via('emu');
diag(sprintf('checkpoint at 200 +- 50 ms RTT: %.0f ms', $ms));
is($state . $wan, $loopback, '200 +- 50 ms RTT: the calls of loopback')
  or diag($err);
is(l0(), 0, 'and L0 is drained');

# stall_in_poll_wait: a checkpoint of 2 generations whose network stalls
# for 5 s in the poll wait after its first compact; (ms, sqlstate, err).
sub stall_in_poll_wait
{
	my ($timeout) = @_;

	fresh(2);
	$s->query_safe("SET statement_timeout = '$timeout'");
	my $t0 = time();
	my $banner = send_query($s, $CHECKPOINT);
	# the emulator has answered the first compact: the poll wait of
	# 300 ms begins as that answer arrives
	wait_for_request('compact_lsm', sub { $_[0]{status} });
	px('POST', '/_proxy/stall', { ms => 5000 });
	my ($out, $e) = finish_query($s, $banner);
	my $elapsed = (time() - $t0) * 1000;
	$s->query_safe('SET statement_timeout = 0');
	return ($elapsed, sqlstate_of($e), $e);
}

# 2. a 5 s stall: converges after it heals when the timeout allows ...
($ms, $state, $err) = stall_in_poll_wait('20s');
is($state, '', 'stall of 5 s, statement_timeout 20 s: converges')
  or diag($err);
is(calls(), '1/2/3', 'after the stall: flush 1, compact 2, stats 3');
cmp_ok($ms, '>=', 4500, 'it waited for the stall to heal');
is(l0(), 0, 'L0 drained');

# ... else it ends with 57014 at statement_timeout
($ms, $state, $err) = stall_in_poll_wait('2s');
diag(sprintf('stall of 5 s under statement_timeout 2 s: ended after %.0f ms',
	$ms));
is($state, '57014', 'stall of 5 s, statement_timeout 2 s: 57014')
  or diag($err);
cmp_ok($ms, '>=', 1950, 'not before statement_timeout (- 50 ms)');
cmp_ok($ms, '<', 3000, 'at statement_timeout, not at the end of the stall');
# the stalled poll must reach the emulator before its reset: the backend
# closed its connection at the timeout, and the proxy ends a connection
# once it has delivered what it held, the request and the close, both ways
px('POST', '/_proxy/clear');
my $until = time() + 30;
sleep(0.02) while px('GET', '/_proxy/state')->{live} > 0 && time() < $until;
is(px('GET', '/_proxy/state')->{live}, 0,
	'after the stall: the connection the timeout left has ended');

# half_open: the checkpoint's watermark read is dropped half-open; (ms,
# sqlstate, err).
sub half_open
{
	my ($timeout) = @_;

	fresh(1);
	px('POST', '/_proxy/arm',
		{ match => '/get_lsm_stats', action => 'half_open' });
	$s->query_safe("SET statement_timeout = '$timeout'");
	my ($ms, $out, $e) = timed_query($s, $CHECKPOINT);
	$s->query_safe('SET statement_timeout = 0');
	return ($ms, sqlstate_of($e), $e);
}

# 3. a half-open connection: statement_timeout ends it ...
($ms, $state, $err) = half_open('2s');
is($state, '57014', 'half-open, statement_timeout 2 s: 57014') or diag($err);
cmp_ok($ms, '>=', 1950, 'half-open: not before statement_timeout');
cmp_ok($ms, '<', 3000, 'half-open: at statement_timeout');
is(calls(), '1/0/0', 'half-open: the watermark read never reached the server');

# ... and without one, the server's read_timeout.  The bound (docs/configuration.md):
# read_timeout + about 2 s for a request without a body, + about 6 s for
# one with a body, as this stats read: libcurl's low-speed check averages
# over its last 5 one-second samples, and the body sent counts as bytes
# moved until its sample leaves that window (measured: 7.3 s for 2 s).
$node->safe_psql('postgres', "ALTER SERVER emu OPTIONS (ADD read_timeout '1')");
($ms, $state, $err) = half_open('0');
diag(sprintf('half-open, read_timeout 1 s: ended after %.0f ms', $ms));
is($state, '08006', 'half-open, no statement_timeout: 08006 at read_timeout')
  or diag($err);
cmp_ok($ms, '>=', 1000, 'half-open: not before read_timeout');
# measured 7.0 s here; slack for a loaded machine
cmp_ok($ms, '<', 9500, 'half-open: within read_timeout + about 6 s');
$node->safe_psql('postgres', "ALTER SERVER emu OPTIONS (DROP read_timeout)");

# reset_answer: with a connection to the proxy already open (reused),
# reset the answer to the next request on $route after the server acted;
# run $sql; (sqlstate, stdout, err, the route's call count).
sub reset_answer
{
	my ($session, $route, $sql) = @_;

	px('POST', '/_proxy/arm',
		{ match => "/$route/", on => 'answer', action => 'reset' });
	my ($ms, $out, $e) = timed_query($session, $sql);
	my $c = emu_counts()->{$route} // 0;
	is(px('GET', '/_proxy/state')->{counts}{reset} // 0,
		1, "$route: its answer was reset");
	return (sqlstate_of($e), $out, $e, $c);
}

# warm: leave a reused keep-alive connection in the session's pool.
sub warm
{
	my ($session) = @_;
	$session->query_safe("SELECT count(*) FROM lancelsm_stats('emu', 'events')");
}

# 4. resets of each route's answer.
# flush: re-sent once on a fresh connection; idempotent (one L0 generation)
fresh(0);
emu('POST', '/_emulator/tables/events/write', { rows => 10 });
warm($s);
emu('POST', '/_emulator/log/reset');
my ($st, $out, $c);
($st, $out, $err, $c) =
  reset_answer($s, 'flush_lsm', "SELECT lancelsm_flush('emu', 'events')");
is("$st:$c", ':2', 'flush, reused connection reset: re-sent once, success')
  or diag($err);
is(l0(), 1, 'flush re-sent: still one generation sealed');

# compact: the re-send finds the bucket latched by the pass the lost answer
# started (429), is retried after the backoff and latches what is left
fresh(2);
warm($s);
emu('POST', '/_emulator/log/reset');
$s->query_safe("SET lancelsm.backoff_base = '500ms'");
($st, $out, $err, $c) =
  reset_answer($s, 'compact_lsm', "SELECT lancelsm_compact('emu', 'events')");
$s->query_safe('RESET lancelsm.backoff_base');
is("$st:$c", ':3',
	'compact, reused connection reset: re-sent (429: the pass runs), retried, success')
  or diag($err);
is(emu('GET', '/_emulator/tables/events')->{passes_dispatched},
	2, 'compact: two passes dispatched, one per generation');

# stats: re-sent, success
fresh(1);
warm($s);
emu('POST', '/_emulator/log/reset');
($st, $out, $err, $c) = reset_answer($s, 'get_lsm_stats',
	"SELECT l0_generations FROM lancelsm_stats('emu', 'events')");
is("$st:$out:$c", ':1:2', 'stats, reused connection reset: re-sent, success')
  or diag($err);

# write spec read: re-sent, success
fresh(0);
warm($s);
($st, $out, $err, $c) = reset_answer($s, 'get_lsm_write_spec',
	"SELECT sharding FROM lancelsm_write_spec('emu', 'events')");
is("$st:$out:$c", ':bucket:2', 'get write spec, reset: re-sent, success')
  or diag($err);

# set: never re-sent (fresh connection): 08006, though the server acted
fresh(0);
$s->query_safe("SELECT lancelsm_unset_write_spec('emu', 'events')");
emu('POST', '/_emulator/log/reset');
($st, $out, $err, $c) = reset_answer($s, 'set_lsm_write_spec',
	"SELECT lancelsm_set_write_spec('emu', 'events', 'bucket', 'id', 2)");
is("$st:$c", '08006:1', 'set write spec, reset: not re-sent, 08006')
  or diag($err);
is(emu('GET', '/_emulator/tables/events')->{spec}{sharding}{num_buckets},
	2, 'set: the server installed the spec all the same');
my (undef, undef, $again) = timed_query($s,
	"SELECT lancelsm_set_write_spec('emu', 'events', 'bucket', 'id', 2)");
is(sqlstate_of($again), '55000', 'set again: refused, a spec is installed');

# unset: never re-sent: 08006; the spec is gone, and a re-send would fail
fresh(0);
emu('POST', '/_emulator/log/reset');
($st, $out, $err, $c) = reset_answer($s, 'unset_lsm_write_spec',
	"SELECT lancelsm_unset_write_spec('emu', 'events')");
is("$st:$c", '08006:1', 'unset write spec, reset: not re-sent, 08006')
  or diag($err);
is(emu('GET', '/_emulator/tables/events')->{spec},
	undef, 'unset: the server removed the spec all the same');
(undef, undef, $again) =
  timed_query($s, "SELECT lancelsm_unset_write_spec('emu', 'events')");
is(sqlstate_of($again), '55000',
	'unset again: "nothing to unset", what a re-send would have answered');

# flush on the session's first (fresh) connection: not re-sent, 08006
fresh(0);
emu('POST', '/_emulator/tables/events/write', { rows => 10 });
my ($s2) = open_session($node);
($st, $out, $err, $c) =
  reset_answer($s2, 'flush_lsm', "SELECT lancelsm_flush('emu', 'events')");
is("$st:$c", '08006:1', 'flush, fresh connection reset: 08006, one call')
  or diag($err);
is(l0(), 1, 'the flush happened; retrying it is safe');
$s2->quit;

$s->quit;
$node->stop;
done_testing();
