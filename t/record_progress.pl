# record_progress.pl: lancelsm_progress and lancelsm_checkpoint_history with
# lancelsm in shared_preload_libraries.
#
# While a checkpoint waits on a pinned compaction latch, another session
# sees exactly its row (pid, server, table, phase, target), and, waiting on
# a Sealed bucket, that bucket and its status; afterwards the
# row is gone and the history holds the outcome: ok with its passes, a
# rolled-back transaction's checkpoint, a cancel (57014).  A table the
# server does not know (404, HV00R) is not recorded: 100 made-up names
# checkpointed by a role with USAGE leave the history exactly as it was;
# a table already recorded shows its later 404.
# A terminated backend leaves no progress row; a multi-table checkpoint
# shows one row per table; a full pool skips entries and counts them.  The
# history survives a clean restart with the same rows (and an immediate
# stop, where the postmaster still exits normally) and is lost in a crash.
# Long names are cut at a character boundary.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $port = start_emulator();
my $node = setup_node('progress', $port);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lancelsm'
lancelsm.poll_interval_min = '20ms'
lancelsm.poll_interval_max = '100ms'
lancelsm.backoff_base = '1ms'
restart_after_crash = on
});
$node->restart;

my ($s, $pid) = open_session($node);
my ($other) = open_session($node);

my $HISTORY_COLS = q{server, table_name, ok, sqlstate, message, passes};

# wait_for_sql: query_until in the other session.
sub wait_for_sql { return query_until($other, @_); }

# pin: hold or release the compaction latch of bucket b0 of a table.
sub pin
{
	my ($table, $held) = @_;
	emu('POST', "/_emulator/tables/$table/latch",
		{ bucket => 'b0', held => $held ? JSON::PP::true : JSON::PP::false });
}

# history: the history rows of one table, or of all, in name order.
sub history
{
	my ($where) = @_;
	$where = $where ? "WHERE $where" : '';
	return $node->safe_psql('postgres',
		"SELECT $HISTORY_COLS FROM lancelsm_checkpoint_history $where "
		  . 'ORDER BY server COLLATE "C", table_name COLLATE "C"');
}

# 1. a checkpoint waiting on a pinned latch shows one progress row
emu_reset();
emu('POST', '/_emulator/tables/events/generations', { count => 2 });
pin('events', 1);
my $token = send_query($s, "SELECT lancelsm_checkpoint('emu', 'events')");
is(wait_for_sql(
		"SELECT count(*) FROM lancelsm_progress WHERE phase IN ('waiting', 'draining')",
		'1'),
	'1', 'running: the checkpoint shows as waiting or draining');
is($other->query_safe(
		"SELECT pid, server, table_name, phase IN ('waiting', 'draining'), "
		  . 'target_generations, outstanding_generations, passes, '
		  . 'polls >= 1, retries, reissues, started_at <= now() '
		  . 'FROM lancelsm_progress'),
	"$pid|emu|events|t|2|2|0|t|0|0|t",
	'running: exactly one row with pid, server, table, phase and target');
pin('events', 0);
my ($out, $err) = finish_query($s, $token);
is($err, '', 'running: the checkpoint succeeded once the latch was free');
is($other->query_safe('SELECT count(*) FROM lancelsm_progress'),
	'0', 'finished: no progress row left');
is(history("table_name = 'events'"), 'emu|events|t|||2',
	'finished: the history shows ok with two passes');
is($node->safe_psql('postgres',
		'SELECT elapsed > interval \'0\' AND finished_at <= now() '
		  . 'FROM lancelsm_checkpoint_history'),
	't', 'finished: elapsed and finished_at are set');

# 1b. a checkpoint waiting on a bucket that is not Active (Sealed: a drop
#     in flight) names the bucket and its status in its progress row
emu('POST', '/_emulator/tables/events/generations',
	{ count => 2, buckets => ['b0'] });
emu('POST', '/_emulator/tables/events/bucket',
	{ bucket => 'b0', status => 'Sealed' });
pin('events', 1);
$token = send_query($s, "SELECT lancelsm_checkpoint('emu', 'events')");
is(wait_for_sql(
		'SELECT count(*) FROM lancelsm_progress WHERE waiting_bucket IS NOT NULL',
		'1'),
	'1', 'Sealed: the running checkpoint names the bucket it waits on');
is($other->query_safe(
		'SELECT pid, waiting_bucket, waiting_bucket_status, target_generations '
		  . 'FROM lancelsm_progress'),
	"$pid|b0|Sealed|2",
	'Sealed: exactly one row, with the bucket, its status and the target');
pin('events', 0);
($out, $err) = finish_query($s, $token);
is($err, '', 'Sealed: the checkpoint succeeded once the latch was free');
is($other->query_safe('SELECT count(*) FROM lancelsm_progress'),
	'0', 'Sealed: no progress row left');
emu('POST', '/_emulator/tables/events/bucket',
	{ bucket => 'b0', status => 'Active' });

# 2. a checkpoint in a transaction that rolls back stays in the history
$node->safe_psql('postgres', 'SELECT lancelsm_checkpoint_history_reset()');
emu('POST', '/_emulator/tables/events/generations', { count => 1 });
$s->query_safe('BEGIN');
$s->query_safe("SELECT lancelsm_checkpoint('emu', 'events')");
$s->query_safe('ROLLBACK');
is(history(), 'emu|events|t|||1', 'rollback: the outcome is kept');

# 3. a table the server does not know: HV00R, and no history entry
($out, $err) = (timed_query($s, "SELECT lancelsm_checkpoint('emu', 'nosuch')"))[1, 2];
like($err, qr/HV00R/, 'not found: the call fails with HV00R');
is(history("table_name = 'nosuch'"), '',
	'not found: the history has no entry for a table the server does not know');

# 3b. flooding: a role with USAGE only checkpoints 100 made-up names (one
# call of 90, ten calls of one); the history is exactly what it was, and
# the call of 90 lists 32 of them in progress (the per-call bound)
$node->safe_psql('postgres', q{
	CREATE ROLE flooder LOGIN;
	GRANT USAGE ON FOREIGN SERVER emu TO flooder;
});
my $flood_before = history();
my $flood_names = join(', ', map { "'made_up_$_'" } 1 .. 90);
is($node->safe_psql('postgres',
		'SET ROLE flooder; SELECT count(*) FILTER (WHERE NOT ok) '
		  . "FROM lancelsm_checkpoint('emu', ARRAY[$flood_names])"),
	'90', 'flood: 90 made-up names in one call all fail');
is($node->safe_psql('postgres', 'SELECT progress_skipped FROM lancelsm_info'),
	'58', 'flood: the call listed 32 of its tables, the other 58 ran unlisted');
my $flood_errors = 0;
for my $i (91 .. 100)
{
	my ($rc) = $node->psql('postgres',
		"SET ROLE flooder; SELECT lancelsm_checkpoint('emu', 'made_up_$i')");
	$flood_errors++ if $rc != 0;
}
is($flood_errors, 10, 'flood: 10 single made-up names all fail');
is(history(), $flood_before, 'flood: the history is unchanged');
is($node->safe_psql('postgres',
		'SELECT count(*) FROM lancelsm_checkpoint_history'),
	'1', 'flood: still exactly one table in the history');

# 3c. a table already in the history gets every later outcome, answered
# or not: a 404 of its flush replaces its success
emu('POST', '/_emulator/faults', { table => 'events', route => 'flush_lsm',
	count => 1, status => 404, json => { code => 3, error => 'gone' } });
($out, $err) = (timed_query($s, "SELECT lancelsm_checkpoint('emu', 'events')"))[1, 2];
like($err, qr/HV00R/, 'known table: the checkpoint fails with HV00R');
like(history("table_name = 'events'"),
	qr/^emu\|events\|f\|HV00R\|could not checkpoint LanceDB table "events": .*\|0$/,
	'known table: the history shows HV00R and the message with its detail');

# 4. a canceled checkpoint: 57014 and the interruption message
pin('events', 1);
emu('POST', '/_emulator/tables/events/generations', { count => 1 });
$token = send_query($s, "SELECT lancelsm_checkpoint('emu', 'events')");
wait_for_sql("SELECT count(*) FROM lancelsm_progress WHERE pid = $pid", '1');
$other->query_safe("SELECT pg_cancel_backend($pid)");
($out, $err) = finish_query($s, $token);
like($err, qr/57014/, 'cancel: the statement ends with 57014');
is(history("table_name = 'events'"),
	'emu|events|f|57014|the statement was interrupted (canceled, timed out or failed) before the checkpoint finished|0',
	'cancel: the history shows 57014 and the interruption');
is($other->query_safe('SELECT count(*) FROM lancelsm_progress'),
	'0', 'cancel: no progress row left');

# 5. pg_terminate_backend mid-checkpoint leaves no progress row
my ($victim, $vpid) = open_session($node);
$token = send_query($victim, "SELECT lancelsm_checkpoint('emu', 'events')");
is(wait_for_sql("SELECT count(*) FROM lancelsm_progress WHERE pid = $vpid", '1'),
	'1', 'terminate: the checkpoint shows before the terminate');
$other->query_safe("SELECT pg_terminate_backend($vpid)");
finish_query($victim, $token, qr/57P01/);
eval { $victim->{run}->finish; };
is(wait_for_sql(
		"SELECT count(*) FROM pg_stat_activity WHERE pid = $vpid", '0'),
	'0', 'terminate: the backend is gone');
is($other->query_safe('SELECT count(*) FROM lancelsm_progress'),
	'0', 'terminate: no progress row left');
pin('events', 0);

# 6. a multi-table checkpoint shows one row per table, all of one backend
for my $t ('t2', 't3')
{
	emu('POST', '/_emulator/tables', { name => $t, buckets => 1 });
	emu('POST', "/_emulator/tables/$t/generations", { count => 1 });
}
emu('POST', '/_emulator/tables/events/generations', { count => 1 });
pin($_, 1) for ('events', 't2', 't3');
$token = send_query($s,
	"SELECT table_name, ok FROM lancelsm_checkpoint('emu', ARRAY['events', 't2', 't3'])");
is(wait_for_sql("SELECT count(*) FROM lancelsm_progress WHERE target_generations IS NOT NULL", '3'),
	'3', 'many tables: three rows once every watermark is set');
is($other->query_safe(
		'SELECT pid, server, table_name FROM lancelsm_progress '
		  . 'ORDER BY table_name COLLATE "C"'),
	"$pid|emu|events\n$pid|emu|t2\n$pid|emu|t3",
	'many tables: one row per table, all with the caller\'s pid');
pin($_, 0) for ('events', 't2', 't3');
($out, $err) = finish_query($s, $token);
is($out . $err, "events|t\nt2|t\nt3|t", 'many tables: every checkpoint succeeded');
is($other->query_safe('SELECT count(*) FROM lancelsm_progress'),
	'0', 'many tables: no progress row left');
is($other->query_safe('SELECT progress_skipped FROM lancelsm_info'),
	'58', 'many tables: no entry was skipped (the count is still the flood\'s)');

# 7. flush, compact and stats neither show progress nor write history
my $before = history();
$s->query_safe("SELECT lancelsm_flush('emu', 'events')");
is(history(), $before, 'other operations: the history is unchanged');

# 8. the history survives a clean restart, with the same rows
my $full = q{SELECT server, table_name, finished_at, ok, sqlstate, message,
  elapsed, passes FROM lancelsm_checkpoint_history
  ORDER BY server COLLATE "C", table_name COLLATE "C"};
$before = $node->safe_psql('postgres', $full);
is(scalar(split /\n/, $before), 3, 'restart: three tables have a history');
$s->quit;
$other->quit;
$node->restart;
is($node->safe_psql('postgres', $full), $before,
	'restart: the same rows after a clean restart');
ok(!-e $node->data_dir . '/pg_stat/lancelsm_history.stat',
	'restart: the history file is removed once loaded');

# 9. a full pool: checkpoints beyond it run without a row and are counted
$node->append_conf('postgresql.conf', 'lancelsm.max_progress_entries = 2');
$node->restart;
($s, $pid) = open_session($node);
($other) = open_session($node);
emu('POST', "/_emulator/tables/$_/generations", { count => 1 })
  for ('events', 't2', 't3');
pin($_, 1) for ('events', 't2', 't3');
$token = send_query($s,
	"SELECT table_name, ok FROM lancelsm_checkpoint('emu', ARRAY['events', 't2', 't3'])");
is(wait_for_sql('SELECT progress_skipped FROM lancelsm_info', '1'),
	'1', 'full pool: one checkpoint was skipped');
is($other->query_safe('SELECT count(*) FROM lancelsm_progress'),
	'2', 'full pool: two rows, the pool size');
pin($_, 0) for ('events', 't2', 't3');
($out, $err) = finish_query($s, $token);
is($out . $err, "events|t\nt2|t\nt3|t", 'full pool: every checkpoint succeeded');
is(history('ok'), "emu|events|t|||1\nemu|t2|t|||1\nemu|t3|t|||1",
	'full pool: every outcome is in the history, skipped or not');

# 10. an immediate stop still lets the postmaster write the file; a crash
# (here a backend killed, so that the postmaster reinitializes shared
# memory) loses the history
$s->quit;
$other->quit;
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres',
		'SELECT count(*) FROM lancelsm_checkpoint_history'),
	'3', 'immediate stop: the history is kept');
my ($doomed, $dpid) = open_session($node);
my $log_offset = -s $node->logfile;
kill 'KILL', $dpid;
eval { $doomed->quit; };
# wait until the postmaster has noticed the crash, then until it is back
$node->wait_for_log(qr/all server processes terminated; reinitializing/,
	$log_offset);
my $back = 0;
for (1 .. 300)
{
	# psql fails while the server restarts: retry, bounded
	$back = eval { $node->safe_psql('postgres', 'SELECT 1', timeout => 5) };
	last if $back;
	sleep(0.1);
}
is($back, '1', 'crash: the server restarted');
is($node->safe_psql('postgres',
		'SELECT count(*) FROM lancelsm_checkpoint_history'),
	'0', 'crash: the history is empty after a crash restart');

# 11. long names are cut at a character boundary: 150 two-byte
# characters (300 bytes) keep 127 of them (254 bytes, not 255); the
# emulator knows the table, so its checkpoint is recorded
$node->safe_psql('postgres', qq{
	CREATE DATABASE u8 ENCODING 'UTF8' LOCALE 'C' TEMPLATE template0;
});
$node->safe_psql('u8', qq{
	CREATE EXTENSION lancelsm;
	CREATE SERVER emu FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER emu OPTIONS (api_key '$API_KEY');
});
emu('POST', '/_emulator/tables', { name => "\x{e9}" x 150, buckets => 1 });
my ($ret, $stdout, $stderr) = $node->psql('u8',
	"SELECT lancelsm_checkpoint('emu', repeat(U&'\\00E9', 150))");
is($ret, 0, 'long name: the checkpoint of the table succeeds');
is($node->safe_psql('u8',
		'SELECT octet_length(table_name), length(table_name), '
		  . "table_name = repeat(U&'\\00E9', 127), ok "
		  . 'FROM lancelsm_checkpoint_history'),
	'254|127|t|t', 'long name: cut to 254 bytes, 127 characters');

$node->stop;
done_testing();
