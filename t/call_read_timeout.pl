# call_read_timeout.pl: requests are bounded without statement_timeout.
#
# With statement_timeout = 0 (pg_cron's default for a job that does not
# set it), a server that accepts and reads the request, then neither
# answers nor closes, must not hold the backend forever:
#  - the server option read_timeout ends the call with 08006 (a
#    connection-class SQLSTATE) at the read bound, not before it, and
#    the detail names read_timeout and carries libcurl's own text;
#  - with both bounds set, the shorter one wins: statement_timeout (57014)
#    when it is shorter, read_timeout (08006) when that is;
#  - read_timeout 0 turns the bound off: only statement_timeout ends it;
#  - the connection has TCP keepalive on, first probe after 60 s idle.
# The hanging server is the emulator's "hang" fault with max_ms: it closes
# by itself after 30 s, so nothing here can wait forever.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $READ_S = 2;
# libcurl measures the rate over 1-second samples: the bound is
# read_timeout plus up to about 2 s (src/net/http.c); more slack for load
my $SLACK_MS = 3000;
my $FLUSH = "SELECT lancelsm_flush('emu', 'events')";

my $port = start_emulator();
my $node = setup_node('read_timeout', $port);
$node->safe_psql('postgres',
	"ALTER SERVER emu OPTIONS (ADD read_timeout '$READ_S')");
my ($s, $pid) = open_session($node);
$s->query_safe("LOAD 'lancelsm'");
$s->query_safe('SET statement_timeout = 0');

# hang: the next flush is read and never answered (closed after 30 s).
sub hang
{
	emu_reset();
	emu('POST', '/_emulator/faults',
		{ table => 'events', route => 'flush_lsm', action => 'hang',
		  max_ms => 30000 });
}

# hung_flush: a flush the server never answers, under statement_timeout
# $timeout; returns (elapsed ms, SQLSTATE, stderr).
sub hung_flush
{
	my ($timeout) = @_;

	hang();
	$s->query_safe("SET statement_timeout = '$timeout'");
	my ($ms, $out, $err) = timed_query($s, $FLUSH);
	$s->query_safe('SET statement_timeout = 0');
	return ($ms, sqlstate_of($err), $err);
}

# 1. statement_timeout = 0: read_timeout ends the call
my ($ms, $state, $err) = hung_flush('0');
diag(sprintf('read_timeout %d s, statement_timeout 0: ended after %.0f ms',
	$READ_S, $ms));
is($state, '08006', 'silent server, no statement_timeout: 08006')
  or diag($err);
cmp_ok($ms, '>=', $READ_S * 1000, 'not before read_timeout');
cmp_ok($ms, '<', $READ_S * 1000 + $SLACK_MS, 'at the read bound');
like($err,
	qr/DETAIL:  The server sent no data for longer than its read_timeout \(2 s\): Operation too slow\. Less than 1 bytes\/sec transferred the last 2 seconds\. Request ID: [0-9a-f-]{36}\./,
	'the detail names read_timeout and carries libcurl\'s error buffer');
like($err,
	qr/HINT:  Raise the server's read_timeout option if the server legitimately takes longer to answer\./,
	'the hint names the option');
is(emu_counts()->{flush_lsm}, 1, 'one flush was sent');
is_deeply([ backend_emulator_sockets($pid) ],
	[], 'no socket left to the server');
my ($ms1, $one, $err1) = timed_query($s, 'SELECT 1');
is($one . $err1, '1', 'the session is usable afterwards');

# 2. the shorter bound wins: statement_timeout of 1 s against 2 s ...
($ms, $state, $err) = hung_flush('1s');
is($state, '57014', 'statement_timeout 1 s < read_timeout 2 s: 57014')
  or diag($err);
cmp_ok($ms, '<', $READ_S * 1000, 'ended before read_timeout');

# ... and read_timeout when statement_timeout is longer
($ms, $state, $err) = hung_flush('20s');
is($state, '08006', 'read_timeout 2 s < statement_timeout 20 s: 08006')
  or diag($err);
cmp_ok($ms, '<', $READ_S * 1000 + $SLACK_MS, 'ended at the read bound');

# 3. read_timeout 0 is off: statement_timeout alone ends the wait, past
# the 2 s the option had
$node->safe_psql('postgres', "ALTER SERVER emu OPTIONS (SET read_timeout '0')");
($ms, $state, $err) = hung_flush('5s');
is($state, '57014', 'read_timeout 0: only statement_timeout ends it')
  or diag($err);
cmp_ok($ms, '>=', 5000, 'read_timeout 0: not cut at 2 s');

# 4. TCP keepalive: while the request hangs, the backend's connection to
# the server runs the kernel's keepalive timer (/proc/net/tcp "tr" 2),
# due in at most 60 s (the timer is in USER_HZ ticks of 1/100 s)
$node->safe_psql('postgres',
	"ALTER SERVER emu OPTIONS (SET read_timeout '$READ_S')");
hang();
my $banner = send_query($s, $FLUSH);
wait_for_request('flush_lsm');
my @timers = keepalive_timers($pid);
is(scalar(@timers), 1, 'one connection to the server while it hangs');
is($timers[0][0], 2, 'the connection runs the keepalive timer');
cmp_ok($timers[0][1], '>', 50, 'keepalive: first probe due in more than 50 s');
cmp_ok($timers[0][1], '<=', 60, 'keepalive: first probe due in at most 60 s');
(my $out, $err) = finish_query($s, $banner);
is(sqlstate_of($err), '08006', 'that hang, too, ends at read_timeout')
  or diag($err);

# keepalive_timers: for each socket process $pid holds to the server,
# [timer type, seconds until it fires] from /proc/net/tcp ("tr:tm->when").
sub keepalive_timers
{
	my ($pid) = @_;

	return map {
		my ($type, $when) = split /:/, $_->[5];
		[ hex($type), hex($when) / 100 ]
	} backend_tcp_rows($pid);
}

$s->quit;
$node->stop;
done_testing();
