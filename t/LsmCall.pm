# LsmCall.pm: the waits of one call, for the call_ tests.
#
# call_deadline.pl ends each wait of a call by statement_timeout,
# call_cancel.pl by pg_cancel_backend(); both then check the same things.
# end_wait arranges one of these waits on LsmTap's emulator and in the
# caller's session, lets the caller end it, and checks what the server was
# sent and that no socket to it is left behind.
package LsmCall;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use JSON::PP;
use List::Util qw(pairkeys pairvalues);
use LsmTap;
use Test::More;
use Time::HiRes qw(sleep);

our @EXPORT = qw(end_wait session_answers);

my $FLUSH = "SELECT lancelsm_flush('emu', 'events')";

# fault: one fault on route $route of table "events", with %how
sub fault
{
	my ($route, %how) = @_;

	emu('POST', '/_emulator/faults',
		{ table => 'events', route => $route, %how });
}

# answered: wait until the emulator has answered a request on $route (its
# status is logged), then $ms more milliseconds
sub answered
{
	my ($route, $ms) = @_;

	wait_for_request($route, sub { $_[0]{status} });
	sleep($ms / 1000);
}

# The waits, by name: arrange sets them up on the emulator (after a reset);
# settings are SET in the session for the call and RESET after it; sql is
# the call; began returns once the wait has begun (for a caller that acts
# within it); sent lists the requests per route the server must have seen
# afterwards, said how the check reads ($ended: "canceled", "timed out");
# closed says that no socket to the server may be left.
my %WAITS = (
	# the server reads the request and never answers
	'hanging server' => {
		arrange => sub { fault('flush_lsm', action => 'hang'); },
		sql => $FLUSH,
		began => sub { wait_for_request('flush_lsm'); sleep(0.05); },
		sent => [ flush_lsm => 1 ],
		said => sub { 'one flush was sent' },
		closed => 1 },
	# the answer's body arrives at one byte per second
	'dripping body' => {
		arrange => sub { fault('get_lsm_stats', action => 'drip'); },
		sql => "SELECT count(*) FROM lancelsm_stats('emu', 'events')",
		began => sub { answered('get_lsm_stats', 200); },
		sent => [ get_lsm_stats => 1 ],
		said => sub { 'one stats read' },
		closed => 1 },
	# the checkpoint sleeps between polls: the bucket with L0 generations
	# is compacting (pinned latch), and the poll interval is 10 s
	'checkpoint poll sleep' => {
		arrange => sub {
			emu('POST', '/_emulator/tables/events/generations', { count => 2 });
			emu('POST', '/_emulator/tables/events/latch',
				{ bucket => 'b0', held => JSON::PP::true });
		},
		settings => [ 'poll_interval_min', 'poll_interval_max' ],
		sql => "SELECT lancelsm_checkpoint('emu', 'events')",
		began => sub { answered('get_lsm_stats', 100); },
		sent => [ flush_lsm => 1, get_lsm_stats => 1, compact_lsm => 0 ],
		said => sub { "flush 1, stats 1, compact 0 ($_[0] asleep after one poll)" } },
	# a retry backoff: flush answers 429 once, the backoff is 10 s
	'retry backoff' => {
		arrange => sub {
			fault('flush_lsm', status => 429,
				json => { code => 6, error => 'busy' });
		},
		settings => [ 'backoff_base', 'backoff_max' ],
		sql => $FLUSH,
		began => sub { answered('flush_lsm', 100); },
		sent => [ flush_lsm => 1 ],
		said => sub { "$_[0] before the retry" } });

# end_wait: arrange wait $what (a name above) for session $s of backend
# $pid, call $end->($what, $sql, $began) to run the call and end the wait
# ($began returns once it has begun), then check the requests the server
# saw and, where none may be left, that $pid holds no socket to it.  $ended
# says how the wait ended, for the checks' names.
sub end_wait
{
	my ($s, $pid, $what, $ended, $end) = @_;
	my $w = $WAITS{$what} or die "no wait \"$what\"";
	my @settings = @{ $w->{settings} || [] };

	emu_reset();
	$w->{arrange}->();
	$s->query_safe("SET lancelsm.$_ = '10s'") for @settings;
	$end->($what, $w->{sql}, $w->{began});
	$s->query_safe("RESET lancelsm.$_") for @settings;
	my $c = emu_counts();
	is_deeply([ map { $c->{$_} } pairkeys @{ $w->{sent} } ],
		[ pairvalues @{ $w->{sent} } ],
		"$what: " . $w->{said}->($ended));
	is_deeply([ backend_emulator_sockets($pid) ],
		[], "$what: no socket left to the server")
	  if $w->{closed};
}

# session_answers: check that session $s still answers a query after the
# wait $what ended.
sub session_answers
{
	my ($s, $what) = @_;
	my ($ms, $one, $err) = timed_query($s, 'SELECT 1');

	is($one . $err, '1', "$what: the session is usable afterwards");
}

1;
