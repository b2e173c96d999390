# net_tls_edge.pl: lancelsm behind a real TLS edge: nginx (Debian's package)
# terminating TLS for localhost (a test CA made here) in front of the
# emulator, speaking HTTP/2 and HTTP/1.1.
#
# Connections are counted from nginx's access log ($connection, one TLS
# handshake each, and $connection_requests); requests from the emulator's.
#  - HTTP/2 is negotiated by ALPN by default, HTTP/1.1 when the edge does
#    not offer HTTP/2 or http_version is '1.1'; http_version '2' speaks
#    HTTP/2 over plain http too;
#  - a 50-table lancelsm_checkpoint(server, text[]) uses one connection,
#    with the same results and call counts as over HTTP/1.1;
#  - a 500-table lancelsm_checkpoint_all() and 1,000 flushes in one
#    session use ceil(requests / keepalive_requests) connections: nginx
#    ends each connection with a GOAWAY after keepalive_requests (100
#    here), and not one request is lost or sent twice;
#  - an edge that ends every connection after 3 requests (a GOAWAY over
#    HTTP/2; keepalive_requests 3): 20 flushes in a row take 7
#    connections, and a 20-table lancelsm_checkpoint (streams in flight at
#    once when the GOAWAY comes) succeeds for every table, each request
#    reaching the emulator exactly once, as in the SDK, whose client sends
#    a request refused by a GOAWAY again on a new connection;
#  - a stream reset (the upstream closing mid-body) is 08006, as the reset
#    connection over HTTP/1.1; within a 20-table checkpoint on one HTTP/2
#    connection only the table whose answer was cut fails, after its one
#    stats read (the SDK sends the LSM routes without retries:
#    send_lsm_route), and the 19 others succeed with their usual calls;
#  - the edge's own 502 and 504 HTML pages (with a Retry-After) are
#    HV000 after one request, never retried (docs/protocol.md, "Errors");
#  - a connection the edge closed while idle (keepalive_timeout 1s) is
#    replaced: the next call succeeds, once, without hanging;
#  - a certificate for another host name, an expired certificate, and an
#    edge offering TLS 1.1 only are HV00N, no request reaching the
#    emulator.  (OpenSSL 3 here can serve TLS 1.1 with @SECLEVEL=0;
#    lancelsm asks for TLS 1.2 at least, so the handshake fails.)
# Skipped without nginx, unless LANCELSM_REQUIRE_NETWORK is set.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmNet;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use POSIX qw(ceil);
use Test::More;

require_tool('nginx', 'nginx');
my $port = start_emulator();
my $pki = make_pki();
my $edge = start_nginx($pki, $port, {
	h2 => { read_timeout => '1s' },
	lim => { keepalive_requests => 100 },
	lim3 => { keepalive_requests => 3 },
	h1 => { http2 => 0 },
	idle => { keepalive_timeout => '1s' },
	wrong => { cert => 'wrong' },
	expired => { cert => 'expired' },
	tls11 => { protocols => 'TLSv1.1', ciphers => 'DEFAULT@SECLEVEL=0' },
	down => { upstream => '127.0.0.1:1' },
	h2c => { tls => 0 } });
my $node = setup_node_conf('edge', $port);

# server NAME on edge block BLOCK, with extra options
sub edge_server
{
	my ($name, $block, $extra) = @_;

	$node->safe_psql('postgres', qq{
		CREATE SERVER $name FOREIGN DATA WRAPPER lancelsm
		  OPTIONS (database 'mydb', ssl_ca_file '$pki/ca.crt',
		           host_override 'https://localhost:$edge->{port}{$block}'
		           @{[ $extra ? ", $extra" : '' ]});
		CREATE USER MAPPING FOR PUBLIC SERVER $name OPTIONS (api_key '$API_KEY');
	});
}
edge_server('edge', 'h2');
edge_server('edge11', 'h2', "http_version '1.1'");
edge_server('edgelim', 'lim');
edge_server('edgelim3', 'lim3');
edge_server('edgeh1', 'h1');
edge_server('edgeidle', 'idle');
edge_server('edgeidle11', 'idle', "http_version '1.1'");
edge_server($_, $_) for qw(wrong expired tls11 down);
$node->safe_psql('postgres', qq{
	CREATE SERVER edgeh2c FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', http_version '2',
	           host_override 'http://127.0.0.1:$edge->{port}{h2c}');
	CREATE USER MAPPING FOR PUBLIC SERVER edgeh2c OPTIONS (api_key '$API_KEY');
});

# fresh: a new session (a new backend: no pooled connection yet)
sub fresh
{
	my ($s) = open_session($node);

	$s->query_safe("SET statement_timeout = '60s'");
	return $s;
}

# through: run $sql in session $s; returns (stdout, SQLSTATE or '',
# stderr, the access log lines it caused: at least one per request that
# reached the emulator)
sub through
{
	my ($s, $sql) = @_;
	my $mark = log_mark($edge->{access});
	my $before = emu('GET', '/_emulator/counts')->{total};
	my ($ms, $out, $err) = timed_query($s, $sql);
	my $reached = emu('GET', '/_emulator/counts')->{total} - $before;

	return ($out, sqlstate_of($err), $err,
		log_since($edge->{access}, $mark, $reached));
}

# connections: (distinct connections, protocols seen, most requests on
# one connection) of access log lines
sub connections
{
	my (%conn, %proto);
	my $most = 0;

	for (@_)
	{
		my ($c, $n, $p) = split;
		$conn{$c} = 1;
		$proto{$p} = 1;
		$most = $n if $n > $most;
	}
	return (scalar(keys %conn), join(',', sort keys %proto), $most);
}

my $FLUSH = "SELECT lancelsm_flush('%s', 'events')";

#
# 1. which HTTP version is spoken
#
my $s = fresh();
for my $c ([ 'edge', 'HTTP/2.0', 'ALPN picks HTTP/2' ],
	[ 'edge11', 'HTTP/1.1', "http_version '1.1'" ],
	[ 'edgeh1', 'HTTP/1.1', 'an edge without HTTP/2: HTTP/1.1' ],
	[ 'edgeh2c', 'HTTP/2.0', "http_version '2' over plain http (prior knowledge)" ])
{
	my ($srv, $want, $what) = @$c;
	my ($out, $st, $err, @log) = through($s, sprintf($FLUSH, $srv));
	my (undef, $proto) = connections(@log);

	is("$st|$proto", "|$want", "$what: the flush succeeds over $want")
	  or diag($err);
}

#
# 2. 50 tables over one HTTP/2 connection, as over HTTP/1.1
#
my @t50 = map { sprintf('t%02d', $_) } 1 .. 50;
emu('POST', '/_emulator/tables', { name => $_, buckets => 1 }) for @t50;

# checkpoint_tables: checkpoint @tables, each with one L0 generation,
# through server $srv in a fresh session; returns (the count of ok rows,
# then ";" and "table,sqlstate" of each failed row joined by ";", the
# access log lines, flush and compact calls per table as "f/c" joined,
# the emulator's total).  The failures' messages go to the test's log
# only (their request ids differ from run to run).
sub checkpoint_tables
{
	my ($srv, @tables) = @_;
	my $tables = "ARRAY['" . join("','", @tables) . "']";

	emu('POST', "/_emulator/tables/$_/generations", { count => 1 }) for @tables;
	emu('POST', '/_emulator/log/reset');
	my ($out, $st, $err, @log) = through(fresh(),
		"SELECT count(*) FILTER (WHERE ok) || ';' || coalesce(string_agg(table_name || ',' || sqlstate || '|' || message, ';' ORDER BY table_name) FILTER (WHERE NOT ok), '') FROM lancelsm_checkpoint('$srv', $tables)");
	diag($err) if $st;
	note($out);
	$out =~ s/\|[^;]*//g;
	my %calls;
	for (@tables)
	{
		my $c = emu('GET', "/_emulator/counts?table=$_");
		$calls{"$c->{flush_lsm}/$c->{compact_lsm}"}++;
	}
	return ($out, \@log,
		join(',', map { "$_ x$calls{$_}" } sort keys %calls),
		emu('GET', '/_emulator/counts')->{total});
}
my ($ok2, $log2, $calls2, $total2) = checkpoint_tables('edge', @t50);
my ($nconn2, $proto2) = connections(@$log2);
is($ok2, '50;', 'HTTP/2: all 50 checkpoints succeed');
is("$nconn2|$proto2", '1|HTTP/2.0',
	'HTTP/2: the 50-table checkpoint uses one connection (one TLS handshake)');
is(scalar(@$log2), $total2, 'HTTP/2: every request the edge saw reached the emulator');
my ($ok1, $log1, $calls1, $total1) = checkpoint_tables('edge11', @t50);
my ($nconn1, $proto1) = connections(@$log1);
is($ok1, '50;', 'HTTP/1.1: all 50 checkpoints succeed');
is($calls2, '1/1 x50', 'HTTP/2: one flush and one compact per table');
is($calls1, $calls2, 'HTTP/1.1: the same calls per table as HTTP/2');
cmp_ok($nconn1, '>', 1, "HTTP/1.1: the same checkpoint takes $nconn1 connections");

#
# 3. past keepalive_requests: a GOAWAY, then the next connection
#
my @t500 = map { sprintf('c%03d', $_) } 1 .. 500;
emu('POST', '/_emulator/tables', { name => $_, buckets => 1 }) for @t500;
$node->safe_psql('postgres',
	"SELECT count(lancelsm_add_table('edgelim', 'c' || lpad(i::text, 3, '0'), validate => false)) FROM generate_series(1, 500) i");
emu('POST', '/_emulator/log/reset');
my ($out, $st, $err, @log) = through(fresh(),
	'SELECT count(*) FILTER (WHERE ok), count(*) FROM lancelsm_checkpoint_all()');
is("$out|$st", '500|500|', 'checkpoint_all: 500 tables, all succeed') or diag($err);
my ($nconn, $proto, $most) = connections(@log);
my $total = emu('GET', '/_emulator/counts')->{total};
is(scalar(@log), $total, "checkpoint_all: the emulator got the $total requests the edge logged");
is("$nconn|$proto|$most", ceil($total / 100) . '|HTTP/2.0|100',
	'checkpoint_all: ceil(requests / keepalive_requests) connections, 100 requests on the fullest');

emu('POST', '/_emulator/log/reset');
($out, $st, $err, @log) = through(fresh(),
	"SELECT count(lancelsm_flush('edgelim', 'events')) FROM generate_series(1, 1000)");
($nconn, $proto, $most) = connections(@log);
is("$out|$st|" . emu_counts()->{flush_lsm}, '1000||1000',
	'1,000 flushes in one session: each reaches the emulator exactly once');
is("$nconn|$proto|$most", '10|HTTP/2.0|100',
	'1,000 flushes: 10 connections of 100 requests each');

#
# 3b. an edge that ends each connection after 3 requests
#
emu('POST', '/_emulator/log/reset');
($out, $st, $err, @log) = through(fresh(),
	"SELECT count(lancelsm_flush('edgelim3', 'events')) FROM generate_series(1, 20)");
($nconn, $proto, $most) = connections(@log);
is("$out|$st|" . emu_counts()->{flush_lsm} . '|' . scalar(@log), '20||20|20',
	'keepalive_requests 3: 20 flushes succeed, each reaching the emulator once')
  or diag($err);
is("$nconn|$proto|$most", '7|HTTP/2.0|3',
	'keepalive_requests 3: 20 flushes take 7 connections of at most 3 requests');

my @t20 = @t50[ 0 .. 19 ];

my ($ok20, $log20, $calls20, $total20) = checkpoint_tables('edgelim3', @t20);
($nconn, $proto, $most) = connections(@$log20);
is("$ok20|$calls20", '20;|1/1 x20',
	'keepalive_requests 3: a 20-table checkpoint succeeds for every table, one flush and one compact each');
is(scalar(@$log20), $total20,
	'keepalive_requests 3: every request the edge served reached the emulator once');
is("$proto|$most", 'HTTP/2.0|3', 'keepalive_requests 3: at most 3 requests per connection');

#
# 4. a stream reset mid-body is a reset connection (08006), on both versions
#
for my $srv ('edge', 'edge11')
{
	emu_reset();
	emu('POST', '/_emulator/faults',
		{ table => 'events', route => 'get_lsm_stats',
		  action => 'close_mid_body', status => 200,
		  json => { lsm_stats => { buckets => [] }, pad => 'x' x 70000 } });
	($out, $st, $err) = through(fresh(),
		"SELECT count(*) FROM lancelsm_stats('$srv', 'events')");
	is($st, '08006', "$srv: the edge cutting the answer mid-body is 08006")
	  or diag($err);
}

# one stream of 20 on the same HTTP/2 connection cut mid-answer: only its
# table fails, after its one stats read; the others are not disturbed
emu_reset();
emu('POST', '/_emulator/tables', { name => $_, buckets => 1 }) for @t20;
emu('POST', '/_emulator/faults',
	{ table => 't03', route => 'get_lsm_stats', action => 'close_mid_body',
	  status => 200, json => { lsm_stats => { buckets => [] }, pad => 'x' x 70000 } });
($ok20, $log20, $calls20) = checkpoint_tables('edge', @t20);
is("$ok20|$calls20", '19;t03,08006|1/0 x1,1/1 x19',
	'a stream cut mid-answer: only its table fails (08006), the 19 others succeed');
my $c03 = emu('GET', '/_emulator/counts?table=t03');
is("$c03->{flush_lsm}|$c03->{compact_lsm}|$c03->{get_lsm_stats}", '1|0|1',
	'the cut table: one flush, one stats read, not retried, no compact');

#
# 5. the edge's own 502 and 504 pages
#
my $curl = tool('curl', '-s', '-D', '-', '-o', '/dev/null', '--cacert',
	"$pki/ca.crt", '-X', 'POST',
	"https://localhost:$edge->{port}{down}/v1/table/events/flush_lsm/");
like($curl, qr/^HTTP\/2 502.*^retry-after: 7\r?$/ms,
	'the edge answers 502 with Retry-After: 7 when the upstream is down');
emu_reset();
$s = fresh();
($out, $st, $err, @log) = through($s, sprintf($FLUSH, 'down'));
is("$st|" . scalar(@log), 'HV000|1', '502 HTML page: HV000 after one request, not retried');
like($err, qr/HTTP status 502 with a body that is not a JSON error: "<html><body><h1>502 edge page/,
	'502: the detail quotes the page');

emu('POST', '/_emulator/faults',
	{ table => 'events', route => 'flush_lsm', action => 'hang', max_ms => 3000 });
($out, $st, $err, @log) = through($s, sprintf($FLUSH, 'edge'));
is("$st|" . join(' ', map { (split)[3] } @log), 'HV000|504',
	'504 HTML page (upstream silent past proxy_read_timeout): HV000 after one request');
like($err, qr/HTTP status 504 with a body that is not a JSON error/, '504: the detail says so');

#
# 6. the edge closes idle connections (keepalive_timeout 1s)
#
for my $srv ('edgeidle', 'edgeidle11')
{
	emu_reset();
	($s, my $spid) = open_session($node);
	$s->query_safe("SET statement_timeout = '5s'");
	my ($o1, $st1) = through($s, sprintf($FLUSH, $srv));
	ok(wait_peer_closed($spid, $edge->{port}{idle}),
		"$srv: the edge closed the idle connection");
	my ($o2, $st2, $e2, @l2) = through($s, sprintf($FLUSH, $srv));
	is("$st1|$st2|" . emu_counts()->{flush_lsm}, '||2',
		"$srv: after the edge closed the idle connection the next flush succeeds, sent once")
	  or diag($e2);
	is(join(' ', map { (split)[1] } @l2), '1', "$srv: on a new connection");
}

#
# 7. certificates and TLS versions the client refuses
#
emu_reset();
$s = fresh();
for my $c ([ 'wrong', qr/subject name|does not match|no alternative/i,
		'a certificate for another host name' ],
	[ 'expired', qr/expired/i, 'an expired certificate' ],
	[ 'tls11', qr/protocol|version|alert/i, 'an edge offering TLS 1.1 only' ])
{
	my ($srv, $why, $what) = @$c;

	($out, $st, $err, @log) = through($s, sprintf($FLUSH, $srv));
	is("$st|" . scalar(@log), 'HV00N|0', "$what: HV00N, no request served");
	like($err, $why, "$what: the detail gives libcurl's reason");
}
is(emu_counts()->{total}, 0, 'no refused TLS connection reached the emulator');

done_testing();
