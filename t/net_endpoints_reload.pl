# net_endpoints_reload.pl: a reload that changes lancelsm.allowed_endpoints
# applies at once to the sessions already open.
#
# A session's pooled connection was checked against the list in force when
# it opened.  A server reached by a name that an address range allows is
# checked at the address connected to, and a reused connection connects
# nowhere: before 1.4 an old session still sent its next request, with its
# API key, over such a connection after the reload had tightened the list.
# Now a change of the list marks every pool of the backend to be closed
# before its next request, which then connects afresh and is checked.
#  1. a CIDR entry: '127.0.0.0/8' tightened to '10.0.0.0/8'; then a name
#     entry beside a range ('lancedb.example, 10.0.0.0/8');
#  2. a name entry: 'localhost' tightened to 'lancedb.example:443' (a
#     name no entry allows any more: refused by name);
# each time the old session's pool is listed as no longer valid
# (lancelsm_get_connections), its flush fails with 42501 naming the
# endpoint, and exactly 0 requests and 0 new connections reach the
# emulator.
#  3. a reload that leaves the list as it was keeps the connection: the
#     next flush is sent on it (no new connection).
# The server is http://localhost:PORT: a name (libcurl resolves it
# itself), allowed by a range only at the address connected to.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $port = start_emulator();
my $node = setup_node('connections', $port);
$node->safe_psql('postgres', qq{
	CREATE SERVER loc FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://localhost:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER loc OPTIONS (api_key '$LsmTap::API_KEY');
});

my $FLUSH = "SELECT count(*) FROM (SELECT lancelsm_flush('loc', 'events')) f";
my $POOLS = 'SELECT server_name, connections, valid FROM lancelsm_get_connections()';

# allow: set lancelsm.allowed_endpoints in postgresql.conf and reload;
# then wait until session $s has taken the new value (a backend reads a
# reload before its next statement)
sub allow
{
	my ($s, $list) = @_;

	$node->append_conf('postgresql.conf',
		"lancelsm.allowed_endpoints = '$list'\n");
	$node->reload;
	is(query_until($s, 'SHOW lancelsm.allowed_endpoints', $list), $list,
		"the old session took '$list'");
}

# tightened: open a session under $before, flush once (one connection),
# reload with $after; the old session's pool is invalid, its flush is
# refused with 42501 naming the endpoint, and nothing reaches the emulator
sub tightened
{
	my ($before, $after, $what) = @_;

	$node->append_conf('postgresql.conf',
		"lancelsm.allowed_endpoints = '$before'\n");
	$node->reload;
	my ($s) = open_session($node);
	$s->query_safe("LOAD 'lancelsm'");
	query_until($s, 'SHOW lancelsm.allowed_endpoints', $before);
	emu_reset();
	my (undef, $out, $err) = timed_query($s, $FLUSH);
	is("$out|" . sqlstate_of($err), '1|', "$what: the flush under '$before' succeeds")
	  or diag($err);
	is($s->query_safe($POOLS), 'loc|1|t', "$what: one pooled connection");
	is(emu_counts()->{connections}, 1, "$what: the emulator saw one connection");

	allow($s, $after);
	is($s->query_safe($POOLS), 'loc|1|f',
		"$what: after the reload the old session's pool is no longer valid");
	(undef, $out, $err) = timed_query($s, $FLUSH);
	is(sqlstate_of($err), '42501', "$what: the old session's flush is refused");
	like($err,
		qr/could not flush LanceDB table "events"\nDETAIL:  The endpoint (127\.0\.0\.1|\[::1\]|localhost):$port is not allowed by lancelsm.allowed_endpoints\./,
		"$what: the error names the endpoint");
	my $c = emu_counts();
	is("$c->{flush_lsm}|$c->{total}|$c->{connections}", '1|1|1',
		"$what: 0 requests and 0 connections reached the emulator after the reload");
	is($s->query_safe($POOLS), 'loc|0|t',
		"$what: the old pool is closed, the new one holds no connection");
	$s->quit;
}

#
# 1. CIDR entries
#
tightened('127.0.0.0/8', '10.0.0.0/8', 'a range tightened');
tightened('127.0.0.0/8', 'lancedb.example, 10.0.0.0/8',
	'a name entry and a range');

#
# 2. a name entry
#
tightened('localhost', 'lancedb.example:443', 'a name entry tightened');

#
# 3. a reload that does not change the list keeps the connection
#
$node->append_conf('postgresql.conf',
	"lancelsm.allowed_endpoints = '127.0.0.0/8, ::1'\n");
$node->reload;
my ($s) = open_session($node);
$s->query_safe("LOAD 'lancelsm'");
query_until($s, 'SHOW lancelsm.allowed_endpoints', '127.0.0.0/8, ::1');
emu_reset();
my (undef, $out, $err) = timed_query($s, $FLUSH);
is("$out|" . sqlstate_of($err), '1|', 'unchanged: the first flush succeeds');
# the same entries, spelt differently: a change of the text only
allow($s, '127.0.0.0/8 ,  ::1');
is($s->query_safe($POOLS), 'loc|1|t', 'unchanged: the pool stays valid');
(undef, $out, $err) = timed_query($s, $FLUSH);
my $c = emu_counts();
is("$out|" . sqlstate_of($err) . "|$c->{flush_lsm}|$c->{connections}", '1||2|1',
	'unchanged: the next flush is sent on the same connection');
$s->quit;

done_testing();
