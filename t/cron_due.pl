# cron_due.pl: lancelsm_checkpoint_due() scheduled by pg_cron.
#
# One node with pg_cron and lancelsm preloaded, in pg_cron's default mode,
# runs docs/operations.md's job "lsm-due" (every minute with pg_cron 1.4, every 5
# seconds with 1.5 or later) against four declared tables, three of them
# with an emulator writer (20 rows/s):
#
#   hot_wal  written, max_wal_lag 5                 -> flush every run
#   hot_l0   written, 4 L0 generations,
#            max_l0_generations 1                   -> compact every run, never a flush
#   aged     written, max_checkpoint_age 1 second   -> checkpoint every run
#   quiet    never written (no L0, no memtable rows),
#            every threshold set and not reached    -> a stats read at the
#            first run, none after (its next read is planned at its bound,
#            lancelsm.max_read_interval: 15 minutes)
#
# After two runs the job is unscheduled, and the emulator's request log
# must hold, per run, exactly: hot_wal 1 stats read and
# 1 flush; hot_l0 1 stats read and 1 compact; aged 2 stats reads (the
# due check and the checkpoint's watermark), 1 flush and 1 compact; and
# quiet 1 stats read in all.  The
# rows each run returned (kept by the job in a table) say the same, and
# aged's last_checkpoint_at is the start of the last run's checkpoint.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $RUNS = 2;

skip_without_pg_cron();

my $port = start_emulator();
emu_reset();
for my $t ([ 'hot_wal', 20 ], [ 'hot_l0', 20 ], [ 'aged', 20 ], [ 'quiet', 0 ])
{
	emu('POST', '/_emulator/tables',
		{ name => $t->[0], buckets => 1, rows_per_second => $t->[1] });
}
emu('POST', '/_emulator/tables/hot_l0/generations', { count => 4, rows => 10 });

my $node = init_cron_node('cron_due');
$node->start;
install_lancelsm($node, $port);
$node->safe_psql('postgres', q{
	CREATE EXTENSION pg_cron;
	SELECT lancelsm_add_table('emu', 'hot_wal', max_wal_lag => 5, validate => false);
	SELECT lancelsm_add_table('emu', 'hot_l0', max_l0_generations => 1, validate => false);
	SELECT lancelsm_add_table('emu', 'aged', max_checkpoint_age => '1 second', validate => false);
	SELECT lancelsm_add_table('emu', 'quiet', 10, 1000000, 10, 100, '1 day', validate => false);
	CREATE TABLE due_runs (at timestamptz, server text, table_name text,
	  ok boolean, sqlstate text, message text, elapsed interval,
	  passes integer, polls integer, due boolean, reason text, action text);
}, timeout => 30);

my ($cron_version, $seconds) = pg_cron_seconds($node);
my $schedule = $seconds ? '5 seconds' : '* * * * *';
diag("pg_cron $cron_version: lancelsm_checkpoint_due every "
	  . ($seconds ? '5 seconds' : 'minute'));

# nothing before the job counts
emu('POST', '/_emulator/log/reset');
$node->safe_psql('postgres', qq{
	SELECT cron.schedule('lsm-due', '$schedule', \$\$SET statement_timeout = '50s';
	  INSERT INTO due_runs SELECT now(), * FROM lancelsm_checkpoint_due()\$\$)});

# runs of the job by status; a run in flight when the job is unscheduled
# is ended by pg_cron as failed with "job canceled": the test's doing, not
# counted
sub runs
{
	my ($status) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM cron.job_run_details WHERE status IN ($status)
		   AND return_message IS DISTINCT FROM 'job canceled'});
}

my $limit = ($seconds ? 5 : 60) * ($RUNS + 1) + 30;
my $until = time() + $limit;
sleep(0.5) while runs("'succeeded', 'failed'") < $RUNS && time() < $until;
$node->safe_psql('postgres', "SELECT cron.unschedule('lsm-due')");
# a run that started meanwhile ends before anything is counted
$until = time() + 60;
sleep(0.2) while runs("'starting', 'running', 'sending', 'connecting'") > 0
  && time() < $until;

my $n = runs("'succeeded'");
is(runs("'failed'"), 0, 'no run of the job failed');
cmp_ok($n, '>=', $RUNS, "the job ran at least $RUNS times within $limit s");
note($node->safe_psql('postgres',
	'SELECT status, return_message FROM cron.job_run_details ORDER BY runid'));

# every run returned the same row per table
is($node->safe_psql('postgres', q{
	SELECT table_name, ok, due, action, count(*)
	  FROM due_runs GROUP BY 1, 2, 3, 4
	 ORDER BY table_name COLLATE "C", due NULLS LAST}),
	join("\n",
		"aged|t|t|checkpoint|$n", "hot_l0|t|t|compact|$n",
		"hot_wal|t|t|flush|$n", "quiet|t|f|none|1", "quiet|t||none|" . ($n - 1)),
	'each run: aged checkpoint, hot_l0 compact, hot_wal flush; quiet read once, then none');
is($node->safe_psql('postgres', q{
	SELECT DISTINCT reason FROM due_runs WHERE table_name = 'quiet' AND due IS NULL}),
	'not read: bound', 'quiet: the runs after the first say it was not read');
is($node->safe_psql('postgres', q{
	SELECT table_name, bool_and(reason ~ '^(l0_generations \d+ > 1|wal_lag \d+ > 5|checkpoint_age \S+ > 00:00:01)$')
	  FROM due_runs WHERE due GROUP BY table_name ORDER BY table_name COLLATE "C"}),
	"aged|t\nhot_l0|t\nhot_wal|t", 'each due row names its threshold');

# exact requests per route and table: the threshold's action, nothing else
my %want = (
	quiet => [ 0, 0, 0 ],
	hot_wal => [ 1, 0, 1 ],
	hot_l0 => [ 0, 1, 1 ],
	aged => [ 1, 1, 2 ]);
for my $t (sort keys %want)
{
	my $c = emu('GET', "/_emulator/counts?table=$t");
	my $reads = $t eq 'quiet' ? 1 : 0;
	is( "flush $c->{flush_lsm}, compact $c->{compact_lsm}, stats $c->{get_lsm_stats}",
		sprintf('flush %d, compact %d, stats %d',
			(map { $_ * $n } @{ $want{$t} }[ 0, 1 ]), $want{$t}[2] * $n + $reads),
		"$t: the requests of $n runs");
}

# only the checkpoint action is recorded, as the start of the last run's
is($node->safe_psql('postgres', q{
	SELECT table_name FROM lancelsm_table WHERE last_checkpoint_at IS NOT NULL}),
	'aged', 'only aged has a last checkpoint');
is($node->safe_psql('postgres', q{
	SELECT last_checkpoint_at >= (SELECT max(at) FROM due_runs)
	       AND last_checkpoint_at < (SELECT max(at) FROM due_runs) + interval '50 seconds'
	  FROM lancelsm_table WHERE table_name = 'aged'}),
	't', "aged's last checkpoint is the last run's");

$node->stop;
done_testing();
