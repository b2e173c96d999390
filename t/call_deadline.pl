# call_deadline.pl: statement_timeout bounds every wait of lancelsm.
#
# While the server hangs, while a body drips in, during a checkpoint's
# sleep between polls and during a retry backoff, the statement ends with
# PostgreSQL's own 57014 at the timeout (the goal is 50 ms; CI asserts a
# generous bound and reports the measured overshoot), the session stays
# usable, and no socket to the server is left behind.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmCall;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $TIMEOUT_MS = 500;
my $BOUND_MS = 1000;    # generous, for loaded CI machines; the goal is 50
my $TIMEOUT_RE =
  qr/ERROR:\s+57014: canceling statement due to statement timeout/;

my $port = start_emulator();
my $node = setup_node('deadline', $port);
my ($s, $pid) = open_session($node);
$s->query_safe("LOAD 'lancelsm'");

# expect_timeout: run $sql under statement_timeout; it must fail with 57014
# at the timeout, and the session must answer afterwards.  (end_wait also
# passes a sub that returns once the wait has begun: a timeout needs none.)
sub expect_timeout
{
	my ($what, $sql) = @_;

	$s->query_safe("SET statement_timeout = '${TIMEOUT_MS}ms'");
	my ($ms, $out, $err) = timed_query($s, $sql);
	$s->query_safe('RESET statement_timeout');
	my $over = $ms - $TIMEOUT_MS;
	diag(sprintf('%s: ended %.1f ms after the start, overshoot %.1f ms',
		$what, $ms, $over));
	like($err, $TIMEOUT_RE, "$what: 57014 statement timeout");
	cmp_ok($ms, '>=', $TIMEOUT_MS - 1, "$what: not before the timeout");
	cmp_ok($over, '<', $BOUND_MS, "$what: ends at the timeout");
	session_answers($s, $what);
	return $over;
}

# 1. the server reads the request and never answers (LsmCall.pm)
end_wait($s, $pid, 'hanging server', 'timed out', \&expect_timeout);

# several timed-out calls in a row leave nothing behind either, and each
# is the timeout (57014), whichever of curl's and PostgreSQL's timers fires
# first
for my $i (1 .. 6)
{
	my $t = 40 * $i;
	emu('POST', '/_emulator/faults',
		{ table => 'events', route => 'flush_lsm', action => 'hang' });
	$s->query_safe("SET statement_timeout = '${t}ms'");
	my ($ms, $out, $err) =
	  timed_query($s, "SELECT lancelsm_flush('emu', 'events')");
	$s->query_safe('RESET statement_timeout');
	like($err, $TIMEOUT_RE, "repeated hang after $t ms: 57014");
}
is_deeply([ backend_emulator_sockets($pid) ],
	[], 'repeated hangs: no socket left to the server');

# a successful call may keep one keep-alive connection, no more
emu_reset();
$s->query_safe("SELECT lancelsm_flush('emu', 'events')");
$s->query_safe("SELECT lancelsm_flush('emu', 'events')");
cmp_ok(scalar(backend_emulator_sockets($pid)), '<=', 1,
	'after successful calls: at most one keep-alive connection');
emu('POST', '/_emulator/faults',
	{ table => 'events', route => 'flush_lsm', action => 'hang' });
expect_timeout('hang on a reused connection',
	"SELECT lancelsm_flush('emu', 'events')");
cmp_ok(scalar(backend_emulator_sockets($pid)), '<=', 1,
	'hang on a reused connection: at most one socket left');
my @established =
  grep { $_ eq '01' } backend_emulator_sockets($pid);
cmp_ok(scalar(@established), '<=', 1,
	'hang on a reused connection: at most one established connection');

# 2.-4. the other waits of a call (LsmCall.pm): the answer's body drips
# in; the checkpoint sleeps between polls; a retry backs off
end_wait($s, $pid, $_, 'timed out', \&expect_timeout)
  for ('dripping body', 'checkpoint poll sleep', 'retry backoff');

# the timeout also holds when the statement was already running a while:
# a hang that starts late in the statement still ends at the deadline
emu_reset();
emu('POST', '/_emulator/faults',
	{ table => 'events', route => 'flush_lsm', action => 'hang' });
emu('POST', '/_emulator/latency',
	{ table => 'events', route => 'flush_lsm', ms => 300 });
expect_timeout('latency then hang', "SELECT lancelsm_flush('emu', 'events')");

$s->quit;
$node->stop;
done_testing();
