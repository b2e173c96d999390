# engine_pace_per_role.pl: no role sets another's pace (src/task/herd.c), with
# lancelsm in shared_preload_libraries.
#
# 1. A role with only USAGE on a server with a PUBLIC user mapping sets its
#    own poll interval to 1 h and starts a checkpoint of "events": its run
#    triggers a pass and then sleeps for an hour.  The DBA's checkpoint of
#    the same table, under statement_timeout 8 s, does not wait behind it:
#    it leads a run of its own and converges in about what it takes alone,
#    and every request the emulator sees meanwhile is its own (exact
#    counts).  lancelsm_checkpoint_all() and lancelsm_checkpoint_due() run
#    the table too instead of skipping it for the slow run.
# 2. A table skipped because a run paced alike holds it is never ok:
#    checkpoint_all and checkpoint_due report ok false, 55006, "skipped".
# 3. What a slow-paced checkpoint learnt of the table's passes (polled at
#    2 s) does not set the DBA's next first poll: it polls as it would
#    alone, not at the middle of the slow session's coarse bracket.
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

my $port = start_emulator();
my $node = setup_node_conf('pace', $port);
$node->safe_psql('postgres', q{
	CREATE ROLE slow LOGIN;
	GRANT USAGE ON FOREIGN SERVER emu TO slow;
	SELECT lancelsm_add_table('emu', 'events', max_l0_generations => 0, validate => false);
});
my ($dba, $dba_pid) = open_session($node);
my ($atk, $atk_pid) = open_session($node);
my ($held, $held_pid) = open_session($node);

# the slow role's settings: its own session only
$atk->query_safe(q{SET ROLE slow});
$atk->query_safe(q{SET lancelsm.poll_interval_min = '1h'});
$atk->query_safe(q{SET lancelsm.poll_interval_max = '1h'});

# alone: the DBA's checkpoint of two generations, for reference
emu('POST', '/_emulator/tables/events/generations', { count => 2 });
my ($alone_ms, $alone, $alone_err) = timed_query($dba,
	q{SELECT ok, passes > 0, polls > 0 FROM lancelsm_checkpoint('emu', ARRAY['events'])});
is($alone, 't|t|t', 'alone: the DBA\'s checkpoint converges') or diag($alone_err);

# start_checkpoint: two more generations, then send a checkpoint of
# "events" in session $s and wait until the progress of backend $pid
# shows "phase|passes" as $want; returns (token, progress seen).
sub start_checkpoint
{
	my ($s, $pid, $want) = @_;

	emu('POST', '/_emulator/tables/events/generations', { count => 2 });
	my $tok = send_query($s, q{SELECT lancelsm_checkpoint('emu', 'events')});
	return ($tok, query_until($dba,
			"SELECT phase, passes FROM lancelsm_progress WHERE pid = $pid",
			$want));
}

# 1. the slow role's run triggers its pass, then sleeps for an hour
my ($slow, $seen) = start_checkpoint($atk, $atk_pid, 'waiting|1');
is($seen, 'waiting|1',
	'slow: its run triggered one pass and sleeps before its poll');
emu('POST', '/_emulator/tables/events/generations', { count => 2 });
emu('POST', '/_emulator/log/reset');
$dba->query_safe(q{SET statement_timeout = '8s'});
my ($ms, $row, $err) = timed_query($dba,
	q{SELECT ok, sqlstate, message, passes, polls FROM lancelsm_checkpoint('emu', ARRAY['events'])});
is(sqlstate_of($err), '', 'DBA: no error while the slow run sleeps') or diag($err);
like($row, qr/^t\|\|\|\d+\|\d+$/,
	'DBA: converges, a run of its own (not joined, not skipped)');
my (undef, undef, undef, $passes, $polls) = split /\|/, $row;
my $c = emu_counts();
is($c->{flush_lsm}, 1, 'DBA: one flush, its own');
is($c->{compact_lsm}, $passes, 'DBA: every compact call is one of its passes');
is($c->{get_lsm_stats}, $polls, 'DBA: every stats read is one of its polls');
cmp_ok($ms, '<', 4000,
	sprintf('DBA: %.0f ms, well before statement_timeout 8 s (alone: %.0f ms)',
		$ms, $alone_ms));
note sprintf('alone %.0f ms; beside the slow run %.0f ms', $alone_ms, $ms);

# ... and the declared-table entry points run it too, not skipped
emu('POST', '/_emulator/tables/events/generations', { count => 2 });
is($dba->query_safe(
		'SELECT table_name, ok, sqlstate, message, elapsed IS NOT NULL, passes > 0 '
		  . 'FROM lancelsm_checkpoint_all()'),
	'events|t|||t|t',
	'checkpoint_all: runs the table beside the slow run');
emu('POST', '/_emulator/tables/events/generations', { count => 2 });
is($dba->query_safe(
		'SELECT table_name, ok, message, action FROM lancelsm_checkpoint_due()'),
	'events|t||compact', 'checkpoint_due: acts on the table beside the slow run');
is($dba->query_safe(
		"SELECT phase, passes FROM lancelsm_progress WHERE pid = $atk_pid"),
	'waiting|1', 'slow: its run still sleeps, untouched');
$dba->query_safe("SELECT pg_cancel_backend($atk_pid)");
(undef, $err) = finish_query($atk, $slow);
is(sqlstate_of($err), '57014', 'slow: cancelled');

# 2. a run paced alike holds the table: skipped, and not ok
emu('POST', '/_emulator/tables/events/latch', { bucket => 'b0', held => JSON::PP::true });
my $lead;
($lead, $seen) = start_checkpoint($held, $held_pid, qr/^(waiting|draining)\|\d+$/);
like($seen, qr/^(waiting|draining)\|/,
	'skip: a checkpoint paced alike is running');
expect_skipped($dba, $held_pid, qr/l0_generations \d+ > 0/, 'skip');
is($dba->query_safe(
		'SELECT count(*) FROM lancelsm_checkpoint_all() WHERE ok'),
	'0', 'skip: a script counting ok rows does not count it');
emu('POST', '/_emulator/tables/events/latch', { bucket => 'b0', held => JSON::PP::false });
(undef, $err) = finish_query($held, $lead);
is(sqlstate_of($err), '', 'skip: the holding run converges once the latch is free')
  or diag($err);

# 3. the pace memory: a slow-paced checkpoint's bracket is not recalled
# ("paced": a table no checkpoint has learnt anything of yet)
emu('POST', '/_emulator/tables', { name => 'paced', buckets => 1 });
emu('POST', '/_emulator/tables/paced/generations', { count => 1 });
$atk->query_safe(q{SET lancelsm.poll_interval_min = '2s'});
$atk->query_safe(q{SET lancelsm.poll_interval_max = '3s'});
my ($slow_ms, undef, $slow_err) = timed_query($atk,
	q{SELECT lancelsm_checkpoint('emu', 'paced')});
is(sqlstate_of($slow_err), '', 'memory: the slow-paced checkpoint converges')
  or diag($slow_err);
cmp_ok($slow_ms, '>=', 1700, sprintf('memory: ... at its own pace (%.0f ms)', $slow_ms));
emu('POST', '/_emulator/tables/paced/generations', { count => 1 });
emu('POST', '/_emulator/log/reset');
$dba->query_safe(q{SELECT lancelsm_checkpoint('emu', 'paced')});
my @log = @{ emu('GET', '/_emulator/log?table=paced')->{requests} };
my ($compact) = grep { $_->{route} eq 'compact_lsm' } @log;
my ($poll) = grep { $_->{route} eq 'get_lsm_stats' && $compact && $_->{time} > $compact->{time} } @log;
ok($compact && $poll, 'memory: the DBA triggered a pass and polled');
my $gap = $poll ? 1000 * ($poll->{time} - $compact->{time}) : 1e9;
cmp_ok($gap, '<', 600,
	sprintf('memory: its first poll %.0f ms after the trigger, not at the slow bracket\'s middle (~1000 ms)', $gap));

$_->quit for ($dba, $atk, $held);
$node->stop;
done_testing();
