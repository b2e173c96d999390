# cron_strict.pl: a pg_cron due job with strict => true fails when a
# table fails, and every table's outcome stays recorded.
#
# One node with pg_cron and lancelsm preloaded runs, as a non-superuser
# job role, lancelsm_checkpoint_due(strict => true) over three declared
# tables, one of which refuses its stats read (403).  The first run must
# be recorded by pg_cron as failed with the error's exact message, and
# lancelsm_status must hold each table's outcome of that run: the failed
# one 42501, the others their stats read (written over nothing: a quiet
# table whose outcome is ok writes none) or action.  Then, without
# pg_cron: the same call without strict returns its rows; strict => NULL
# raises 22004; lancelsm_checkpoint_all(strict => true) fails as the due
# job does and records every outcome.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

skip_without_pg_cron();

my $port = start_emulator();
emu_reset();
for my $t ('hot', 'bad', 'quiet')
{
	emu('POST', '/_emulator/tables',
		{ name => $t, buckets => 1, rows_per_second => ($t eq 'hot' ? 20 : 0) });
}
emu('POST', '/_emulator/faults',
	{ table => 'bad', route => 'get_lsm_stats', status => 403, count => -1 });

my $node = init_cron_node('cron_strict');
$node->start;
install_lancelsm($node, $port);
$node->safe_psql('postgres', q{
	CREATE EXTENSION pg_cron;
	CREATE ROLE job LOGIN;
	GRANT USAGE ON FOREIGN SERVER emu TO job;
	GRANT UPDATE (last_checkpoint_at) ON lancelsm_table TO job;
	SELECT lancelsm_add_table('emu', 'hot', max_wal_lag => 5);
	SELECT lancelsm_add_table('emu', 'bad', max_wal_lag => 5, validate => false);
	SELECT lancelsm_add_table('emu', 'quiet', max_wal_lag => 5);
}, timeout => 30);

my (undef, $seconds) = pg_cron_seconds($node);
my $schedule = $seconds ? '5 seconds' : '* * * * *';

$node->safe_psql('postgres', qq{
	SELECT cron.schedule_in_database('lsm-due', '$schedule',
	  \$\$SET statement_timeout = '50s';
	    SELECT * FROM lancelsm_checkpoint_due(strict => true)\$\$,
	  'postgres', 'job')});

# wait (bounded) for the first run to end, then stop the job
my $until = time() + ($seconds ? 5 : 60) + 60;
my $status = '';
while (time() < $until)
{
	$status = $node->safe_psql('postgres', q{
		SELECT status FROM cron.job_run_details
		 WHERE status IN ('succeeded', 'failed') ORDER BY runid LIMIT 1});
	last if $status ne '';
	sleep(0.2);
}
$node->safe_psql('postgres',
	"SELECT cron.unschedule(jobid) FROM cron.job WHERE jobname = 'lsm-due'");
is($status, 'failed', 'pg_cron records the strict run as failed');
is($node->safe_psql('postgres', q{
	SELECT return_message FROM cron.job_run_details
	 WHERE status = 'failed' ORDER BY runid LIMIT 1}),
	qq{ERROR:  1 of 3 declared LanceDB tables failed\n}
	  . qq{DETAIL:  Failed: "bad" of server "emu" (42501).\n}
	  . qq{HINT:  Each table's outcome is in lancelsm_status; the server log has the messages.\n},
	'its message counts the failed tables and names the failed one');

# outcomes: each table's outcome in lancelsm_status, one line a table
sub outcomes
{
	return $node->safe_psql('postgres', q{
		SELECT table_name, last_action, last_source, last_ok, last_sqlstate
		  FROM lancelsm_status ORDER BY table_name COLLATE "C"});
}

# the outcome writer writes what the failed run handed over
ok(outcomes_written($node), 'the outcomes of the failed run were written');
is(outcomes(),
	join("\n",
		'bad|stats|checkpoint_due|f|42501',
		'hot|flush|checkpoint_due|t|',
		'quiet||||'),
	'every table of the failed run has its outcome recorded');

# the same from psql: the error's detail names the failed table
my (undef, $err) = psql_verbose($node,
	'SELECT count(*) FROM lancelsm_checkpoint_due(strict => true)', 'job');
like($err, qr/ERROR:  HV000: 1 of 3 declared LanceDB tables failed/,
	'strict due: HV000 and the count');
like($err, qr/DETAIL:  Failed: "bad" of server "emu" \(42501\)\./,
	'strict due: the detail names the failed table and its SQLSTATE');

# without strict, the rows and a WARNING, as before
is($node->safe_psql('postgres', q{
	SELECT table_name, ok, sqlstate FROM lancelsm_checkpoint_due()
	 ORDER BY table_name COLLATE "C"}),
	"bad|f|42501\nhot|t|\nquiet|t|", 'not strict: one row per table');

# strict => NULL is no way around it
(undef, $err) = psql_verbose($node,
	'SELECT count(*) FROM lancelsm_checkpoint_due(strict => NULL)');
like($err, qr/ERROR:  22004: argument "strict" must not be null/,
	'strict => NULL: 22004');
(undef, $err) = psql_verbose($node,
	'SELECT count(*) FROM lancelsm_checkpoint_all(NULL)');
like($err, qr/ERROR:  22004: argument "strict" must not be null/,
	'checkpoint_all(NULL): 22004');

# lancelsm_checkpoint_all(strict => true): the same error, every outcome
emu('POST', '/_emulator/faults',
	{ table => 'quiet', route => 'flush_lsm', status => 403, count => -1 });
(undef, $err) = psql_verbose($node,
	'SELECT count(*) FROM lancelsm_checkpoint_all(strict => true)', 'job');
like($err, qr/ERROR:  HV000: 2 of 3 declared LanceDB tables failed/,
	'strict all: the count');
like($err,
	qr/DETAIL:  Failed: "bad" of server "emu" \(42501\), "quiet" of server "emu" \(42501\)\./,
	'strict all: the detail names both');
ok(outcomes_written($node), 'strict all: the outcomes were written');
is(outcomes(),
	join("\n",
		'bad|checkpoint|checkpoint_all|f|42501',
		'hot|checkpoint|checkpoint_all|t|',
		'quiet|checkpoint|checkpoint_all|f|42501'),
	'strict all: every outcome is recorded');

$node->stop;
done_testing();
