# engine_queue.pl: a checkpoint of many tables whose passes queue for the
# server's compaction permits (src/task/pace.c, "drain"): the checkpoints of one
# server in one call poll a pass when the ranks ahead of it should be
# over, not on each table's doubling schedule.
#
# 1. 48 tables, 1 L0 generation each, 4 permits, 200 ms passes (the
#    server's minimum is 48 / 4 x 200 ms = 2.4 s): every row converges with
#    one pass, exactly 48 flushes and 48 compacts, and no table is read
#    more than 12 times (7 to 9 here): the watermark read, its doubling
#    schedule (50, 150, 350, 750, 1550 ms after its trigger) until the
#    drain predicts, then polls at the drain's predictions or pulled early
#    by a sighting, each pull at least a doubling step after the last poll
#    (pulled at every sighting, the last tables would be read dozens of
#    times).  (The drain's gain
#    is how soon a pass is seen over, which bench/thousand.sh measures; no
#    test here times anything.)
# 2. A pass that breaks the queue's order: the first table's pass takes
#    2.5 s while 23 others take 200 ms.  Every sighting of a higher rank
#    says it should be over; it is polled early at most once per doubling
#    step, so it costs at most 12 stats reads, not one per sighting.
# 3. The same 48 tables declared, through lancelsm_checkpoint_all(): the
#    same counts.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $port = start_emulator();
my $node = setup_node_conf('queue', $port, '');

# queue_tables: N tables q1..qN, 1 bucket and 1 L0 generation each, on a
# pool of PERMITS permits with PASS_MS passes; the log reset.
sub queue_tables
{
	my ($n, $permits, $pass_ms) = @_;

	emu_reset();
	emu('POST', '/_emulator/pool', { size => $permits });
	emu('POST', '/_emulator/config', { pass_ms => $pass_ms });
	for my $i (1 .. $n)
	{
		emu('POST', '/_emulator/tables', { name => "q$i", buckets => 1 });
		emu('POST', "/_emulator/tables/q$i/generations",
			{ count => 1, rows => 10 });
	}
	emu('POST', '/_emulator/log/reset');
	return;
}

# most_stats: the most get_lsm_stats calls of any of q1..qN.
sub most_stats
{
	my ($n) = @_;
	my $most = 0;

	for my $i (1 .. $n)
	{
		my $c = route_calls('get_lsm_stats', "q$i");
		$most = $c if $c > $most;
	}
	return $most;
}

# route_calls: calls of ROUTE on table T (all tables without T) since the
# log reset.
sub route_calls
{
	my ($route, $t) = @_;
	my $q = defined $t ? "?table=$t" : '';
	return emu('GET', "/_emulator/counts$q")->{$route};
}

my $array = 'ARRAY[' . join(',', map { "'q$_'" } 1 .. 48) . ']';

# 1. 48 tables queue for 4 permits
queue_tables(48, 4, 200);
my $rows = $node->safe_psql('postgres', qq{
	SELECT count(*) FILTER (WHERE ok AND passes = 1), count(*)
	  FROM lancelsm_checkpoint('emu', $array)}, timeout => 60);
is($rows, '48|48', 'queue: 48 rows ok, one pass each');
is(route_calls('flush_lsm'), 48, 'queue: 48 flushes');
is(route_calls('compact_lsm'), 48, 'queue: 48 compacts');
my $stats = route_calls('get_lsm_stats');
cmp_ok($stats, '>=', 2 * 48,
	"queue: the watermark read and a poll per table at least ($stats)");
my $most = most_stats(48);
cmp_ok($most, '<=', 12, "queue: no table read more than 12 times ($most)");

# 2. one pass that breaks the order
queue_tables(24, 4, 200);
emu('POST', '/_emulator/tables/q1/pass_script', { pass_ms => [2500] });
my $first = 'ARRAY[' . join(',', map { "'q$_'" } 1 .. 24) . ']';
$rows = $node->safe_psql('postgres', qq{
	SELECT count(*) FILTER (WHERE ok AND passes = 1), count(*)
	  FROM lancelsm_checkpoint('emu', $first)}, timeout => 60);
is($rows, '24|24', 'long first pass: 24 rows ok, one pass each');
my $long = route_calls('get_lsm_stats', 'q1');
cmp_ok($long, '<=', 12,
	"long first pass: polled early at most once per doubling step ($long stats reads)");
cmp_ok($long, '>=', 3, "long first pass: polled while it ran ($long)");
is(route_calls('compact_lsm', 'q1'), 1, 'long first pass: one compact');

# 3. the same through lancelsm_checkpoint_all()
queue_tables(48, 4, 200);
$node->safe_psql('postgres',
	join('', map { "SELECT lancelsm_add_table('emu', 'q$_', validate => false);\n" } 1 .. 48));
$rows = $node->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE ok AND passes = 1), count(*)
	  FROM lancelsm_checkpoint_all()}, timeout => 60);
is($rows, '48|48', 'checkpoint_all: 48 rows ok, one pass each');
is(route_calls('compact_lsm'), 48, 'checkpoint_all: 48 compacts');
$most = most_stats(48);
cmp_ok($most, '<=', 12,
	"checkpoint_all: no table read more than 12 times ($most)");

$node->stop;
done_testing();
