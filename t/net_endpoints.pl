# net_endpoints.pl: descriptors and the endpoint allow-list.
#
#  - Pool sockets are reserved through PostgreSQL's external-FD accounting:
#    with max_files_per_process low, one statement over 40 servers (40
#    pools, 40 connections at once) gets exactly the connections the
#    accounting allows and the rest fail as rows with 53400 and a fixed
#    message, never behind PostgreSQL's back; once those pools are gone
#    (DROP SERVER), their descriptors are released and every table answers
#    again.
#  - lancelsm.allowed_endpoints: superuser-set; empty allows everything;
#    a host[:port] entry allows the servers it names; an address range is
#    checked against the address actually connected to (the name
#    "localhost" resolves to both 127.0.0.1 and ::1, and a range allows one
#    and refuses the other); a refused request fails with 42501 naming the
#    endpoint and reaches no server; the validator refuses a server whose
#    endpoint no entry can allow.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $NSERVERS = 40;
my $port = start_emulator();
# one emulator listening on both 127.0.0.1 and ::1
my $dual = start_extra_emulator(args => [ '--host', '::' ]);
my $node = PostgreSQL::Test::Cluster->new('endpoints');
$node->init;
# the lowest that still starts: about a third of what is left is external
# (debug2 at start: the postmaster logs the max_safe_fds it computed)
$node->append_conf('postgresql.conf',
	"max_files_per_process = 70\nlog_min_messages = debug2\n");
$node->start;
my ($max_safe_fds) = slurp_file($node->logfile) =~ /max_safe_fds = (\d+)/;
$node->append_conf('postgresql.conf', "log_min_messages = warning\n");
$node->reload;
# max_safe_fds depends on the descriptors the postmaster inherited, so the
# number of sockets is computed from it: AcquireExternalFD allows
# max_safe_fds / 3 external descriptors per backend; a backend holds 5
# before any socket (the postmaster-death pipe's two ends, the client
# socket, its wait set's epoll descriptor and the latch's signalfd), and
# lancelsm keeps one free for the wait set on its sockets (src/net/socket.c)
my $SOCKETS = int($max_safe_fds / 3) - 5 - 1;
install_lancelsm($node, $port);

# try: run $sql; returns "ok: <output>" or "<SQLSTATE>: <stderr>"
sub try
{
	my ($sql) = @_;
	my ($rc, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nLOAD 'lancelsm';\n$sql",
		on_error_stop => 1);
	return "ok: $out" if $rc == 0;
	return sqlstate_of($err) . ": $err";
}

sub dual_flushes
{
	return emu_at($dual, 'GET', '/_emulator/counts?table=events')
	  ->{flush_lsm} // 0;
}

# --- descriptors
my $setup = '';
for my $i (1 .. $NSERVERS)
{
	$setup .= qq{
		CREATE SERVER fd$i FOREIGN DATA WRAPPER lancelsm
		  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
		CREATE USER MAPPING FOR PUBLIC SERVER fd$i
		  OPTIONS (api_key '$LsmTap::API_KEY');
		SELECT lancelsm_add_table('fd$i', 'events', validate => false);
	};
}
$node->safe_psql('postgres', $setup);
my $rows = $node->safe_psql('postgres', q{
	SELECT coalesce(error_sqlstate, 'ok'),
	       regexp_replace(error, ' Request ID: .*', ''), count(*)
	  FROM lancelsm_table_stats GROUP BY 1, 2 ORDER BY 1});
my %by = map { my @f = split /\|/; ($f[0] => [ $f[1], $f[2] ]) }
  split /\n/, $rows;
my $ok = $by{ok} ? $by{ok}[1] : 0;
my $refused = $by{53400} ? $by{53400}[1] : 0;
note "of $NSERVERS tables: $ok answered, $refused refused; max_safe_fds $max_safe_fds";
cmp_ok($SOCKETS, '>=', 1, 'the budget allows a socket or more');
is($ok, $SOCKETS,
	'as many tables answered as the external-FD budget has sockets');
is($refused, $NSERVERS - $SOCKETS, 'every other table was refused a descriptor');
is($by{53400} ? $by{53400}[0] : '',
	'could not read the LSM statistics of LanceDB table "events": The backend has no file descriptor left for another connection.',
	'the refusal is 53400 with a fixed message');
# the pools of the dropped servers close, releasing their descriptors
my $drop = join('', map { "DROP SERVER fd$_ CASCADE;" } 11 .. $NSERVERS);
$drop .= "DELETE FROM lancelsm_table WHERE server NOT IN ('fd1','fd2','fd3','fd4','fd5','fd6','fd7','fd8','fd9','fd10');";
is($node->safe_psql('postgres', "SET client_min_messages = warning; $drop
	SELECT count(*) FILTER (WHERE error IS NULL), count(*) FROM lancelsm_table_stats"),
	'10|10', 'after the drop, every remaining table answers');
$node->safe_psql('postgres',
	join('', map { "DROP SERVER fd$_ CASCADE;" } 1 .. 10)
	  . 'DELETE FROM lancelsm_table;');

# --- the allow-list
my $FLUSH = "SELECT count(*) FROM (SELECT lancelsm_flush('emu', 'events')) f";
$node->safe_psql('postgres', qq{
	CREATE SERVER loc FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://localhost:$dual->{port}');
	CREATE USER MAPPING FOR PUBLIC SERVER loc OPTIONS (api_key '$LsmTap::API_KEY');
	CREATE ROLE plain LOGIN;
});
is($node->safe_psql('postgres', "LOAD 'lancelsm'; SHOW lancelsm.allowed_endpoints"),
	'', 'empty by default');
like(try("SET ROLE plain; SET lancelsm.allowed_endpoints = '10.0.0.0/8'"),
	qr/^42501: .*ERROR:  42501: permission denied to set parameter "lancelsm.allowed_endpoints"/,
	'only a superuser sets it');
like(try("SET lancelsm.allowed_endpoints = '127.0.0.1/40'"),
	qr/^22023: .*invalid value for parameter "lancelsm.allowed_endpoints": "127.0.0.1\/40"\nDETAIL:  Entry "127.0.0.1\/40" is neither host\[:port\] nor an address range/s,
	'an invalid range is refused');

emu_reset();
is(try("SET lancelsm.allowed_endpoints = '127.0.0.1:$port'; $FLUSH"),
	"ok: 1", 'a host entry with its port allows the server');
like(try("SET lancelsm.allowed_endpoints = '127.0.0.1:1'; $FLUSH"),
	qr/^42501: .*ERROR:  42501: could not flush LanceDB table "events"\nDETAIL:  The endpoint 127.0.0.1:$port is not allowed by lancelsm.allowed_endpoints.\nHINT:  A superuser can allow the endpoint in lancelsm.allowed_endpoints./,
	'another port of the same host is refused, with no request id: none was sent');
is(try("SET lancelsm.allowed_endpoints = '127.0.0.0/8, ::1'; $FLUSH"),
	"ok: 1", 'a range holding the address literal allows it');
like(try("SET lancelsm.allowed_endpoints = '::1/128'; $FLUSH"),
	qr/^42501: .*The endpoint 127.0.0.1:$port is not allowed/s,
	'a range not holding it refuses it');
is(emu_counts()->{flush_lsm}, 2, 'refused flushes never reached the server');

# a name: the range is checked against the address connected to
is(try("SET lancelsm.allowed_endpoints = '127.0.0.1/32'; SELECT count(*) FROM (SELECT lancelsm_flush('loc', 'events')) f"),
	'ok: 1', 'localhost allowed at 127.0.0.1');
is(try("SET lancelsm.allowed_endpoints = '::1/128'; SELECT count(*) FROM (SELECT lancelsm_flush('loc', 'events')) f"),
	'ok: 1', 'localhost allowed at ::1');
is(dual_flushes(), 2, 'both reached the server');
like(try("SET lancelsm.allowed_endpoints = '10.0.0.0/8'; SELECT count(*) FROM (SELECT lancelsm_flush('loc', 'events')) f"),
	qr/^42501: .*The endpoint (127\.0\.0\.1|\[::1\]):$dual->{port} is not allowed/s,
	'localhost refused at every address outside the range');
is(try("SET lancelsm.allowed_endpoints = 'LocalHost'; SELECT count(*) FROM (SELECT lancelsm_flush('loc', 'events')) f"),
	'ok: 1', 'a host entry names it whatever it resolves to');
is(dual_flushes(), 3, 'the refused flush never reached the server');

# the validator
like(try("SET lancelsm.allowed_endpoints = 'db.example.com:443';
	CREATE SERVER bad FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:1')"),
	qr/^42501: .*ERROR:  42501: endpoint "127.0.0.1:1" is not allowed by lancelsm.allowed_endpoints/,
	'the validator refuses a server no entry allows');
is(try("SET lancelsm.allowed_endpoints = 'db.example.com:443, 127.0.0.0/8';
	CREATE SERVER good FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://localhost:1'); DROP SERVER good"),
	'ok: ', 'a name a range may allow is accepted, to be checked at its address');

done_testing();
