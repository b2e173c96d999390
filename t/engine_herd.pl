# engine_herd.pl: many sessions of one cluster checkpointing one table at once
# (src/task/herd.c), with lancelsm in shared_preload_libraries.
#
# 1. A herd: 16 sessions released at the same moment checkpoint a 4-bucket
#    table under write load.  All converge; one or two of them lead a run
#    (flush, stats, compact), the others join and send nothing; the herd's
#    stats reads stay within 2x one checkpoint's + 16, its compact calls
#    within the passes + 16, and no session sends more than 20 requests
#    in any second.
# 2. lancelsm_checkpoint_all() and lancelsm_checkpoint_due() skip a table
#    whose checkpoint is running, not ok (55006), with a "skipped" message.
# 3. A joiner shares the failure of the run it joined (same SQLSTATE, a
#    detail naming the leader); when the run is cancelled instead, the
#    joiner takes over and converges on its own: no stale success.  A
#    session that sends other credentials never joins.
# 4. Without shared_preload_libraries, each session runs alone as before.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use JSON::PP;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $HERD = 16;
my $port = start_emulator();
my $node = setup_node_conf('herd', $port, qq{
lancelsm.poll_interval_max = '200ms'
max_connections = 40
});
my ($other) = open_session($node);

# wait_for_sql: query_until in the other session.
sub wait_for_sql { return query_until($other, @_); }

# counts: route calls on one table since the last reset.
sub counts { return emu('GET', "/_emulator/counts?table=$_[0]"); }

# max_per_second: the most requests one connection (one session) sent to
# the table in any window of one second.
sub max_per_second
{
	my ($table) = @_;
	my %by;

	push @{ $by{ $_->{conn} } }, $_->{time}
	  for @{ emu('GET', "/_emulator/log?table=$table")->{requests} };
	my $best = 0;
	for my $t (values %by)
	{
		my @t = sort { $a <=> $b } @$t;
		my $j = 0;
		for my $i (0 .. $#t)
		{
			$j++ while $t[$j] <= $t[$i] - 1.0;
			$best = $i - $j + 1 if $i - $j + 1 > $best;
		}
	}
	return $best;
}

my $ROW = q{SELECT ok, sqlstate, passes, polls, message FROM lancelsm_checkpoint('emu', ARRAY['%s'])};

# 1. the herd
emu_reset();
emu('POST', '/_emulator/tables',
	{ name => 'herd', buckets => 4, rows_per_second => 200 });
sleep(0.5);
emu('POST', '/_emulator/log/reset');
my $t0 = time();
my $single = $other->query_safe(sprintf($ROW, 'herd'));
my $single_s = time() - $t0;
my $one = counts('herd');
like($single, qr/^t\|\|\d+\|\d+\|$/, 'single: one checkpoint converges');
is($one->{flush_lsm}, 1, 'single: one flush');

my (@s, @pid);
for my $i (0 .. $HERD - 1)
{
	($s[$i], $pid[$i]) = open_session($node);
}
$other->query_safe('SELECT pg_advisory_lock(4242)');
my @tok = map {
	send_query($s[$_],
		"SELECT pg_advisory_lock_shared(4242) IS NULL AS released;\n"
		  . sprintf($ROW, 'herd'))
} 0 .. $HERD - 1;
is(wait_for_sql(
		q{SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted},
		"$HERD"),
	"$HERD", "herd: $HERD sessions wait at the barrier");
emu('POST', '/_emulator/log/reset');
$t0 = time();
$other->query_safe('SELECT pg_advisory_unlock(4242)');
my (@rows, %leader_pid);
for my $i (0 .. $HERD - 1)
{
	my ($out, $err) = finish_query($s[$i], $tok[$i]);
	$out =~ s/^released\n[tf]\n//m;
	my @lines = grep { /\|/ } split /\n/, $out;
	push @rows, [ $i, $lines[-1] // "no row: $err" ];
}
my $herd_s = time() - $t0;
my $all = counts('herd');
my ($ok, $polls, $passes, @leaders, @joiners) = (0, 0, 0);
for my $r (@rows)
{
	my ($i, $row) = @$r;
	my @f = split /\|/, $row, 5;
	$ok++ if $f[0] eq 't';
	$polls += $f[3] // 0;
	$passes += $f[2] // 0;
	if (($f[3] // 0) > 0)
	{
		push @leaders, $i;
		$leader_pid{ $pid[$i] } = 1;
	}
	else
	{
		push @joiners, $f[4] // '';
	}
}
is($ok, $HERD, "herd: all $HERD sessions converge");
ok(@leaders >= 1 && @leaders <= 2, 'herd: one or two sessions lead a run')
  or diag explain \@rows;
is($all->{flush_lsm}, scalar(@leaders), 'herd: one flush per run');
is(scalar(grep { /^joined the checkpoint of backend (\d+): \d+ passes, \d+ polls$/
			  && $leader_pid{$1} } @joiners),
	$HERD - @leaders,
	'herd: every other session joined a leader and sent no stats read');
is($all->{get_lsm_stats}, $polls, 'herd: the stats reads are the leaders\' polls');
ok($all->{get_lsm_stats} <= 2 * $one->{get_lsm_stats} + 16,
	"herd: $all->{get_lsm_stats} stats reads <= 2 x $one->{get_lsm_stats} + 16");
ok($all->{compact_lsm} <= $passes + 16,
	"herd: $all->{compact_lsm} compact calls <= $passes passes + 16");
my $peak = max_per_second('herd');
ok($peak <= 20, "herd: at most 20 requests in any second per session ($peak)");
note sprintf('single: %d requests (%d stats, %d compact) in %.2f s; '
	  . 'herd of %d: %d requests (%d stats, %d compact) in %.2f s, %d run(s)',
	$one->{total}, $one->{get_lsm_stats}, $one->{compact_lsm}, $single_s,
	$HERD, $all->{total}, $all->{get_lsm_stats}, $all->{compact_lsm}, $herd_s,
	scalar(@leaders));
emu('POST', '/_emulator/tables/herd/writer', { paused => JSON::PP::true });

# pin: hold or release the compaction latch of bucket b0 of "events".
sub pin
{
	emu('POST', '/_emulator/tables/events/latch',
		{ bucket => 'b0', held => $_[0] ? JSON::PP::true : JSON::PP::false });
}

# running: wait until backend $pid runs a checkpoint of "events" past its
# watermark.
sub running
{
	my ($pid) = @_;
	return wait_for_sql(
		"SELECT count(*) FROM lancelsm_progress WHERE pid = $pid AND target_generations IS NOT NULL",
		'1');
}

# waiting: wait until $n sessions other than the leader $lpid wait in an
# extension's wait (the herd's condition variable: the leader, polling,
# waits in one too).
sub waiting
{
	my ($n, $lpid) = @_;
	return wait_for_sql(
		"SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Extension' "
		  . "AND query LIKE '%lancelsm_checkpoint%' AND pid <> $lpid",
		"$n");
}

# 2. checkpoint_all and checkpoint_due skip a table in progress
pin(1);
emu('POST', '/_emulator/tables/events/generations', { count => 2 });
my $lead = send_query($s[0], "SELECT lancelsm_checkpoint('emu', 'events')");
is(running($pid[0]), '1', 'skip: a checkpoint of events is running');
$other->query_safe(
	"SELECT lancelsm_add_table('emu', 'events', max_l0_generations => 0, validate => false)");
expect_skipped($other, $pid[0], 'l0_generations 2 > 0', 'skip');
is($other->query_safe(
		'SELECT last_checkpoint_at IS NULL FROM lancelsm_table'),
	't', 'skip: a skipped table keeps its last_checkpoint_at');
like($other->query_safe(
		'SET lancelsm.share_checkpoints = off; '
		  . 'SELECT table_name, ok, message IS NULL, action, elapsed IS NOT NULL '
		  . 'FROM lancelsm_checkpoint_due(); RESET lancelsm.share_checkpoints'),
	qr/^events\|t\|t\|compact\|t$/m,
	'skip: with lancelsm.share_checkpoints off, the due table is acted on');

# 3a. the joiner shares the run's failure
my $t1 = send_query($s[1], sprintf($ROW, 'events'));
my $t2 = send_query($s[2], sprintf($ROW, 'events'));
is(waiting(2, $pid[0]), '2', 'failure: two sessions wait behind the running one');
$other->query_safe("SELECT pg_cancel_backend($pid[0])");
my ($out, $err) = finish_query($s[0], $lead);
like($err, qr/57014/, 'failure: the first leader is cancelled');
my $second = wait_for_sql(
	"SELECT count(*) FROM lancelsm_progress WHERE pid IN ($pid[1], $pid[2]) AND target_generations IS NOT NULL",
	'1');
is($second, '1', 'failure: one of the two leads the next run');
my $lpid = wait_for_sql(
	"SELECT pid FROM lancelsm_progress WHERE pid IN ($pid[1], $pid[2]) "
	  . 'AND target_generations IS NOT NULL',
	qr/^\d+$/);
my ($L, $J) = $lpid == $pid[1] ? (1, 2) : (2, 1);
is(waiting(1, $lpid), '1', 'failure: the other one joined it and waits');
emu('POST', '/_emulator/faults',
	{ table => 'events', route => 'get_lsm_stats', status => 404 });
my ($lout) = finish_query($s[$L], $L == 1 ? $t1 : $t2);
my ($jout) = finish_query($s[$J], $J == 1 ? $t1 : $t2);
like($lout, qr/^f\|HV00R\|0\|\d+\|could not checkpoint LanceDB table "events": /,
	'failure: the leader fails with HV00R');
like($jout,
	qr/^f\|HV00R\|0\|0\|could not checkpoint LanceDB table "events": The checkpoint of backend $lpid, which this one joined, failed: /,
	'failure: the joiner fails with the same SQLSTATE, naming the leader');

# 3b. a cancelled run is not shared: its joiner takes over
$lead = send_query($s[0], "SELECT lancelsm_checkpoint('emu', 'events')");
is(running($pid[0]), '1', 'takeover: a first run is going');
$t1 = send_query($s[1], sprintf($ROW, 'events'));
$t2 = send_query($s[2], sprintf($ROW, 'events'));
is(waiting(2, $pid[0]), '2', 'takeover: two sessions wait behind it');
$other->query_safe("SELECT pg_cancel_backend($pid[0])");
finish_query($s[0], $lead);
is(wait_for_sql(
		"SELECT count(*) FROM lancelsm_progress WHERE pid IN ($pid[1], $pid[2]) AND target_generations IS NOT NULL",
		'1'),
	'1', 'takeover: one of the two leads the next run');
$lpid = wait_for_sql(
	"SELECT pid FROM lancelsm_progress WHERE pid IN ($pid[1], $pid[2]) "
	  . 'AND target_generations IS NOT NULL',
	qr/^\d+$/);
($L, $J) = $lpid == $pid[1] ? (1, 2) : (2, 1);
is(waiting(1, $lpid), '1', 'takeover: the other one joined it');
$other->query_safe("SELECT pg_cancel_backend($lpid)");
($lout) = finish_query($s[$L], $L == 1 ? $t1 : $t2);
is(running($pid[$J]), '1', 'takeover: the joiner now leads a run of its own');
pin(0);
($jout) = finish_query($s[$J], $J == 1 ? $t1 : $t2);
like($jout, qr/^t\|\|\d+\|[1-9]\d*\|$/,
	'takeover: the joiner converged by its own polls, no "joined" message');

# 3c. a session that sends other credentials never joins: with a key the
# server refuses it fails on its own (28000) while the run it would have
# joined is still going
$other->query_safe(qq{
	CREATE SERVER emu_other FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER emu_other OPTIONS (api_key 'not-the-key')});
pin(1);
emu('POST', '/_emulator/tables/events/generations', { count => 2 });
$lead = send_query($s[0], sprintf($ROW, 'events'));
is(running($pid[0]), '1', 'credentials: a run of events is going');
is($s[1]->query_safe(
		"SELECT ok, sqlstate, message LIKE '%joined%' FROM lancelsm_checkpoint('emu_other', ARRAY['events'])"),
	'f|28000|f',
	'credentials: another key does not join the run; the server refuses it');
is(running($pid[0]), '1', 'credentials: the run is still going');
pin(0);
($out) = finish_query($s[0], $lead);
like($out, qr/^t\|\|\d+\|[1-9]\d*\|$/,
	'credentials: the run converges by its own polls');

$_->quit for (@s, $other);

# 4. without shared_preload_libraries every session runs alone
my $plain = setup_node('plain', $port);
my ($p1) = open_session($plain);
my ($p2) = open_session($plain);
emu_reset();
emu('POST', '/_emulator/tables/events/generations', { count => 1 });
pin(1);
$t1 = send_query($p1, sprintf($ROW, 'events'));
$t2 = send_query($p2, sprintf($ROW, 'events'));
my $until = time() + 10;
sleep(0.02) while counts('events')->{flush_lsm} < 2 && time() < $until;
is(counts('events')->{flush_lsm}, 2, 'no preload: each session flushes on its own');
pin(0);
($out) = finish_query($p1, $t1);
like($out, qr/^t\|\|\d+\|[1-9]\d*\|$/, 'no preload: the first converges by its own polls');
($out) = finish_query($p2, $t2);
like($out, qr/^t\|\|\d+\|[1-9]\d*\|$/, 'no preload: the second too');
$_->quit for ($p1, $p2);

done_testing();
