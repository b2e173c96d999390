# net_in_flight.pl: the requests one call keeps in flight on one server
# follow the round trip, stay under the server's max_requests_in_flight,
# and back off when the server answers 429 or 503.
#
# The emulator adds a round trip to every route request (rtt_ms), so that
# requests overlap as they would at a cloud's distance.  Its request log
# gives each request's arrival ("time") and the moment its answer was
# fixed, before it was written ("answered"): requests whose intervals
# overlap there were in flight at once in the backend too.
# Over HTTP/1.1 each request in flight needs its own connection, and an
# idle one is reused first, so the emulator's count of connections is the
# most requests the call had in flight at once.  Each call runs in a fresh
# backend (a new pool).
#  1. A ceiling above the old 32 connections per pool: with
#     max_requests_in_flight 40, a call over 200 idle tables (a flush and a
#     stats read each) reaches exactly 40 in flight, on exactly 40
#     connections, and never more.
#  2. A small ceiling: with max_requests_in_flight 3 over 30 tables,
#     exactly 3 connections and never more than 3 in flight.
#  3. Back-off: with max_requests_in_flight 16 over 40 tables, the call
#     starts with 8 requests in flight (the window's start); the server
#     answers them 503 (4) and 429 (4).  Those answers halve the window
#     once: in the round trip after them exactly 4 requests go out, and
#     every table still ends ok.
#  4. HTTP/2 (TLS, through nginx with http2_max_concurrent_streams 5, below
#     the call's ceiling of 64): the 40 tables' 80 requests all end ok,
#     each reaches the emulator exactly once, never more than 5 at once.
#     libcurl keeps to the server's limit once its SETTINGS frame has
#     arrived; streams it sent before that beyond the limit are refused
#     (REFUSED_STREAM: the server did not act on them) and sent again on a
#     new connection.  How many were refused depends on timing: noted,
#     not asserted.  Skipped without nginx, unless LANCELSM_REQUIRE_NETWORK
#     is set.
#  5. A statement keeps its window from one call to the next (as
#     lancelsm_checkpoint_due does from one chunk of its stats reads to
#     the next): with max_requests_in_flight 16, one statement checkpoints
#     40 tables, then 40 others; the first call starts with 8 requests in
#     flight and grows to 16, the second starts with 16.  The next
#     statement, in the same backend, starts with 8 again.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmNet;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $RTT_MS = 200;
my @tables = map { sprintf('f%03d', $_) } 1 .. 200;
my $emu = start_extra_emulator(
	args => [ '--quiet', '--rtt-ms', $RTT_MS, map { ('--table', "$_:1") } @tables ]);
my $node = setup_node('in_flight', $emu->{port});

# peak: the most requests of @$log held by the emulator at once (an
# answer sent at the instant another request arrives is counted first)
sub peak
{
	my ($log) = @_;
	my @events = sort { $a->[0] <=> $b->[0] || $a->[1] <=> $b->[1] }
	  map { ([ $_->{time}, 1 ], [ $_->{answered}, -1 ]) } @$log;
	my ($now, $most) = (0, 0);

	for my $e (@events)
	{
		$now += $e->[1];
		$most = $now if $now > $most;
	}
	return $most;
}

# first_round_trip: the requests of @requests that arrived before any of
# them was answered, in order of arrival
sub first_round_trip
{
	my @requests = sort { $a->{time} <=> $b->{time} } @_;
	my $first_answer = (sort { $a <=> $b } map { $_->{answered} } @requests)[0];
	return grep { $_->{time} < $first_answer } @requests;
}

# checkpoint_with: in a fresh backend, set the server's
# max_requests_in_flight to $ceiling, checkpoint the first $n tables in
# one call; returns "rows|rows ok", the route requests logged and the
# emulator's counts
sub checkpoint_with
{
	my ($ceiling, $n) = @_;
	my $array = join(',', map { "'$_'" } @tables[ 0 .. $n - 1 ]);

	$node->safe_psql('postgres',
		"ALTER SERVER emu OPTIONS (ADD max_requests_in_flight '$ceiling')");
	emu_at($emu, 'POST', '/_emulator/log/reset');
	my $out = $node->safe_psql('postgres', qq{
		SET statement_timeout = '60s';
		SELECT count(*) || '|' || count(*) FILTER (WHERE ok)
		FROM lancelsm_checkpoint('emu', ARRAY[$array]);
	}, timeout => 90);
	$node->safe_psql('postgres',
		"ALTER SERVER emu OPTIONS (DROP max_requests_in_flight)");
	my $log = emu_at($emu, 'GET', '/_emulator/log')->{requests};
	my @routed = grep { defined $_->{route} } @$log;
	return ($out, \@routed, emu_at($emu, 'GET', '/_emulator/counts'));
}

#
# 1. a ceiling of 40: 40 in flight on 40 connections, never more
#
my ($out, $log, $counts) = checkpoint_with(40, 200);
is($out, '200|200', 'ceiling 40: 200 rows, every one ok');
is("$counts->{flush_lsm}|$counts->{get_lsm_stats}|$counts->{total}",
	'200|200|400', 'ceiling 40: one flush and one stats read per table');
is($counts->{connections}, 40,
	'ceiling 40: exactly 40 connections (the most requests in flight at once)');
cmp_ok(peak($log), '<=', 40, 'ceiling 40: never more than 40 requests held at once');

#
# 2. a ceiling of 3
#
($out, $log, $counts) = checkpoint_with(3, 30);
is($out, '30|30', 'ceiling 3: 30 rows, every one ok');
is($counts->{connections}, 3, 'ceiling 3: exactly 3 connections');
cmp_ok(peak($log), '<=', 3, 'ceiling 3: never more than 3 requests held at once');

#
# 3. 503 and 429 answers halve the window
#
emu_at($emu, 'POST', '/_emulator/faults',
	{ route => 'flush_lsm', status => 503, count => 4,
	  json => { code => 19, error => 'node draining' } });
emu_at($emu, 'POST', '/_emulator/faults',
	{ route => 'flush_lsm', status => 429, count => 4,
	  json => { code => 7, error => 'too many requests' } });
($out, $log, $counts) = checkpoint_with(16, 40);
is($out, '40|40', 'back-off: 40 rows, every one ok after the retries');
my @faulted = grep { $_->{status} == 503 || $_->{status} == 429 } @$log;
is(scalar(@faulted), 8, 'back-off: 8 answers were 503 or 429');

# the first round trip: the requests that arrived before any answer left
my @first = first_round_trip(@$log);
is(scalar(@first), 8, 'back-off: the call started with 8 requests in flight');
is(scalar(grep { $_->{status} == 503 || $_->{status} == 429 } @first), 8,
	'back-off: the 8 of the first round trip were answered 503 or 429');

# the round trip after them: the requests that arrived after the first
# fault answer left and before any answer to one of them could come back
my $fault_at = (sort { $a <=> $b } map { $_->{answered} } @faulted)[0];
my @second = first_round_trip(grep { $_->{time} > $fault_at } @$log);
is(scalar(@second), 4,
	'back-off: in the round trip after the 503 and 429 answers, 4 requests went out (the window halved)');
cmp_ok(peak($log), '<=', 16, 'back-off: never more than 16 requests held at once');

#
# 4. HTTP/2: the server's MAX_CONCURRENT_STREAMS holds
#
SKIP:
{
	if (!-x '/usr/sbin/nginx' && !$ENV{LANCELSM_REQUIRE_NETWORK})
	{
		skip('nginx is not installed (apt-get install nginx)', 4);
	}
	my $pki = make_pki();
	my $edge = start_nginx($pki, $emu->{port}, { h2 => { max_streams => 5 } });
	$node->safe_psql('postgres', qq{
		CREATE SERVER edge FOREIGN DATA WRAPPER lancelsm
		  OPTIONS (database 'mydb', ssl_ca_file '$pki/ca.crt',
		           host_override 'https://localhost:$edge->{port}{h2}');
		CREATE USER MAPPING FOR PUBLIC SERVER edge OPTIONS (api_key '$API_KEY');
	});
	my $mark = LsmNet::log_mark($edge->{access});
	my $errors = LsmNet::log_mark($edge->{log});
	emu_at($emu, 'POST', '/_emulator/log/reset');
	my $array = join(',', map { "'$_'" } @tables[ 0 .. 39 ]);
	$out = $node->safe_psql('postgres', qq{
		SET statement_timeout = '60s';
		SELECT count(*) || '|' || count(*) FILTER (WHERE ok)
		FROM lancelsm_checkpoint('edge', ARRAY[$array]);
	}, timeout => 90);
	is($out, '40|40', 'HTTP/2, 5 streams: 40 rows, every one ok')
	  or diag($node->safe_psql('postgres', qq{
		SELECT sqlstate || ' ' || message FROM lancelsm_checkpoint('edge', ARRAY[$array])
		WHERE NOT ok LIMIT 3}));
	my @access = LsmNet::log_since($edge->{access}, $mark, 80);
	my %conns = map { (split)[0] => 1 } @access;
	is(scalar(@access) . '|' . scalar(grep { /HTTP\/2\.0 20[02] / } @access),
		'80|80', 'HTTP/2, 5 streams: nginx served 80 requests, all over HTTP/2, all 2xx');
	$log = [ grep { defined $_->{route} }
		  @{ emu_at($emu, 'GET', '/_emulator/log')->{requests} } ];
	is(scalar(@$log), 80, 'HTTP/2, 5 streams: 80 requests reached the emulator');
	is(peak($log), 5, 'HTTP/2, 5 streams: exactly 5 requests held at once at most');
	my @refused = grep { /concurrent streams exceeded/ }
	  (LsmNet::log_lines($edge->{log}))[ $errors .. LsmNet::log_mark($edge->{log}) - 1 ];
	note(scalar(@refused) . ' streams refused before the SETTINGS frame arrived, '
		  . scalar(keys %conns) . ' connections');
}

#
# 5. the window carries over within a statement, not to the next one
#
my @calls = map { [ @tables[ $_ * 40 .. $_ * 40 + 39 ] ] } 0 .. 2;
my @arrays = map { join(',', map { "'$_'" } @$_) } @calls;
$node->safe_psql('postgres',
	"ALTER SERVER emu OPTIONS (ADD max_requests_in_flight '16')");
emu_at($emu, 'POST', '/_emulator/log/reset');
$out = $node->safe_psql('postgres', qq{
	SET statement_timeout = '60s';
	SELECT (SELECT count(*) FILTER (WHERE ok)
	        FROM lancelsm_checkpoint('emu', ARRAY[$arrays[0]]))
	  || '|' || (SELECT count(*) FILTER (WHERE ok)
	             FROM lancelsm_checkpoint('emu', ARRAY[$arrays[1]]));
	SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint('emu', ARRAY[$arrays[2]]);
}, timeout => 90);
$node->safe_psql('postgres',
	"ALTER SERVER emu OPTIONS (DROP max_requests_in_flight)");
is($out, "40|40\n40", 'window kept: every table of the three calls ok');
$log = [ grep { defined $_->{route} }
	  @{ emu_at($emu, 'GET', '/_emulator/log')->{requests} } ];
is(join('|', map {
		my %names = map { ($_ => 1) } @$_;
		scalar(first_round_trip(grep { $names{ $_->{table} } } @$log))
	} @calls),
	'8|16|8',
	'window kept: the statement\'s second call started with the 16 in flight its first reached, the next statement with 8');

$node->stop;
done_testing();
