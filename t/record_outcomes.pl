# record_outcomes.pl: the outcome of every call on a declared table stays
# recorded when the caller's statement, transaction or savepoint rolls
# back, and across a restart.
#
# One node with lancelsm preloaded; two declared tables (events, clicks)
# and a non-superuser job role with the grants docs/operations.md gives a
# pg_cron job.  Each case calls as that role, rolls back one way or
# another, waits until the outcome writer has written what the rollback
# handed over (lancelsm_info.pending_outcomes 0 and no writer running),
# and compares lancelsm_status's rows exactly:
#
#   BEGIN ... ROLLBACK around a successful flush; a flush that fails (403:
#   today's write never happened); a savepoint rolled back after a failed
#   flush while the outer transaction holds the row; a PL/pgSQL EXCEPTION
#   block around a checkpoint; a 57014 from statement_timeout, whose error
#   names the table still waiting; an array checkpoint rolled back; a
#   role that may not record, whose failure stages nothing; a writer that
#   waits for a row another session holds when the server stops, and
#   writes before it exits; then a restart.  A node without shared_preload_libraries says in lancelsm_info
#   that outcomes roll back, and they do.
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
emu_reset();
emu('POST', '/_emulator/tables', { name => 'clicks', buckets => 1 });

my $node = setup_node_conf('outcomes', $port);
$node->safe_psql('postgres', q{
	CREATE ROLE job LOGIN;
	CREATE ROLE reader LOGIN;
	GRANT USAGE ON FOREIGN SERVER emu TO job, reader;
	GRANT UPDATE (last_checkpoint_at) ON lancelsm_table TO job;
	SELECT lancelsm_add_table('emu', 'events');
	SELECT lancelsm_add_table('emu', 'clicks');
});

is($node->safe_psql('postgres', q{
	SELECT outcomes_survive_rollback, pending_outcomes, max_pending_outcomes,
	       outcomes_dropped FROM lancelsm_info}),
	't|0|1000|0', 'preloaded: outcomes survive a rollback, the queue is empty');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_activity
	 WHERE backend_type = 'lancelsm outcome launcher'}),
	'1', 'one outcome launcher runs');

# as_job: run $sql as the job role (or $role) in a psql of its own;
# returns (stdout, stderr)
sub as_job
{
	my ($sql, $role) = @_;

	return psql_verbose($node, $sql, $role // 'job');
}

# status: the outcome columns of table $t in lancelsm_status
sub status
{
	my ($t) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT last_action, last_source, last_ok, last_sqlstate, last_message,
		       last_started_at IS NOT NULL, last_finished_at IS NOT NULL
		  FROM lancelsm_status WHERE table_name = '$t'});
}

is(status('events'), '|||||f|f', 'events: no outcome yet');

# 1. BEGIN ... ROLLBACK around a successful flush: the caller reads its own
# outcome in its transaction, and it stays after the rollback
my ($out, $err) = as_job(q{
	BEGIN;
	SELECT lancelsm_flush('emu', 'events');
	SELECT last_action || ' ' || last_ok FROM lancelsm_status WHERE table_name = 'events';
	ROLLBACK;});
like($out, qr/^flush true$/m, 'rollback: the caller read its own outcome');
ok(outcomes_written($node), 'rollback: the outcome was written');
is(status('events'), 'flush|direct|t|||t|t',
	'rollback: the flush is recorded');

# 2. a direct flush that fails records its failure (it raises: the
# transaction aborts)
emu('POST', '/_emulator/faults',
	{ table => 'events', route => 'flush_lsm', status => 403 });
($out, $err) = as_job(q{SELECT lancelsm_flush('emu', 'events')});
like($err, qr/ERROR:  42501:/, 'failed flush: 42501');
ok(outcomes_written($node), 'failed flush: the outcome was written');
my $failed = $node->safe_psql('postgres', q{
	SELECT last_action, last_ok, last_sqlstate, last_message IS NOT NULL
	  FROM lancelsm_status WHERE table_name = 'events'});
is($failed, 'flush|f|42501|t', 'failed flush: recorded as failed, 42501');

# 3. a savepoint rolled back after a failed compact, in a transaction
# that wrote clicks' row before (the writer waits for it) and commits
emu('POST', '/_emulator/faults',
	{ table => 'clicks', route => 'compact_lsm', status => 403 });
($out, $err) = as_job(q{
	BEGIN;
	SELECT lancelsm_flush('emu', 'clicks');
	SAVEPOINT s;
	SELECT lancelsm_compact('emu', 'clicks');
	ROLLBACK TO SAVEPOINT s;
	SELECT 'after savepoint: ' || last_action FROM lancelsm_status WHERE table_name = 'clicks';
	COMMIT;});
like($out, qr/^after savepoint: flush$/m,
	'savepoint: the transaction still reads its flush');
ok(outcomes_written($node), 'savepoint: the outcome was written');
is($node->safe_psql('postgres', q{
	SELECT last_action, last_ok, last_sqlstate FROM lancelsm_status
	 WHERE table_name = 'clicks'}),
	'compact|f|42501',
	'savepoint: the failed compact, the later outcome, is recorded');
emu('POST', '/_emulator/faults/clear');

# 4. a PL/pgSQL EXCEPTION block around a checkpoint that succeeded
($out, $err) = as_job(q{
	DO $$
	BEGIN
	  PERFORM lancelsm_checkpoint('emu', 'clicks');
	  RAISE EXCEPTION 'give up';
	EXCEPTION WHEN raise_exception THEN
	  NULL;
	END
	$$;});
is($err, '', 'exception block: no error reaches the client');
ok(outcomes_written($node), 'exception block: the outcome was written');
is($node->safe_psql('postgres', q{
	SELECT last_action, last_ok, last_checkpoint_at = last_started_at
	  FROM lancelsm_status WHERE table_name = 'clicks'}),
	'checkpoint|t|t', 'exception block: the checkpoint and last_checkpoint_at');

# 5. a 57014 from statement_timeout: the error names the table still
# waiting, and the outcome is recorded
emu('POST', '/_emulator/faults',
	{ table => 'events', route => 'flush_lsm', action => 'hang' });
($out, $err) = as_job(q{
	SET statement_timeout = '300ms';
	SELECT lancelsm_flush('emu', 'events');});
like($err, qr/ERROR:  57014: canceling statement due to statement timeout/,
	'timeout: 57014');
like($err, qr/CONTEXT:  while waiting for LanceDB tables "events" of server "emu"/,
	'timeout: the error names the table still waiting');
ok(outcomes_written($node), 'timeout: the outcome was written');
is($node->safe_psql('postgres', q{
	SELECT last_action, last_ok, last_sqlstate, last_message
	  FROM lancelsm_status WHERE table_name = 'events'}),
	'flush|f|57014|canceling statement due to statement timeout',
	'timeout: recorded as 57014');
emu('POST', '/_emulator/faults/clear');

# 6. an array checkpoint rolled back: both tables' outcomes stay
($out, $err) = as_job(q{
	BEGIN;
	SELECT table_name, ok FROM lancelsm_checkpoint('emu', ARRAY['events', 'clicks']);
	ROLLBACK;});
ok(outcomes_written($node), 'array: the outcomes were written');
is($node->safe_psql('postgres', q{
	SELECT table_name, last_action, last_ok FROM lancelsm_status
	 ORDER BY table_name COLLATE "C"}),
	"clicks|checkpoint|t\nevents|checkpoint|t",
	'array: both checkpoints are recorded');

# 7. a role that may not record (USAGE on the server only) stages nothing
emu('POST', '/_emulator/faults',
	{ table => 'events', route => 'flush_lsm', status => 403 });
($out, $err) = as_job(q{SELECT lancelsm_flush('emu', 'events')}, 'reader');
like($err, qr/ERROR:  42501:/, 'reader: its flush fails');
ok(outcomes_written($node), 'reader: nothing waits');
is($node->safe_psql('postgres', q{
	SELECT last_action, last_ok FROM lancelsm_status WHERE table_name = 'events'}),
	'checkpoint|t', 'reader: the outcome is unchanged');
emu('POST', '/_emulator/faults/clear');

# 8. a writer drains on shutdown: it took the outcome of a rolled back
# flush and waits for the row another session holds; the restart ends that
# session, and the writer writes before it exits
my $holder = $node->background_psql('postgres', on_error_stop => 0);
$holder->query_safe(q{BEGIN;
	UPDATE lancelsm_table SET max_wal_lag = 7 WHERE table_name = 'events'});
# (the caller's own write gives up on the row: lock_timeout)
as_job(q{SET lock_timeout = '100ms';
	BEGIN; SELECT lancelsm_flush('emu', 'events'); ROLLBACK;});
my $waiting = '';
my $until = time() + 30;
while (time() < $until)
{
	$waiting = $node->safe_psql('postgres', q{
		SELECT wait_event_type FROM pg_stat_activity
		 WHERE backend_type = 'lancelsm outcome writer'});
	last if $waiting eq 'Lock';
	sleep(0.05);
}
is($waiting, 'Lock', 'shutdown: the writer waits for the held row');
$node->restart;
eval { $holder->quit; };
is($node->safe_psql('postgres', q{
	SELECT last_action, last_ok, max_wal_lag IS NULL FROM lancelsm_status
	 WHERE table_name = 'events'}),
	'flush|t|t', 'shutdown: the writer wrote the flush before it exited');

# 9. a restart keeps every outcome
my $before = $node->safe_psql('postgres',
	'SELECT * FROM lancelsm_status ORDER BY table_name COLLATE "C"');
$node->restart;
is($node->safe_psql('postgres',
	'SELECT * FROM lancelsm_status ORDER BY table_name COLLATE "C"'),
	$before, 'restart: lancelsm_status is unchanged');
is($node->safe_psql('postgres', q{
	SELECT pending_outcomes, outcomes_dropped FROM lancelsm_info}),
	'0|0', 'restart: nothing waits, nothing was dropped');
$node->stop;

# 10. without shared_preload_libraries, outcomes roll back with the caller
my $plain = setup_node('outcomes_plain', $port);
$plain->safe_psql('postgres', q{SELECT lancelsm_add_table('emu', 'events')});
is($plain->safe_psql('postgres', q{
	SELECT outcomes_survive_rollback, pending_outcomes IS NULL FROM lancelsm_info}),
	'f|t', 'not preloaded: lancelsm_info says outcomes roll back');
$plain->safe_psql('postgres', q{
	BEGIN; SELECT lancelsm_flush('emu', 'events'); ROLLBACK;});
is($plain->safe_psql('postgres', q{
	SELECT last_action IS NULL FROM lancelsm_status WHERE table_name = 'events'}),
	't', 'not preloaded: the rolled back flush is not recorded');
$plain->stop;

done_testing();
