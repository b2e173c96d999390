# net_dns_names.pl: servers reached by host name, as users reach them: through
# a DNS server (dnsmasq), with TLS checked against the name.  Needs the
# resolver of scripts/with-names.sh (LANCELSM_TEST_DNS and the variables it
# sets); skipped without it, unless LANCELSM_REQUIRE_NAMES is set (the test
# command sets it): then it bails out.
#
#  - the users' own URL shape: a server with database 'mydb' and region
#    'us-east-1', no host_override, reaches https://mydb.us-east-1.api.lancedb.com
#    (dnsmasq answers that name with a loopback address, inside the test
#    only; lancelsm.allowed_endpoints = '127.0.0.0/8, ::1' guards against
#    any other) served by nginx with a wildcard certificate of a test CA
#    (ssl_ca_file); a certificate for another name is HV00N naming the
#    host, and no request reaches the emulator;
#  - a name with A and AAAA records, and one with an AAAA record only
#    (::1), are reached;
#  - NXDOMAIN and SERVFAIL are HV00N, the detail naming the host;
#  - failover: a name moved to a new address (the old server gone) is
#    followed by the very next request: a name is looked up again by
#    every statement (src/net/lookup.c);
#  - a DNS server that never answers: statement_timeout (500 ms) and a
#    cancel end the call within their bound plus 1 s (the wait for the
#    lookup is on the latch), with the backend's resolver lookups
#    waiting up to 5 s (RES_OPTIONS);
#  - a session whose server closed its idle connections (the emulator's
#    close_idle; through nginx: keepalive_timeout 1s) checkpoints by name
#    on a new connection, the name looked up again (no DNS cache to
#    outlive).
# The TLS cases need nginx (on the host: scripts/deps.sh); without it they
# are skipped, unless LANCELSM_REQUIRE_NETWORK is set.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmNet;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Socket qw(getaddrinfo getnameinfo AF_UNSPEC SOCK_STREAM NI_NUMERICHOST NIx_NOSERV);
use Test::More;
use Time::HiRes qw(time sleep);

for my $var (qw(LANCELSM_TEST_DNS LANCELSM_TEST_DNS_HOSTSDIR
	LANCELSM_TEST_DNS_FAULTS_LOG LANCELSM_TEST_HTTPS_RELAY))
{
	next if $ENV{$var};
	my $why = "$var is not set: run the suite under scripts/with-names.sh";
	BAIL_OUT($why) if $ENV{LANCELSM_REQUIRE_NAMES};
	plan skip_all => $why;
}
my $hostsdir = $ENV{LANCELSM_TEST_DNS_HOSTSDIR};
my $faults_log = $ENV{LANCELSM_TEST_DNS_FAULTS_LOG};
my $relay_file = $ENV{LANCELSM_TEST_HTTPS_RELAY};
my $CLOUD = 'mydb.us-east-1.api.lancedb.com';

# resolve: the addresses a name resolves to here, sorted and joined by
# spaces ('' when it does not resolve)
sub resolve
{
	my ($name) = @_;
	my ($err, @res) = getaddrinfo($name, undef,
		{ family => AF_UNSPEC, socktype => SOCK_STREAM });

	return '' if $err;
	my %addr;
	for (@res)
	{
		my ($e, $host) = getnameinfo($_->{addr}, NI_NUMERICHOST, NIx_NOSERV);
		$addr{$host} = 1 unless $e;
	}
	return join(' ', sort keys %addr);
}

# set_name: give $name the addresses @addrs in dnsmasq's hosts directory,
# then wait (at most 10 s) until the resolver answers them
sub set_name
{
	my ($name, @addrs) = @_;
	my $file = "$hostsdir/$name";
	my $want = join(' ', sort @addrs);
	my $until = time() + 10;

	open(my $fh, '>', $file) or die "cannot write $file: $!";
	print $fh map { "$_ $name\n" } @addrs;
	close($fh) or die "cannot write $file: $!";
	chmod(0644, $file);
	sleep(0.02) while resolve($name) ne $want && time() < $until;
	is(resolve($name), $want, "$name resolves to $want");
}

# the resolver's lookups of the backends wait up to 5 s for a silent DNS
# server (resolv.conf says 1 s): the difference bounds a lookup aborted
# by statement_timeout or a cancel
$ENV{RES_OPTIONS} = 'timeout:5 attempts:1';
my $port = start_emulator();
my $dual = start_extra_emulator(args => [ '--host', '::' ]);
my $node = setup_node_conf('names', $port,
	"lancelsm.allowed_endpoints = '127.0.0.0/8, ::1'\n");

# server NAME with the options OPTS and a user mapping
sub server
{
	my ($name, $opts) = @_;

	$node->safe_psql('postgres', qq{
		CREATE SERVER $name FOREIGN DATA WRAPPER lancelsm OPTIONS ($opts);
		CREATE USER MAPPING FOR PUBLIC SERVER $name OPTIONS (api_key '$API_KEY');
	});
}

my $FLUSH = "SELECT lancelsm_flush('%s', 'events')";

# fresh: a new session (no pooled connection yet) with a statement_timeout
sub fresh
{
	my ($timeout) = @_;
	my ($s, $pid) = open_session($node);

	$s->query_safe("SET statement_timeout = '" . ($timeout // '60s') . "'");
	return ($s, $pid);
}

# flush_by: (SQLSTATE, stderr) of a flush through server $srv in session $s
sub flush_by
{
	my ($s, $srv) = @_;
	my ($ms, $out, $err) = timed_query($s, sprintf($FLUSH, $srv));

	return (sqlstate_of($err), $err, $ms);
}

#
# 1. names with A and AAAA records
#
set_name('dual.lancelsm.test', '127.0.0.1', '::1');
set_name('v6.lancelsm.test', '::1');
server('dual', "database 'mydb', host_override 'http://dual.lancelsm.test:$dual->{port}'");
server('v6', "database 'mydb', host_override 'http://v6.lancelsm.test:$dual->{port}'");
my ($s, $pid) = fresh();
for my $srv ('dual', 'v6')
{
	my ($st, $err) = flush_by($s, $srv);
	is($st, '', "$srv: the flush by name succeeds") or diag($err);
}
is(emu_at($dual, 'GET', '/_emulator/counts?table=events')->{flush_lsm}, 2,
	'A and AAAA: both flushes reached the emulator, once each');

# the server closes the idle connections (as an edge's idle timeout
# does), and the name is looked up again for the next connection
is(emu_at($dual, 'POST', '/_emulator/connections/close_idle')->{closed}, 2,
	'the server closed both idle connections');
ok(wait_peer_closed($pid, $dual->{port}), 'the session saw them close');
my ($ims, $iout, $ierr) = timed_query($s,
	"SELECT ok FROM lancelsm_checkpoint('dual', ARRAY['events'])");
is("$iout|" . sqlstate_of($ierr), 't|',
	'after the idle close, a checkpoint by name succeeds') or diag($ierr);

#
# 2. NXDOMAIN and SERVFAIL: HV00N, naming the host
#
server('nx', "database 'mydb', host_override 'http://nx.lancelsm.test:$port'");
server('servfail', "database 'mydb', host_override 'http://db.servfail.lancelsm.test:$port'");
for my $c ([ 'nx', 'nx.lancelsm.test', 'NXDOMAIN' ],
	[ 'servfail', 'db.servfail.lancelsm.test', 'SERVFAIL' ])
{
	my ($srv, $host, $what) = @$c;
	my ($st, $err) = flush_by($s, $srv);

	is($st, 'HV00N', "$what: HV00N");
	like($err,
		qr/ERROR:  HV00N: could not flush LanceDB table "events"\nDETAIL:  Could not reach the server: Could not resolve host: \Q$host\E\./,
		"$what: the detail names the host");
}
like(slurp_file($faults_log), qr/^servfail db\.servfail\.lancelsm\.test$/m,
	'SERVFAIL: the query reached the server that fails it');

#
# 3. failover: the name moves, the old server is gone, the very next
#    request follows it
#
my $old = start_extra_emulator(host => '127.0.0.2', args => [ '--host', '127.0.0.2' ]);
my $new = start_extra_emulator(host => '127.0.0.3', port => $old->{port},
	args => [ '--host', '127.0.0.3' ]);
set_name('moving.lancelsm.test', '127.0.0.2');
server('moving', "database 'mydb', host_override 'http://moving.lancelsm.test:$old->{port}'");
($s, $pid) = fresh();
my ($st1, $err1) = flush_by($s, 'moving');
is($st1, '', 'failover: the first flush reaches the old address') or diag($err1);
LsmTap::stop_extra_emulator($old);
ok(wait_peer_closed($pid, $old->{port}), 'failover: the old server is gone');
set_name('moving.lancelsm.test', '127.0.0.3');
my ($st2, $err2) = flush_by($s, 'moving');
is($st2, '', 'failover: the very next flush succeeds') or diag($err2);
is(emu_at($new, 'GET', '/_emulator/counts?table=events')->{flush_lsm}, 1,
	'failover: it reached the new address, once');

#
# 4. a DNS server that never answers
#
server('silent', "database 'mydb', host_override 'http://db.silent.lancelsm.test:$port'");
server('silent2', "database 'mydb', host_override 'http://cancel.silent.lancelsm.test:$port'");

# silent_asked: wait (at most 10 s) until the silent server has received
# a query for $host (the statement that looks it up is under way)
sub silent_asked
{
	my ($host) = @_;
	my $until = time() + 10;

	sleep(0.01)
	  while slurp_file($faults_log) !~ /^silent \Q$host\E$/m && time() < $until;
	return slurp_file($faults_log) =~ /^silent \Q$host\E$/m;
}

($s, $pid) = fresh('500ms');
my ($st, $err, $ms) = flush_by($s, 'silent');
is($st, '57014', 'silent DNS server: statement_timeout ends the lookup (57014)')
  or diag($err);
cmp_ok($ms, '<', 1500,
	sprintf('silent DNS server: statement_timeout 500 ms: the call returned in %.0f ms', $ms));
$s->query_safe("SET statement_timeout = '60s'");
my ($canceller) = open_session($node);
my $banner = send_query($s, sprintf($FLUSH, 'silent2'));
ok(silent_asked('cancel.silent.lancelsm.test'), 'silent DNS server: the lookup is under way');
my $t0 = time();
$canceller->query_safe("SELECT pg_cancel_backend($pid)");
my ($out, $cerr) = finish_query($s, $banner);
my $cancel_ms = (time() - $t0) * 1000;
is(sqlstate_of($cerr), '57014', 'silent DNS server: a cancel ends the lookup (57014)')
  or diag($cerr);
cmp_ok($cancel_ms, '<', 1000,
	sprintf('silent DNS server: the call returned %.0f ms after the cancel', $cancel_ms));
($st, $err) = flush_by($s, 'dual');
is($st, '', 'silent DNS server: the session goes on, with its lookups left behind')
  or diag($err);

#
# 5. the users' own URL shape, TLS by name, through nginx
#
SKIP:
{
	if (!-x '/usr/sbin/nginx' && !$ENV{LANCELSM_REQUIRE_NETWORK})
	{
		skip('nginx is not installed (apt-get install nginx)', 10);
	}
	require_tool('nginx', 'nginx');
	my $pki = make_pki([ 'cloud', 'DNS:*.us-east-1.api.lancedb.com' ]);
	my $edge = start_nginx($pki, $port, {
		cloud => { cert => 'cloud', keepalive_timeout => '1s' },
		wrong => { cert => 'wrong' } });
	my $relay_addr = $ENV{LANCELSM_TEST_DNS};

	# relay_to: the 443 of the users' URL goes to edge block $block from
	# the next connection on
	my $relay_to = sub {
		open(my $fh, '>', $relay_file) or die "cannot write $relay_file: $!";
		print $fh "$edge->{port}{$_[0]}\n";
		close($fh) or die "cannot write $relay_file: $!";
	};
	set_name($CLOUD, $relay_addr);
	server('cloud', "database 'mydb', region 'us-east-1', ssl_ca_file '$pki/ca.crt'");
	emu_reset();

	$relay_to->('wrong');
	($s, $pid) = fresh();
	($st, $err) = flush_by($s, 'cloud');
	is($st, 'HV00N', 'a certificate for another name: HV00N');
	like($err,
		qr/ERROR:  HV00N: could not flush LanceDB table "events"\nDETAIL:  Could not reach the server: SSL: no alternative certificate subject name matches target host name '\Q$CLOUD\E'\./,
		'a certificate for another name: the detail names the host');
	is(emu_counts()->{total}, 0, 'a certificate for another name: no request served');

	$relay_to->('cloud');
	($s, $pid) = fresh();
	($st, $err) = flush_by($s, 'cloud');
	is($st, '', "database and region: the flush reaches https://$CLOUD")
	  or diag($err);
	is(emu_counts()->{flush_lsm}, 1, 'database and region: one flush served');

	# idle past the edge's keepalive_timeout, then a checkpoint by name
	ok(wait_peer_closed($pid, 443), 'the edge closed the idle connection');
	my ($cms, $cout, $cerr2) = timed_query($s,
		"SELECT ok FROM lancelsm_checkpoint('cloud', ARRAY['events'])");
	is("$cout|" . sqlstate_of($cerr2), 't|',
		'after the idle close, a checkpoint by name succeeds') or diag($cerr2);
	is(scalar(LsmTap::backend_tcp_rows($pid, 443)), 1,
		'it holds one connection to the edge, a new one');
	is(resolve('api.lancedb.com') . resolve('us-east-1.api.lancedb.com'), '',
		'no other name of api.lancedb.com resolves inside the test');
}

done_testing();
