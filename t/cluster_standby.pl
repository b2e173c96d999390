# cluster_standby.pl: lancelsm on a streaming hot standby, then promoted.
#
# A primary with lancelsm preloaded declares table "lake" (max_l0_generations
# 1 and max_wal_lag 0: with 2 L0 generations and a write, due, action
# checkpoint) with its server and PUBLIC user mapping; a hot standby
# streams from a base backup of it.
# What docs/operations.md ("Where the last success lives") promises there:
#  1. the declarations are replicated: lancelsm_table on the standby shows
#     what the primary declared, thresholds included;
#  2. a checkpoint runs on the standby (network calls need no write): one
#     flush and one compaction trigger per pass (as its history entry
#     counts them) reach the emulator;
#  3. lancelsm_checkpoint_due() on the standby runs the due table's action
#     and returns its row, with a WARNING of SQLSTATE 25006 (read-only
#     transaction) saying the time was not recorded; last_checkpoint_at
#     stays NULL on both nodes;
#  4. once the standby is promoted, lancelsm_checkpoint_due() there records
#     last_checkpoint_at (no WARNING): at or after the call's start.
# And the durable outcomes (docs/operations.md, "Durable outcomes"): a
# flush on the primary is lake's outcome in lancelsm_status on the
# standby; the standby's own actions cannot record theirs (a direct call
# silently, checkpoint_due with a second 25006 WARNING, and a third for
# the read plan of the table it read); the promoted
# node's checkpoint_due records its outcome, which survives a restart.
# The outcome queue of 1.5 runs no worker on the standby and stages
# nothing there (a failed direct call included).
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

skip_in_repeat_runs();

my $port = start_emulator();
emu('POST', '/_emulator/tables', { name => 'lake', buckets => 1 });

# make_due: 2 L0 generations and a write in lake's bucket: due for a
# checkpoint (l0_generations 2 > 1, wal_lag 1 > 0)
sub make_due
{
	emu('POST', '/_emulator/tables/lake/generations', { count => 2, rows => 10 });
	emu('POST', '/_emulator/tables/lake/write', { rows => 1, bucket => 'b0' });
}
make_due();

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'lancelsm'\n");
$primary->start;
install_lancelsm($primary, $port);
$primary->safe_psql('postgres', qq{
	SELECT lancelsm_add_table('emu', 'lake', max_l0_generations => 1,
	  max_wal_lag => 0, validate => false);
	SELECT lancelsm_flush('emu', 'lake');
}, timeout => 30);

# the standby: from a base backup (its postgresql.conf preloads lancelsm
# too), streaming; caught up once it has replayed the primary's WAL
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby, 'replay');

my $declared = q{SELECT server, table_name, max_l0_generations,
	max_wal_lag, last_checkpoint_at IS NULL FROM lancelsm_table};
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't',
	'the standby is in recovery');
is($standby->safe_psql('postgres', $declared),
	'emu|lake|1|0|t', 'the declared table is on the standby, thresholds included');
is($standby->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'lancelsm', 'the standby preloads lancelsm');
my $status = q{SELECT table_name, last_action, last_source, last_ok,
	last_sqlstate IS NULL, last_finished_at IS NOT NULL, running_phase IS NULL
	FROM lancelsm_status};
is($standby->safe_psql('postgres', $status), 'lake|flush|direct|t|t|t|t',
	'the primary\'s outcome is in lancelsm_status on the standby');

# (2) a checkpoint on the standby
emu('POST', '/_emulator/log/reset');
is($standby->safe_psql('postgres',
	"SELECT lancelsm_checkpoint('emu', 'lake')"),
	'', 'a checkpoint runs on the standby');
my $c = emu('GET', '/_emulator/counts?table=lake');
my $passes = $standby->safe_psql('postgres', q{SELECT passes FROM
	lancelsm_checkpoint_history WHERE table_name = 'lake' AND ok});
cmp_ok($passes, '>=', 1, 'the standby checkpoint triggered compaction');
is("$c->{flush_lsm}/$c->{compact_lsm}", "1/$passes",
	'the standby checkpoint flushed once and triggered one compaction per pass');

# (3) checkpoint_due on the standby: the action runs, the time cannot be
# written; VERBOSITY verbose shows the WARNING's SQLSTATE
my ($out, $err);
make_due();
$standby->psql('postgres', qq{\\set VERBOSITY verbose
	SELECT table_name, ok, action FROM lancelsm_checkpoint_due()},
	stdout => \$out, stderr => \$err, on_error_die => 1);
is($out, 'lake|t|checkpoint', 'checkpoint_due on the standby checkpoints the due table');
like($err,
	qr/^psql:\S+ WARNING:  25006: could not record the last checkpoint of declared tables$/m,
	'checkpoint_due on the standby warns with 25006');
like($err,
	qr/^psql:\S+ WARNING:  25006: could not record the outcomes of declared tables$/m,
	'and that it could not record the outcome');
like($err,
	qr/^psql:\S+ WARNING:  25006: could not record the read plans of declared tables$/m,
	'and that it could not record the read plan (1.5)');
is((() = $err =~ /WARNING:/g), 3, 'three WARNINGs') or diag($err);
is($standby->safe_psql('postgres', $status), 'lake|flush|direct|t|t|t|t',
	'the standby\'s own actions leave the outcome as the primary wrote it');
is($standby->safe_psql('postgres',
	'SELECT last_checkpoint_at IS NULL FROM lancelsm_table'),
	't', 'last_checkpoint_at is not recorded on the standby');
is($primary->safe_psql('postgres',
	'SELECT last_checkpoint_at IS NULL FROM lancelsm_table'),
	't', 'nor on the primary');
# the outcome queue of 1.5 neither runs nor fills on a standby: no
# launcher or writer, nothing staged by a failed direct call
emu('POST', '/_emulator/faults',
	{ table => 'lake', route => 'flush_lsm', status => 403 });
$standby->psql('postgres', q{SELECT lancelsm_flush('emu', 'lake')},
	stdout => \$out, stderr => \$err);
like($err, qr/ERROR:  could not flush LanceDB table "lake"/,
	'a failed flush on the standby');
is($standby->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM pg_stat_activity
	         WHERE backend_type LIKE 'lancelsm outcome %'),
	       pending_outcomes, outcomes_dropped FROM lancelsm_info}),
	'0|0|0', 'the standby runs no outcome worker and queues nothing');

# (4) promotion (pg_ctl promote waits until the standby is a primary)
$primary->stop;
$standby->promote;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 'f',
	'the promoted standby is out of recovery');
my $before = $standby->safe_psql('postgres', 'SELECT now()');
make_due();
$standby->psql('postgres', q{\set VERBOSITY verbose
	SELECT table_name, ok, action FROM lancelsm_checkpoint_due()},
	stdout => \$out, stderr => \$err, on_error_die => 1);
is($out, 'lake|t|checkpoint', 'checkpoint_due on the new primary checkpoints the due table');
is($err, '', 'no WARNING on the new primary');
is($standby->safe_psql('postgres', qq{
	SELECT last_checkpoint_at >= '$before'::timestamptz
	   AND last_checkpoint_at <= now()
	  FROM lancelsm_table WHERE table_name = 'lake'}),
	't', 'last_checkpoint_at is recorded on the new primary');
is($standby->safe_psql('postgres', $status),
	'lake|checkpoint|checkpoint_due|t|t|t|t',
	'the outcome is recorded on the new primary');
$standby->restart;
is($standby->safe_psql('postgres', $status . q{ WHERE last_started_at = last_checkpoint_at}),
	'lake|checkpoint|checkpoint_due|t|t|t|t',
	'the outcome survives a restart');

$standby->stop;
done_testing();
