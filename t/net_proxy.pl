# net_proxy.pl: lancelsm through an egress proxy: squid (Debian's
# package) in front of the nginx TLS edge of t/net_tls_edge.pl.
#  - with the proxy option, calls succeed through squid; squid's access log
#    has one CONNECT per connection the edge saw, naming only the host and
#    port, never the API key nor a path;
#  - a proxy that refuses the CONNECT is HV00N, its status in the detail,
#    no request reaching the emulator; so is a proxy that is not there;
#  - proxy credentials from the user mapping answer squid's Basic
#    authentication; a wrong or missing password is HV00N with squid's
#    407, the password in no error and no log;
#  - the postmaster's http_proxy / https_proxy / all_proxy / no_proxy are
#    ignored: without the option lancelsm goes direct although they name
#    a refusing proxy, and with it no_proxy does not bypass the proxy;
#  - lancelsm.allowed_endpoints checks the proxy (name or address) and the
#    CONNECT target (name only).
# Skipped without nginx or squid, unless LANCELSM_REQUIRE_NETWORK is set.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmNet;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

require_tool('nginx', 'nginx');
require_tool('squid', 'squid');
my $port = start_emulator();
my $pki = make_pki();
my $edge = start_nginx($pki, $port, { h2 => {} });
my $squid = start_squid([ $edge->{port}{h2} ]);
my $deny = start_squid([]);
my $authed = start_squid([ $edge->{port}{h2} ],
	auth => [ 'lsmproxy', 'proxy-secret-1' ]);
my $nobody = LsmNet::free_port();

# the postmaster's environment names the refusing proxy for everything
my $node;
{
	local $ENV{http_proxy} = "http://127.0.0.1:$deny->{port}";
	local $ENV{https_proxy} = "http://127.0.0.1:$deny->{port}";
	local $ENV{HTTPS_PROXY} = "http://127.0.0.1:$deny->{port}";
	local $ENV{all_proxy} = "http://127.0.0.1:$deny->{port}";
	local $ENV{no_proxy} = 'localhost,127.0.0.1';
	$node = setup_node_conf('proxy', $port);
}

# server NAME to the edge, through proxy PROXY (undef: none), its PUBLIC
# mapping with options MAPPING besides the API key
sub proxied_server
{
	my ($name, $proxy, $mapping) = @_;
	my $opt = defined $proxy ? ", proxy '$proxy'" : '';
	my $um = defined $mapping ? ", $mapping" : '';

	$node->safe_psql('postgres', qq{
		CREATE SERVER $name FOREIGN DATA WRAPPER lancelsm
		  OPTIONS (database 'mydb', ssl_ca_file '$pki/ca.crt',
		           host_override 'https://localhost:$edge->{port}{h2}'$opt);
		CREATE USER MAPPING FOR PUBLIC SERVER $name OPTIONS (api_key '$API_KEY'$um);
	});
}
proxied_server('squid', "http://127.0.0.1:$squid->{port}");
proxied_server('refused', "http://127.0.0.1:$deny->{port}/");
proxied_server('noproxy', "http://127.0.0.1:$nobody");
proxied_server('direct', undef);
proxied_server('authed', "http://127.0.0.1:$authed->{port}",
	"proxy_user 'lsmproxy', proxy_password 'proxy-secret-1'");
proxied_server('badauth', "http://127.0.0.1:$authed->{port}",
	"proxy_user 'lsmproxy', proxy_password 'wrong-secret-2'");
proxied_server('noauth', "http://127.0.0.1:$authed->{port}");

my ($s) = open_session($node);
$s->query_safe("SET statement_timeout = '30s'");

# run: ($out, SQLSTATE, stderr) of one statement
sub run
{
	my ($ms, $out, $err) = timed_query($s, $_[0]);

	return ($out, sqlstate_of($err), $err);
}

# connects: the CONNECT lines of squid's access log
sub connects { return grep { / CONNECT / } log_lines($squid->{access}); }

# connects_after_quit: end session $s (its backend closes its tunnels:
# squid logs a CONNECT when its tunnel ends), wait (at most 5 s) until
# squid has logged $n CONNECTs, then 0.3 s for any more, and return
# them all; a new session replaces $s.
sub connects_after_quit
{
	my ($old, $n) = @_;
	my $until = time() + 5;

	$old->quit;
	sleep(0.05) while scalar(connects()) < $n && time() < $until;
	sleep(0.3);
	($s) = open_session($node);
	$s->query_safe("SET statement_timeout = '30s'");
	return connects();
}

#
# 1. through squid
#
emu_reset();
emu('POST', '/_emulator/tables/events/generations', { count => 2 });
my ($out, $st, $err) = run(
	"SELECT lancelsm_checkpoint('squid', 'events'); SELECT count(*) FROM lancelsm_stats('squid', 'events')");
is("$st|$out", "|\n1", 'checkpoint and stats through squid succeed') or diag($err);
my $calls = emu_counts();
cmp_ok($calls->{total}, '>=', 4, "the emulator got the $calls->{total} requests");
my %edge_conns = map { (split)[0] => 1 } log_lines($edge->{access});
my @connect = connects_after_quit($s, scalar(keys %edge_conns));
is(scalar(@connect), scalar(keys %edge_conns),
	'squid logged one CONNECT per connection the edge saw');
is(scalar(grep { m{ CONNECT localhost:$edge->{port}{h2} } } @connect),
	scalar(@connect), 'every CONNECT names the host and port only');
my $squid_log = PostgreSQL::Test::Utils::slurp_file($squid->{access});
unlike($squid_log, qr/\Q$API_KEY\E|v1\/table|x-api-key/,
	'squid never saw the API key, a header or a path');
my @protos = map { (split)[2] } log_lines($edge->{access});
is(join(',', sort { $a cmp $b } keys %{ { map { $_ => 1 } @protos } }), 'HTTP/2.0',
	'HTTP/2 inside the tunnel');

#
# 2. proxies that refuse, or are not there
#
emu_reset();
($out, $st, $err) = run("SELECT lancelsm_flush('refused', 'events')");
is($st, 'HV00N', 'a proxy refusing the CONNECT: HV00N');
like($err, qr/CONNECT.*403|403.*CONNECT/, 'the detail gives the proxy\'s status 403');
($out, $st, $err) = run("SELECT lancelsm_flush('noproxy', 'events')");
is($st, 'HV00N', 'no proxy listening: HV00N');
is(emu_counts()->{total}, 0, 'neither reached the emulator');

#
# 3. proxy authentication, credentials from the user mapping
#
emu_reset();
($out, $st, $err) = run("SELECT lancelsm_flush('authed', 'events')");
is($st, '', 'the user mapping\'s proxy_user and proxy_password open the tunnel')
  or diag($err);
for my $c ([ 'badauth', 'a wrong proxy password' ],
	[ 'noauth', 'no proxy credentials' ])
{
	($out, $st, $err) = run("SELECT lancelsm_flush('$c->[0]', 'events')");
	is($st, 'HV00N', "$c->[1]: HV00N");
	like($err, qr/response 407/, "$c->[1]: the detail gives the proxy's 407");
	unlike($err, qr/secret/, "$c->[1]: no password in the error");
}
is(emu_counts()->{flush_lsm}, 1, 'only the authenticated flush reached the emulator');
$s->quit;
($s) = open_session($node);
$s->query_safe("SET statement_timeout = '30s'");
my $auth_log = '';
my $until = time() + 5;
while ($auth_log !~ / CONNECT .* lsmproxy / && time() < $until)
{
	sleep(0.05);
	$auth_log = PostgreSQL::Test::Utils::slurp_file($authed->{access});
}
like($auth_log, qr/TCP_TUNNEL\/200 \d+ CONNECT localhost:\d+ lsmproxy /,
	'squid logged the tunnel under the proxy user');
unlike($auth_log, qr/secret|\Q$API_KEY\E/, 'squid logged neither password nor key');

#
# 4. the environment's proxy variables are ignored
#
my $denied_before = scalar(log_lines($deny->{access}));
($out, $st, $err) = run("SELECT lancelsm_flush('direct', 'events'); SELECT lancelsm_flush('emu', 'events')");
is($st, '', 'without the option: direct, though https_proxy and http_proxy name a refusing proxy')
  or diag($err);
is(scalar(log_lines($deny->{access})), $denied_before,
	'the refusing proxy of the environment saw nothing');
my $connect_before = scalar(connects_after_quit($s, 0));
($out, $st, $err) = run("SELECT lancelsm_flush('squid', 'events')");
is($st, '', 'with the option: through squid') or diag($err);
is(scalar(connects_after_quit($s, $connect_before + 1)), $connect_before + 1,
	'no_proxy=localhost in the environment does not bypass the proxy option');

#
# 5. lancelsm.allowed_endpoints through a proxy: the proxy is allowed by
# its name or the address connected to, the CONNECT target by its name
# only (the proxy resolves it); a refused request never reaches squid
#
my $flush = "SELECT count(*) FROM (SELECT lancelsm_flush('squid', 'events')) f";
my $target = "localhost:$edge->{port}{h2}";
($out, $st, $err) = run(
	"SET lancelsm.allowed_endpoints = '127.0.0.1:$squid->{port}, $target'; $flush");
is("$st|$out", '|1', 'proxy and target allowed by name') or diag($err);
($out, $st, $err) = run(
	"SET lancelsm.allowed_endpoints = '127.0.0.0/8, $target'; $flush");
is("$st|$out", '|1', 'the proxy allowed at its address') or diag($err);
$connect_before = scalar(connects_after_quit($s, $connect_before + 1));
($out, $st, $err) = run(
	"SET lancelsm.allowed_endpoints = '127.0.0.0/8, ::1'; $flush");
is($st, '42501', 'a target no name allows is refused, whatever its address');
like($err, qr/DETAIL:  The endpoint \Q$target\E is not allowed by lancelsm.allowed_endpoints/,
	'the detail names the target');
($out, $st, $err) = run("SET lancelsm.allowed_endpoints = '$target'; $flush");
is($st, '42501', 'a proxy neither name nor range allows is refused');
like($err, qr/DETAIL:  The endpoint 127.0.0.1:$squid->{port} is not allowed by lancelsm.allowed_endpoints/,
	'the detail names the proxy');
is(scalar(connects_after_quit($s, $connect_before)), $connect_before,
	'squid saw no CONNECT for the refused requests');

done_testing();
