# engine_due_plan.pl: lancelsm_checkpoint_due() reads a declared table's
# stats only when its planned next read is due (1.5), with lancelsm
# preloaded and intervals of seconds.  The test runs the due job about
# every 0.2 s, each run in one transaction that first keeps every table's
# next_read_at, until the events it waits for happened (at most 30 s):
#
#   quiet   1 L0 generation, max_l0_generations 5, max_read_interval 3 s:
#           read at run 1 (never read) and run 2 (its first read found an
#           L0 generation, so it may be written now), then, unchanged, at
#           its first bound, spread by its names over 1.5 to 3 s, then
#           exactly at its bound: the first run at or after the last
#           read's run + 3 s, never before
#   aged    max_checkpoint_age 4 s (max_read_interval 1 hour): read at run
#           1 only, then acted on (checkpoint) at the first run after its
#           age expires, with no read before
#   waking  max_memtable_rows 50, max_read_interval 3 s: quiet until its
#           plan says bound, then written (100 rows/s): read and acted on
#           (flush) at its bound
#
# For every run and table: the table was read exactly when its kept
# next_read_at was NULL or past the run's start, and the emulator's request
# log has exactly the stats reads the rows say (plus aged's checkpoint
# watermark read).  Then: lancelsm_run_history has one "reads" row per run
# with reads_sent and reads_skipped; SET lancelsm.due_plan = off reads every
# table; the plan survives a restart (a table planned an hour ahead is not
# read after it); a slice plans its own tables only; a 1.4 catalog not
# updated yet is served as 1.4 did.
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
emu_table('quiet', 1);
emu_table('aged', 0);
emu_table('waking', 0);
emu_table("extra_$_", 0) for 1 .. 6;

my $node = setup_node_conf('due_plan', $port);
$node->safe_psql('postgres', q{
	SELECT lancelsm_add_table('emu', 'quiet', max_l0_generations => 5,
	  validate => false, max_read_interval => '3 s');
	SELECT lancelsm_add_table('emu', 'aged', max_checkpoint_age => '4 s',
	  validate => false, max_read_interval => '1 hour');
	SELECT lancelsm_add_table('emu', 'waking', max_memtable_rows => 50,
	  validate => false, max_read_interval => '3 s');
	CREATE TABLE plans (run int, at timestamptz, table_name text,
	  next_read_at timestamptz);
	CREATE TABLE due_runs (run int, at timestamptz, table_name text,
	  due boolean, reason text, action text, ok boolean);
});
emu('POST', '/_emulator/log/reset');

my $runs = 0;

# run_due: one run of the due job, after keeping each table's plan as the
# run finds it
sub run_due
{
	$runs++;
	$node->safe_psql('postgres', qq{
		BEGIN;
		INSERT INTO plans SELECT $runs, now(), table_name, next_read_at
		  FROM lancelsm_table;
		INSERT INTO due_runs SELECT $runs, now(), table_name, due, reason,
		  action, ok FROM lancelsm_checkpoint_due();
		COMMIT;
	});
}

# the stats reads of a table in the emulator's request log
sub stats_reads
{
	my ($t) = @_;
	return emu('GET', "/_emulator/counts?table=$t")->{get_lsm_stats};
}

# how many runs read a table (its row is not "not read: ...")
sub runs_read
{
	my ($t, $where) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM due_runs WHERE table_name = '$t'
		   AND NOT coalesce(reason LIKE 'not read: %', false) ${\ ($where // '')}});
}

run_due();
run_due();
is( $node->safe_psql('postgres', q{
	SELECT table_name, next_read_reason FROM lancelsm_table
	 WHERE table_name IN ('quiet', 'aged', 'waking') ORDER BY table_name COLLATE "C"}),
	"aged|age\nquiet|bound\nwaking|bound",
	'after two runs: aged planned at its age, quiet and waking at their bound');

# waking starts being written now, after its last read before the bound
emu('POST', '/_emulator/tables/waking/writer', { rows_per_second => 100 });

my $until = time() + 30;
while (time() < $until)
{
	run_due();
	last
	  if runs_read('quiet') >= 4
	  && $node->safe_psql('postgres', q{
		SELECT count(DISTINCT table_name) FROM due_runs
		 WHERE (table_name, action) IN (('aged', 'checkpoint'), ('waking', 'flush'))}) == 2;
	sleep(0.2);
}
note($node->safe_psql('postgres',
	q{SELECT run, at, table_name, reason, action FROM due_runs ORDER BY run, table_name COLLATE "C"}));

# every run read exactly the tables whose next read was due
is( $node->safe_psql('postgres', q{
	SELECT count(*) FROM due_runs d JOIN plans p USING (run, table_name)
	 WHERE NOT coalesce(d.reason LIKE 'not read: %', false)
	       IS DISTINCT FROM (p.next_read_at IS NULL OR p.next_read_at <= d.at)}),
	'0', 'each run read a table exactly when its next read was due');

# quiet: runs 1 and 2, then once per bound, at the first run at or after it
is(runs_read('quiet', 'AND run <= 3'), '2',
	'quiet: read at runs 1 and 2 (an L0 generation at its first read), not at run 3');
is( $node->safe_psql('postgres', q{
	SELECT string_agg(CASE WHEN p.next_read_at = prev.at + interval '3 s' THEN 'bound'
	                       WHEN p.next_read_at >= prev.at + interval '1.5 s'
	                        AND p.next_read_at < prev.at + interval '3 s' THEN 'spread'
	                       ELSE (p.next_read_at - prev.at)::text END, ' ' ORDER BY d.run)
	       || ' ' || bool_and(d.at >= p.next_read_at)
	  FROM due_runs d JOIN plans p USING (run, table_name),
	       LATERAL (SELECT max(at) AS at FROM due_runs e
	                 WHERE e.table_name = d.table_name AND e.run < d.run
	                   AND NOT coalesce(e.reason LIKE 'not read: %', false)) prev
	 WHERE d.table_name = 'quiet' AND d.run > 2
	   AND NOT coalesce(d.reason LIKE 'not read: %', false)}),
	join(' ', 'spread', ('bound') x (runs_read('quiet') - 3), 'true'),
	'quiet: read at its first bound spread, then at its bound from the run before, never before its planned read');
cmp_ok(runs_read('quiet'), '>=', 4, 'quiet: read again at its bound at least twice');
my $quiet_reads = runs_read('quiet');
is(stats_reads('quiet'), $quiet_reads,
	"quiet: the emulator saw exactly the $quiet_reads reads the runs made");

# aged: run 1, then the run that acts on it, nothing between
is( $node->safe_psql('postgres', q{
	SELECT string_agg(coalesce(action, '?'), ',' ORDER BY run) FROM due_runs
	 WHERE table_name = 'aged' AND NOT coalesce(reason LIKE 'not read: %', false)
	   AND run <= (SELECT min(run) FROM due_runs
	                WHERE table_name = 'aged' AND action = 'checkpoint')}),
	'none,checkpoint', 'aged: read at run 1, then acted on with no read before');
is( $node->safe_psql('postgres', q{
	SELECT d.at >= t.added_at + interval '4 s'
	       AND NOT EXISTS (SELECT FROM due_runs e WHERE e.table_name = 'aged'
	                          AND e.run < d.run AND e.at >= t.added_at + interval '4 s')
	  FROM due_runs d, lancelsm_table t
	 WHERE d.table_name = 'aged' AND d.action = 'checkpoint' AND t.table_name = 'aged'
	 ORDER BY d.run LIMIT 1}),
	't', 'aged: acted on at the first run after its age expired');

is( stats_reads('aged'),
	runs_read('aged') + $node->safe_psql('postgres',
		q{SELECT count(*) FROM due_runs WHERE table_name = 'aged' AND action = 'checkpoint'}),
	"aged: the emulator saw the runs' reads and each checkpoint's watermark read");

# waking: its first read after the writes started is the one at its bound,
# and it is acted on there
is( $node->safe_psql('postgres', q{
	SELECT d.action || ' ' || (d.at >= p.next_read_at)::text
	  FROM due_runs d JOIN plans p USING (run, table_name)
	 WHERE d.table_name = 'waking' AND d.run > 2
	   AND NOT coalesce(d.reason LIKE 'not read: %', false)
	 ORDER BY d.run LIMIT 1}),
	'flush true', 'waking: read at its bound after the writes started, and flushed');
emu('POST', '/_emulator/tables/waking/writer', { rows_per_second => 0 });

# the run history: one "reads" row per run, counting the reads sent and
# the tables not read
is( $node->safe_psql('postgres', q{
	SELECT count(*) = (SELECT max(run) FROM due_runs)
	   AND sum(reads_sent) = (SELECT count(*) FROM due_runs
	                           WHERE NOT coalesce(reason LIKE 'not read: %', false))
	   AND sum(reads_skipped) = (SELECT count(*) FROM due_runs
	                              WHERE reason LIKE 'not read: %')
	   AND sum(reads_skipped) > 0
	   AND bool_and(server IS NULL AND table_name IS NULL AND requests = reads_sent
	                AND source = 'checkpoint_due' AND ok)
	  FROM lancelsm_run_history WHERE action = 'reads'}),
	't', 'run history: one reads row per run with the reads sent and skipped');
is( $node->safe_psql('postgres', q{
	SELECT count(*) FROM lancelsm_run_history
	 WHERE action <> 'reads' AND (reads_sent IS NOT NULL OR reads_skipped IS NOT NULL)}),
	'0', 'run history: the action rows have no read counts');

# lancelsm.due_plan = off reads every table
emu('POST', '/_emulator/log/reset');
is( $node->safe_psql('postgres', q{
	SET lancelsm.due_plan = off;
	SELECT count(*) FILTER (WHERE reason LIKE 'not read: %') || ' ' || count(*)
	  FROM lancelsm_checkpoint_due()}),
	'0 3', 'due_plan off: no table left unread');
is( join(' ', map { stats_reads($_) } qw(quiet waking)), '1 1',
	'due_plan off: one stats read of each quiet table');

# the plan survives a restart: quiet planned an hour ahead (its bound,
# after alter_table made it read at the next run) is not read after it
$node->safe_psql('postgres', q{
	SELECT lancelsm_alter_table('emu', 'quiet', max_read_interval => '1 hour');
	SELECT count(*) FROM lancelsm_checkpoint_due();});
my $plan = q{SELECT next_read_reason, next_read_at, plan_read_values
	FROM lancelsm_table WHERE table_name = 'quiet'};
my $before = $node->safe_psql('postgres', $plan);
like($before, qr/^bound\|/, 'quiet is planned at its bound, an hour ahead');
$node->restart;
is($node->safe_psql('postgres', $plan), $before, 'the plan survives a restart');
emu('POST', '/_emulator/log/reset');
is( $node->safe_psql('postgres', q{
	SELECT reason FROM lancelsm_checkpoint_due() WHERE table_name = 'quiet'}),
	'not read: bound', 'after the restart quiet is not read before its bound');
is(stats_reads('quiet'), 0, 'no stats read of quiet after the restart');

# a slice plans its own tables only: every table's plan forgotten, slice
# 0 of 2 reads and plans its tables; the others keep "altered"
$node->safe_psql('postgres', q{
	SELECT count(lancelsm_add_table('emu', 'extra_' || i, max_l0_generations => 5,
	  validate => false)) FROM generate_series(1, 6) i;
	SELECT count(lancelsm_alter_table(server, table_name)) FROM lancelsm_table;
	CREATE TABLE slice0 AS SELECT table_name FROM lancelsm_checkpoint_due(0, 2);});
is( $node->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE s.table_name IS NOT NULL) > 0,
	       count(*) FILTER (WHERE s.table_name IS NULL) > 0,
	       bool_and((s.table_name IS NULL) = (t.next_read_reason = 'altered'))
	  FROM lancelsm_table t LEFT JOIN slice0 s USING (table_name)}),
	't|t|t', 'slice 0 of 2 planned its tables only');

# a 1.4 catalog, not updated yet, is served as 1.4 did: add_table and
# alter_table with their 1.4 arguments, checkpoint_due(slice, slices)
# reading every table at every run, and a run history without the reads
# rows (its 1.4 shape has no columns for them)
emu_table("old_$_", 1) for qw(a b);
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', qq{
	CREATE EXTENSION lancelsm VERSION '1.4';
	CREATE SERVER emu FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER emu OPTIONS (api_key '$API_KEY');
	SELECT lancelsm_add_table('emu', 'old_a', 5, NULL, NULL, NULL, '1 day');
	SELECT lancelsm_add_table('emu', 'old_b', max_l0_generations => 5);
	SELECT lancelsm_alter_table('emu', 'old_b', clear => '{max_l0_generations}');
}, timeout => 30);
emu('POST', '/_emulator/log/reset');
is( join(' ', map { $node->safe_psql('old', q{
	SELECT string_agg(table_name || ':' || action || ':' || coalesce(reason, '-'), ' '
	                  ORDER BY table_name COLLATE "C")
	  FROM lancelsm_checkpoint_due(0, 1)}) } 1 .. 3),
	'old_a:none:- old_b:none:- ' x 2 . 'old_a:none:- old_b:none:-',
	'1.4 catalog: three runs, every table read at each');
is( join(' ', map { stats_reads($_) } qw(old_a old_b)), '3 3',
	'1.4 catalog: three stats reads of each table');
is( $node->safe_psql('old', q{
	SELECT max_l0_generations IS NULL FROM lancelsm_table WHERE table_name = 'old_b'}),
	't', '1.4 catalog: alter_table with its 1.4 arguments cleared the threshold');
is( $node->safe_psql('old', q{
	SELECT count(*) FROM lancelsm_run_history WHERE action = 'reads'}) . ' '
	  . $node->safe_psql('postgres', q{
	SELECT count(*) > 0 FROM lancelsm_run_history WHERE action = 'reads'}),
	'0 t', '1.4 catalog: the run history without the reads rows the 1.5 one shows');

$node->stop;
done_testing();
