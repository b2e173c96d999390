# net_by_name.pl: requests to a server reached by a host name, as every
# LanceDB Cloud URL is.
#
# A name goes through getaddrinfo, in 1.4 on libcurl's resolver thread,
# which hands the multi handle one end of a socketpair to watch and then
# closes it itself, not through lancelsm's close-socket callback; since
# 1.5 in src/net/lookup.c, whose addresses libcurl takes as they are.
# Either way the connection's socket may get a descriptor number libcurl
# handed over before: the wait set kept by src/net/pool.c must not take it
# for what it saw before.
#  1. 200 fresh sessions (a new backend each) make their first request by
#     name: 200 answers, no error or warning of any kind, and exactly 200
#     stats reads reach the emulator.
#  2. One lancelsm_checkpoint over 1,000 tables by name, in a fresh
#     session: 1,000 rows, every one ok, after exactly one flush and one
#     stats read per table.
# The name resolves where scripts/with-names.sh runs the suite (the test
# command does); elsewhere the test skips, unless LANCELSM_REQUIRE_NAMES is
# set: then it bails out.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $NAME = 'emulator.lancelsm.test';
my $SESSIONS = 200;
my $TABLES = 1000;

skip_without_name($NAME, '127.0.0.1');

my @tables = map { sprintf('t%04d', $_) } 1 .. $TABLES;
my $emu = start_extra_emulator(
	args => [ '--quiet', map { ('--table', "$_:1") } @tables ]);
my $node = setup_node('by_name', $emu->{port});
$node->safe_psql('postgres', qq{
	ALTER SERVER emu OPTIONS (SET host_override 'http://$NAME:$emu->{port}');
});

#
# 1. the first request of 200 fresh sessions, by name
#
# \connect opens a new connection, so each statement runs in a backend of
# its own, whose first request resolves the name
my $script = join('', map {
	"\\connect postgres\n"
	  . "SELECT pg_backend_pid(), (SELECT backend_start FROM pg_stat_activity "
	  . "WHERE pid = pg_backend_pid()), (SELECT count(*) FROM "
	  . "lancelsm_stats('emu', 'events'));\n"
} 1 .. $SESSIONS);
my ($rc, $out, $err) = $node->psql('postgres', $script, on_error_stop => 0,
	extra_params => [ '-v', 'VERBOSITY=verbose' ], timeout => 120);
my @rows = split /\n/, $out;
my %backends = map { /^(\d+\|.+)\|(\d+)$/ ? ($1 => $2) : () } @rows;
my @errors = $err =~ /^.*(?:ERROR|FATAL|WARNING).*$/mg;

is(scalar(@errors), 0, "$SESSIONS sessions by name: no error")
  or diag(scalar(@errors) . " errors, the first: $errors[0]");
is($err, '', "$SESSIONS sessions by name: nothing on stderr");
is(scalar(@rows), $SESSIONS, "$SESSIONS sessions by name: $SESSIONS answers");
is(scalar(keys %backends), $SESSIONS,
	"$SESSIONS sessions by name: each in a backend of its own");
is(scalar(grep { $_ != 1 } values %backends), 0,
	"$SESSIONS sessions by name: each read the one bucket");
my $counts = emu_at($emu, 'GET', '/_emulator/counts?table=events');
is($counts->{get_lsm_stats}, $SESSIONS,
	"$SESSIONS sessions by name: exactly $SESSIONS stats reads");
is($counts->{total}, $SESSIONS,
	"$SESSIONS sessions by name: no other request");

#
# 2. one call over 1,000 tables by name, in a fresh session
#
my $array = join(',', map { "'$_'" } @tables);
($rc, $out, $err) = $node->psql('postgres', qq{
	SELECT count(*), count(*) FILTER (WHERE ok),
	  count(*) FILTER (WHERE sqlstate IS NULL AND message IS NULL),
	  min(sqlstate || ' ' || message)
	FROM lancelsm_checkpoint('emu', ARRAY[$array]);
}, extra_params => [ '-v', 'VERBOSITY=verbose' ], timeout => 120);
is("$out|$err", "$TABLES|$TABLES|$TABLES||",
	"$TABLES tables by name: $TABLES rows, every one ok");

# an idle table's checkpoint: one flush, one stats read (the watermark)
$counts = emu_at($emu, 'GET', '/_emulator/counts');
is( "$counts->{flush_lsm} $counts->{get_lsm_stats} $counts->{compact_lsm}",
	"$TABLES " . ($TABLES + $SESSIONS) . ' 0',
	"$TABLES tables by name: one flush and one stats read each");
$node->stop;
done_testing();
