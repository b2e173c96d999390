# security_secrets.pl: the API key stays secret; privileges are PostgreSQL's.
#
#  - With log_min_messages = debug5, log_statement = all and
#    log_error_verbosity = verbose, every function is run, succeeding and
#    failing (401, 404, a server that echoes the key back, a timeout):
#    the key never appears in the server log except in the text of the
#    CREATE/ALTER USER MAPPING statements that contain it (PostgreSQL logs
#    statements as they are; docs/security.md, "Privileges"), and not even there
#    when the mapping is changed with log_statement off (the documented
#    mitigation).  Never in errors, details, hints, NOTICEs, nor in
#    pg_stat_activity while a call runs.
#  - Non-superusers: no USAGE, no call (42501); USAGE without a mapping,
#    42704 naming the mapping; another role's api_key unreadable in
#    pg_user_mappings; ssl_* options refused (42501); nothing runs as
#    SECURITY DEFINER but the event trigger functions, which cannot be
#    called.
#  - pg_terminate_backend while idle with a cached connection: FATAL
#    57P01, no crash, the postmaster did not restart anything.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $WRONG_KEY = 'wrong-secret-6c1f0a';
my $ROTATED_KEY = 'rotated-secret-93be57';
my $BOB_KEY = 'bob-secret-47d2e1';

my $port = start_emulator();
my $node = setup_node_conf('secrets', $port, qq{
log_min_messages = debug5
log_statement = all
log_error_verbosity = verbose
log_min_error_statement = debug5
});
my $logfile = $node->logfile;
my ($s, $pid) = open_session($node);
$s->query_safe("SET statement_timeout = '20s'");

my $client_text = '';    # everything the client was told

# run: one statement in the session; returns (stdout, stderr, SQLSTATE).
sub run { return run_sql($s, $_[0], \$client_text); }

sub fault { emu('POST', '/_emulator/faults', $_[0]); }

#
# 1. every function, succeeding
#
emu_reset();
emu('POST', '/_emulator/tables/events/generations', { count => 1 });
for my $sql (
	"SELECT lancelsm_flush('emu', 'events')",
	"SELECT lancelsm_compact('emu', 'events')",
	"SELECT lancelsm_checkpoint('emu', 'events')",
	"SELECT count(*) >= 0 FROM lancelsm_stats('emu', 'events', true)",
	"SELECT count(*) >= 0 FROM lancelsm_generations('emu', 'events', true)",
	"SELECT count(*) >= 0 FROM lancelsm_memtables('emu', 'events')")
{
	my ($out, $err, $st) = run($sql);
	is($st, '', "succeeds: $sql") or diag($err);
}

#
# 2. failing calls
#
# each: what, the SQLSTATE it fails with (quoted), the statement, the
# fault on table "events" (none when undef) and the statement_timeout
# (20s when undef)
my @failing = (
	[ '404', '"HV00R"', "SELECT lancelsm_flush('emu', 'nosuch')" ],
	[ '500 echoing the key', '"HV000"', "SELECT lancelsm_flush('emu', 'events')",
	  { route => 'flush_lsm', status => 500,
		json => { code => 20, error => "bad key $API_KEY" } } ],
	[ '400 HTML echoing the key', '"55000"', "SELECT lancelsm_compact('emu', 'events')",
	  { route => 'compact_lsm', status => 400, content_type => 'text/html',
		body => "<html>x-api-key: $API_KEY</html>" } ],
	[ 'stats error echoing the key', '"HV000"',
	  "SELECT count(*) FROM lancelsm_stats('emu', 'events')",
	  { route => 'get_lsm_stats', status => 502,
		json => { code => 20, error => "upstream saw $API_KEY" } } ],
	[ 'undecodable stats quoting the key', '"08P01"',
	  "SELECT count(*) FROM lancelsm_stats('emu', 'events')",
	  { route => 'get_lsm_stats', status => 200, body => "{\"lsm_stats\": \"$API_KEY" } ],
	[ 'timeout', '"57014"', "SELECT count(*) FROM lancelsm_memtables('emu', 'events')",
	  { route => 'get_lsm_stats', action => 'hang' }, '300ms' ],
	[ 'broken connection', '"08006"', "SELECT lancelsm_checkpoint('emu', 'events')",
	  { route => 'flush_lsm', action => 'reset' } ]);
for my $case (@failing)
{
	my ($what, $state, $sql, $fault, $timeout) = @$case;
	emu_reset();
	fault({ table => 'events', %$fault }) if $fault;
	$s->query_safe("SET statement_timeout = '" . ($timeout // '20s') . "'");
	my ($out, $err, $st) = run($sql);
	is("\"$st\"", $state, "$what: fails with $state") or diag($err);
}
$s->query_safe("SET statement_timeout = '20s'");
emu_reset();

# 401: a wrong key in the mapping (set with log_statement on, on purpose)
$node->safe_psql('postgres',
	"ALTER USER MAPPING FOR PUBLIC SERVER emu OPTIONS (SET api_key '$WRONG_KEY')");
my ($out, $err, $st) = run("SELECT lancelsm_flush('emu', 'events')");
is($st, '28000', '401: fails with 28000') or diag($err);
($out, $err, $st) = run("SELECT count(*) FROM lancelsm_stats('emu', 'events')");
is($st, '28000', '401 on stats: fails with 28000') or diag($err);

# the documented mitigation: change the key with log_statement off (and
# log_min_error_statement, which attaches the statement text to every
# message at or above it: here debug5, by default every error); a key
# the server does not know, then the right one back
for my $case ([ $ROTATED_KEY, '28000', 'rotated key (unknown to the server): 28000' ],
	[ $API_KEY, '', 'key restored with log_statement off: the call works' ])
{
	my ($key, $state, $what) = @$case;

	$node->safe_psql('postgres', qq{
		SET log_statement = 'none';
		SET log_min_error_statement = 'panic';
		ALTER USER MAPPING FOR PUBLIC SERVER emu OPTIONS (SET api_key '$key');
		RESET log_min_error_statement;
		RESET log_statement;
	});
	($out, $err, $st) = run("SELECT lancelsm_flush('emu', 'events')");
	is($st, $state, $what) or diag($err);
}

#
# 3. pg_stat_activity while a call runs
#
my $other = $node->background_psql('postgres', on_error_stop => 0,
	timeout => 30);
emu_reset();
fault({ table => 'events', route => 'flush_lsm', action => 'hang' });
$s->query_safe("SET statement_timeout = '5s'");
my $banner = send_query($s, "SELECT lancelsm_flush('emu', 'events')");
wait_for_request('flush_lsm');
my $activity = $other->query_safe(
	"SELECT row_to_json(a)::text FROM pg_stat_activity a WHERE pid = $pid");
like($activity, qr/lancelsm_flush/, 'pg_stat_activity shows the running call');
unlike($activity, qr/\Q$API_KEY\E/,
	'pg_stat_activity of a running call: no API key in any column');
my ($o2, $e2) = finish_query($s, $banner);
$client_text .= "$o2\n$e2\n";
is(sqlstate_of($e2), '57014', 'the hung call ended at statement_timeout');
$s->query_safe("SET statement_timeout = '20s'");

#
# 4. NOTICEs, errors, details and hints seen by the client
#
unlike($client_text, qr/\Q$API_KEY\E/,
	'the API key is in no error, detail, hint or notice the client got');
unlike($client_text, qr/\Q$WRONG_KEY\E|\Q$ROTATED_KEY\E/,
	'nor any other key of the mapping');
like($client_text, qr/DETAIL:.*Request ID/,
	'(the client did get details with request ids)');
like($client_text, qr/HTTP status 500, code 20: bad key \*\*\*\./,
	'a server echoing the key: the detail keeps its text, the key redacted');
like($client_text,
	qr/could not be decoded: response body is not valid JSON: premature end of input at line 1 column 29\. Request ID/,
	'a 2xx answer echoing the key, not valid JSON: the decoder quotes none of it');

#
# 5. the server log
#
# entries: split the log into entries (a line starting with the
# log_line_prefix's timestamp starts one; continuation lines belong to it).
sub log_entries
{
	my @entries;
	for my $line (split /\n/, slurp_file($logfile))
	{
		if ($line =~ /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/ || !@entries)
		{
			push @entries, $line;
		}
		else
		{
			$entries[-1] .= "\n$line";
		}
	}
	return @entries;
}
my @entries = log_entries();
cmp_ok(scalar(@entries), '>', 300, 'the debug5 log has many entries');
ok((grep { /DEBUG:/ } @entries) && (grep { /statement: SELECT lancelsm_flush/ } @entries)
	  && (grep { /LOCATION:/ } @entries),
	'the log is at debug5, with statements and locations');
my @with_key = grep { /\Q$API_KEY\E/ } @entries;
# PostgreSQL's own statement logging: "LOG: statement: ..." from
# log_statement, "STATEMENT: ..." from log_min_error_statement
my $DDL_RE =
  qr/(?:LOG:\s+(?:00000:\s+)?statement|STATEMENT):\s+(?:CREATE|ALTER)\s+USER\s+MAPPING\b/;
my @bad = grep { !/$DDL_RE/ } @with_key;
cmp_ok(scalar(@with_key), '>=', 1,
	'the key appears in the log (the CREATE USER MAPPING statement text)');
is_deeply(\@bad, [],
	'the API key appears in the log only in CREATE/ALTER USER MAPPING statements');
my @wrong = grep { /\Q$WRONG_KEY\E/ } @entries;
is(scalar(grep { !/$DDL_RE/ } @wrong), 0,
	'the wrong key too: only in the ALTER USER MAPPING statement');
cmp_ok(scalar(@wrong), '>=', 1,
	'(PostgreSQL does log DDL text as is with log_statement = all)');
is(scalar(grep { /\Q$ROTATED_KEY\E/ } @entries), 0,
	'a key set with log_statement and log_min_error_statement off never reaches the log');
is(scalar(grep { /\Q$API_KEY\E/ && /ERROR|DETAIL|HINT|NOTICE|WARNING/ && !/$DDL_RE/ } @entries),
	0, 'no log entry with an error, detail, hint or notice holds the key');

#
# 6. non-superusers
#
$node->safe_psql('postgres', qq{
	CREATE ROLE alice LOGIN;
	CREATE ROLE bob LOGIN;
	CREATE SERVER emu2 FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	SET log_statement = 'none';
	SET log_min_error_statement = 'panic';
	CREATE USER MAPPING FOR bob SERVER emu2 OPTIONS (api_key '$BOB_KEY');
	RESET log_min_error_statement;
	RESET log_statement;
	GRANT USAGE ON FOREIGN SERVER emu2 TO alice, bob;
});

# as: run sql as a role; returns (stdout, stderr, SQLSTATE).
sub as
{
	my ($role, $sql) = @_;
	my ($ret, $o, $e) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $role ], timeout => 30);
	return ($o, $e, sqlstate_of($e));
}

emu_reset();
($out, $err, $st) = as('alice', "SELECT lancelsm_flush('emu', 'events')");
is($st, '42501', 'no USAGE on the server: 42501') or diag($err);
like($err, qr/permission denied for foreign server emu/,
	'no USAGE: the message names the server');
($out, $err, $st) = as('alice',
	"SELECT count(*) FROM lancelsm_stats('emu', 'events')");
is($st, '42501', 'no USAGE, stats: 42501') or diag($err);
is(emu_counts()->{total}, 0, 'no USAGE: nothing was sent');

($out, $err, $st) = as('alice', "SELECT lancelsm_flush('emu2', 'events')");
is($st, '42704', 'USAGE but no user mapping: 42704') or diag($err);
like($err, qr/user mapping not found for user "alice", server "emu2"/,
	'no user mapping: the message names the mapping');

($out, $err, $st) = as('bob', "SELECT lancelsm_flush('emu2', 'events')");
is($st, '28000', "bob's own mapping is used (his key is not the server's)")
  or diag($err);
unlike($err, qr/\Q$BOB_KEY\E/, "bob's error does not show his key");

($out, $err, $st) = as('alice', q{
	SELECT coalesce(umoptions::text, 'NULL') FROM pg_user_mappings
	WHERE usename = 'bob' AND srvname = 'emu2'});
is($out, 'NULL', "another role's api_key is unreadable in pg_user_mappings")
  or diag($err);
($out, $err, $st) = as('alice', 'SELECT umoptions FROM pg_user_mapping');
is($st, '42501', 'pg_user_mapping itself is not readable by alice');
($out, $err, $st) = as('bob', q{
	SELECT umoptions::text FROM pg_user_mappings
	WHERE usename = 'bob' AND srvname = 'emu2'});
like($out, qr/\Q$BOB_KEY\E/, 'bob sees his own mapping (PostgreSQL rules)');

$node->safe_psql('postgres',
	'GRANT USAGE ON FOREIGN DATA WRAPPER lancelsm TO alice');
($out, $err, $st) = as('alice', q{
	CREATE SERVER mine FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:1')});
is($st, '', 'alice may create a server without ssl_* options') or diag($err);
for my $opt ('ssl_ca_file', 'ssl_cert_file', 'ssl_key_file')
{
	($out, $err, $st) = as('alice', qq{
		CREATE SERVER mine_$opt FOREIGN DATA WRAPPER lancelsm
		  OPTIONS (database 'mydb', $opt '/etc/passwd')});
	is($st, '42501', "non-superuser CREATE SERVER with $opt: 42501")
	  or diag($err);
	($out, $err, $st) = as('alice',
		"ALTER SERVER mine OPTIONS (ADD $opt '/etc/passwd')");
	is($st, '42501', "non-superuser ALTER SERVER ADD $opt: 42501")
	  or diag($err);
}
# the event trigger functions that follow servers through renames and
# drops run as their owner, so that a server's owner needs no privilege on
# lancelsm_table; an event trigger function cannot be called but as one
is($node->safe_psql('postgres', q{
	SELECT string_agg(p.proname || ':' || p.prorettype::regtype, ',' ORDER BY p.proname)
	FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
	JOIN pg_extension e ON e.oid = d.refobjid
	WHERE e.extname = 'lancelsm' AND p.prosecdef}),
	'lancelsm_server_dropped:event_trigger,lancelsm_server_renamed:event_trigger',
	'no lancelsm function is SECURITY DEFINER but the two event trigger functions');

#
# 7. changes between calls in one session take effect at once (the
# backend's cached connection pool of the server and mapping is dropped)
#
emu_reset();
($out, $err, $st) = run("SELECT lancelsm_flush('emu', 'events')");
is($st, '', 'between calls: a first call caches a connection') or diag($err);
$other->query_safe(
	"ALTER USER MAPPING FOR PUBLIC SERVER emu OPTIONS (SET api_key '$WRONG_KEY')");
($out, $err, $st) = run("SELECT lancelsm_flush('emu', 'events')");
is($st, '28000', 'mapping altered between calls: the new key is used at once')
  or diag($err);
$other->query_safe('DROP USER MAPPING FOR PUBLIC SERVER emu');
($out, $err, $st) = run("SELECT lancelsm_flush('emu', 'events')");
is($st, '42704', 'mapping dropped between calls: 42704') or diag($err);
like($err, qr/user mapping not found for user "\w+", server "emu"/,
	'mapping dropped between calls: the message names the mapping');
$other->query_safe(qq{
	SET log_statement = 'none';
	SET log_min_error_statement = 'panic';
	CREATE USER MAPPING FOR PUBLIC SERVER emu OPTIONS (api_key '$API_KEY');
	RESET log_min_error_statement;
	RESET log_statement;
});
($out, $err, $st) = run("SELECT lancelsm_flush('emu', 'events')");
is($st, '', 'mapping created again: the call works') or diag($err);
my $moved = start_extra_emulator();
$other->query_safe(
	"ALTER SERVER emu OPTIONS (SET host_override 'http://127.0.0.1:$moved->{port}')");
($out, $err, $st) = run("SELECT lancelsm_flush('emu', 'events')");
is($st, '', 'server altered between calls: the call works') or diag($err);
is(emu_at($moved, 'GET', '/_emulator/counts?table=events')->{flush_lsm}, 1,
	'server altered between calls: the new host_override is used at once');
is(emu_counts()->{flush_lsm}, 3,
	'server altered: the old server got nothing more (first, 401, recreated)');
$other->query_safe(
	"ALTER SERVER emu OPTIONS (SET host_override 'http://127.0.0.1:$port')");
stop_extra_emulator($moved);
$other->query_safe('SET client_min_messages = warning');
$other->query_safe('DROP SERVER emu2 CASCADE');
$other->query_safe('RESET client_min_messages');
($out, $err, $st) = run("SELECT lancelsm_flush('emu2', 'events')");
is($st, '42704', 'server dropped between calls: 42704') or diag($err);

#
# 8. pg_terminate_backend while idle with a cached connection
#
my $checkpointer = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'");
emu_reset();
($out, $err, $st) = run("SELECT count(*) FROM lancelsm_stats('emu', 'events')");
is("$out|$st", '1|', 'terminate: a call caches a connection');
is(scalar(grep { $_ eq '01' } backend_emulator_sockets($pid)), 1,
	'terminate: one established connection cached while idle');
my $log_pos = -s $logfile;
is($other->query_safe("SELECT pg_terminate_backend($pid)"), 't',
	'terminate: signal sent');
my $until = time() + 10;
sleep(0.05) while kill(0, $pid) && time() < $until;
ok(!kill(0, $pid), 'terminate: the idle backend exited');
$banner = send_query($s, 'SELECT 1');
($o2, $e2) = finish_query($s, $banner, qr/FATAL|connection .* lost/);
like($e2, qr/FATAL:\s+57P01: terminating connection due to administrator command/,
	'terminate: the client gets FATAL 57P01');
my $after = substr(slurp_file($logfile), $log_pos);
unlike($after, qr/terminated by signal|terminating any other active server processes|was terminated by exception/,
	'terminate: no crash in the log');
is($other->query_safe('SELECT 1'), '1', 'terminate: another session survived');
is($node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'"),
	$checkpointer, 'terminate: the postmaster restarted nothing');

# the whole log once more, now that the non-superuser and terminate
# cases ran too
@entries = log_entries();
is_deeply([ grep { /\Q$API_KEY\E|\Q$BOB_KEY\E|\Q$ROTATED_KEY\E|\Q$WRONG_KEY\E/ && !/$DDL_RE/ } @entries ],
	[], 'end: no key anywhere in the log but in user mapping DDL text');
is(scalar(grep { /\Q$BOB_KEY\E|\Q$ROTATED_KEY\E/ } @entries), 0,
	'end: keys set with statement logging off are nowhere in the log');

$other->quit;
eval { $s->quit };
$node->stop;
done_testing();
