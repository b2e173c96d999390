# net_lookup_bound.pl: a backend never has more than
# lancelsm.max_name_lookups (16) name lookups pending, those that a
# canceled statement left behind included, however many statements time
# out while a DNS server stays silent (src/net/lookup.c).
#
# Needs the resolver of scripts/with-names.sh: its silent.lancelsm.test
# zone is never answered.  Skipped without it, unless
# LANCELSM_REQUIRE_NAMES is set (the test command sets it): then it bails
# out.  The backends' resolver waits 20 s for a silent server
# (RES_OPTIONS), so a lookup left behind stays pending for the whole test:
# the bound is met and kept.
#
#  1. at the bound: 16 statements with a 500 ms statement_timeout (long
#     enough for each to start its lookup on a loaded machine), each
#     to another silent name, leave exactly 16 lookups: 17 threads in the
#     backend, at most 3 descriptors more per lookup; a 17th name without
#     statement_timeout waits connect_timeout (1 s) for a slot and fails
#     with HV00N naming the host and the bound; a name pending already is
#     waited for, not looked up again (57014, no new thread); an address
#     needs no lookup (the flush succeeds at once); a name that resolves
#     gets the 17th slot once lancelsm.max_name_lookups allows 17;
#     with lancelsm.max_cluster_name_lookups lowered to 20, a second
#     session gets 4 lookups and its 5th name fails naming that bound; once
#     the first session's backend is gone, its slots are free again;
#  2. 200 statements with a 30 ms statement_timeout over 20 silent names,
#     from one session: each is 57014; the backend never holds more than
#     17 threads nor 48 descriptors more than before (besides what its
#     new pools hold, measured on a pool that never connected);
#  3. the same from 4 sessions at once, 200 statements each;
#  4. through a proxy, the proxy's name is looked up (bounded alike),
#     never the server's, which the proxy resolves: a proxy at an address
#     needs no lookup (HV00N, the proxy refusing, no thread), a proxy by a
#     silent name leaves one lookup of that name; the DNS servers never
#     hear of either server's name; a name lancelsm.allowed_endpoints
#     refuses is not looked up at all (42501); without statement_timeout, a silent
#     name fails at connect_timeout with HV00N saying so;
#  5. a new session still connects and flushes.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

for my $var (qw(LANCELSM_TEST_DNS LANCELSM_TEST_DNS_FAULTS_LOG))
{
	next if $ENV{$var};
	my $why = "$var is not set: run the suite under scripts/with-names.sh";
	BAIL_OUT($why) if $ENV{LANCELSM_REQUIRE_NAMES};
	plan skip_all => $why;
}

my $BOUND = 16;
my $NAMES = 20;

$ENV{RES_OPTIONS} = 'timeout:20 attempts:1';
my $port = start_emulator();
my $node = setup_node_conf('lookup_bound', $port);
my $sql = '';
for my $i (1 .. $NAMES + 1)
{
	$sql .= qq{
		CREATE SERVER silent$i FOREIGN DATA WRAPPER lancelsm
		  OPTIONS (database 'mydb', connect_timeout '1',
			host_override 'http://h$i.silent.lancelsm.test:$port');
		CREATE USER MAPPING FOR PUBLIC SERVER silent$i
		  OPTIONS (api_key '$API_KEY');};
}
$sql .= qq{
	CREATE SERVER closed FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:1');
	CREATE USER MAPPING FOR PUBLIC SERVER closed OPTIONS (api_key '$API_KEY');
	CREATE SERVER byname FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://emulator.lancelsm.test:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER byname OPTIONS (api_key '$API_KEY');};
$node->safe_psql('postgres', $sql);
is($node->safe_psql('postgres', 'LOAD \'lancelsm\'; SHOW lancelsm.max_name_lookups'),
	$BOUND, "lancelsm.max_name_lookups is $BOUND by default");

my $FLUSH = "SELECT lancelsm_flush('%s', 'events')";

# proc_count: the entries of /proc/$pid/$dir: tasks (the threads) or fd
# (the open descriptors) of backend $pid
sub proc_count
{
	my ($pid, $dir) = @_;
	opendir(my $dh, "/proc/$pid/$dir") or die "cannot read /proc/$pid/$dir: $!";
	my $n = grep { /^\d+$/ } readdir($dh);
	closedir($dh);
	return $n;
}

sub tasks { return proc_count($_[0], 'task'); }
sub fds { return proc_count($_[0], 'fd'); }

# session: a new session with statement_timeout $timeout, which has
# flushed once through the emulator's address (its pool open) and once
# through a closed port (a pool without a connection); returns ($session,
# $pid, its descriptors then, the descriptors one such pool holds: none
# with libcurl 7.88, its wake-up descriptors with some later libcurl)
sub session
{
	my ($timeout) = @_;
	my ($s, $pid) = open_session($node);

	$s->query_safe(sprintf($FLUSH, 'emu'));
	my $before = fds($pid);
	my ($ms, $out, $err) = timed_query($s, sprintf($FLUSH, 'closed'));
	die "a closed port: $err" unless sqlstate_of($err) eq 'HV00N';
	my $after = fds($pid);
	$s->query_safe("SET statement_timeout = '$timeout'");
	return ($s, $pid, $after, $after - $before);
}

#
# 1. at the bound
#
my ($s, $pid, $fds0, $per_pool) = session('500ms');
is(tasks($pid), 1, 'a backend starts with one thread');
my @states;
for my $i (1 .. $BOUND)
{
	my ($ms, $out, $err) = timed_query($s, sprintf($FLUSH, "silent$i"));
	push @states, sqlstate_of($err);
}
is(join(',', @states), join(',', ('57014') x $BOUND),
	"$BOUND statements to $BOUND silent names: each is 57014");
is(tasks($pid), 1 + $BOUND, "$BOUND lookups left pending: 1 + $BOUND threads");
cmp_ok(fds($pid) - $fds0 - $BOUND * $per_pool, '<=', 3 * $BOUND,
	'at most 3 more descriptors per pending lookup (and those of its pool)');

$s->query_safe("SET statement_timeout = 0");
my $t0 = time();
my ($ms, $out, $err) = timed_query($s, sprintf($FLUSH, 'silent' . ($NAMES + 1)));
is(sqlstate_of($err), 'HV00N', 'a name at the bound: HV00N after connect_timeout');
like($err,
	qr/DETAIL:  Could not reach the server: Could not resolve host: h21\.silent\.lancelsm\.test \(16 name lookups of this backend are pending, as many as lancelsm\.max_name_lookups allows\)\./,
	'a name at the bound: the detail names the host and the bound');
cmp_ok($ms, '>=', 900, sprintf('it waited connect_timeout for a slot (%.0f ms)', $ms));
is(tasks($pid), 1 + $BOUND, 'a name at the bound starts no thread');

$s->query_safe("SET statement_timeout = '500ms'");
($ms, $out, $err) = timed_query($s, sprintf($FLUSH, 'silent1'));
is(sqlstate_of($err), '57014', 'a name pending already: waited for, 57014');
is(tasks($pid), 1 + $BOUND, 'a name pending already is not looked up again');
$s->query_safe("SET statement_timeout = '60s'");
($ms, $out, $err) = timed_query($s, sprintf($FLUSH, 'emu'));
is(sqlstate_of($err), '', 'an address literal needs no lookup: the flush succeeds')
  or diag($err);
$s->query_safe('SET lancelsm.max_name_lookups = ' . ($BOUND + 1));
($ms, $out, $err) = timed_query($s, sprintf($FLUSH, 'byname'));
is(sqlstate_of($err), '', 'a 17th slot allowed: a name that resolves gets it')
  or diag($err);

# the cluster's bound, lowered to 20: 16 pending in the first session, 4
# more in a second, whose 5th name waits connect_timeout and fails; once
# the first session's backend is gone, its 16 slots are free again
$node->safe_psql('postgres',
	'ALTER SYSTEM SET lancelsm.max_cluster_name_lookups = 20; SELECT pg_reload_conf()');
my ($s2, $pid2) = session('500ms');
is(query_until($s2, 'SHOW lancelsm.max_cluster_name_lookups', '20'), '20',
	'the cluster bound is 20');
@states = ();
for my $i ($BOUND + 1 .. $NAMES)
{
	($ms, $out, $err) = timed_query($s2, sprintf($FLUSH, "silent$i"));
	push @states, sqlstate_of($err);
}
is(join(',', @states), '57014,57014,57014,57014',
	'a second session: 4 more lookups left pending');
$s2->query_safe("SET statement_timeout = 0");
($ms, $out, $err) = timed_query($s2, sprintf($FLUSH, 'silent' . ($NAMES + 1)));
like($err,
	qr/ERROR:  HV00N: .*\nDETAIL:  Could not reach the server: Could not resolve host: h21\.silent\.lancelsm\.test \(20 name lookups are pending in the cluster, as many as lancelsm\.max_cluster_name_lookups allows\)\./,
	"at the cluster's bound: HV00N naming the host and the bound");
is(tasks($pid2), 1 + 4, "at the cluster's bound: no thread started");
$s->quit;
is(query_until($s2,
		"SELECT count(*) FROM pg_stat_activity WHERE pid = $pid", '0'),
	'0', 'the first session has ended');
$s2->query_safe("SET statement_timeout = '500ms'");
($ms, $out, $err) = timed_query($s2, sprintf($FLUSH, 'silent1'));
is(sqlstate_of($err), '57014', 'an ended backend gives its slots back: 57014');
is(tasks($pid2), 1 + 5, 'an ended backend gives its slots back: a new lookup');
$s2->quit;
$node->safe_psql('postgres',
	'ALTER SYSTEM RESET lancelsm.max_cluster_name_lookups; SELECT pg_reload_conf()');

#
# 2. and 3. 200 statements of 30 ms over the silent names, from one
#    session, then from 4 at once
#
# storm: 200 statements per session of @sessions, sent in turn, each to
# the next silent name; returns (their SQLSTATEs joined, the most threads
# and the most descriptors over baseline any backend showed)
sub storm
{
	my (@sessions) = @_;
	my (%states, $max_tasks, $max_fds);

	($max_tasks, $max_fds) = (0, 0);
	for my $k (0 .. 199)
	{
		my @banners = map {
			send_query($_->{s},
				sprintf($FLUSH, 'silent' . (1 + ($k + $_->{n}) % $NAMES)))
		} @sessions;
		for my $i (0 .. $#sessions)
		{
			my $x = $sessions[$i];
			my ($o, $e) = finish_query($x->{s}, $banners[$i]);
			$states{ sqlstate_of($e) }++;
			my $t = tasks($x->{pid});
			my $f = fds($x->{pid}) - $x->{fds0} - $NAMES * $x->{per_pool};
			$max_tasks = $t if $t > $max_tasks;
			$max_fds = $f if $f > $max_fds;
		}
	}
	return (join(',', map { "$_=$states{$_}" } sort keys %states),
		$max_tasks, $max_fds);
}

for my $n (1, 4)
{
	my @sessions;
	for my $i (1 .. $n)
	{
		my ($x, $p, $f, $pp) = session('30ms');
		push @sessions,
		  { s => $x, pid => $p, fds0 => $f, per_pool => $pp, n => 5 * $i };
	}
	my ($states, $max_tasks, $max_fds) = storm(@sessions);
	is($states, '57014=' . (200 * $n),
		"$n session(s), 200 statements each: every one is 57014");
	is($max_tasks, 1 + $BOUND,
		"$n session(s): a backend holds at most 1 + $BOUND threads, and reached it");
	cmp_ok($max_fds, '<=', 3 * $BOUND,
		"$n session(s): a backend holds at most " . (3 * $BOUND)
		  . " descriptors more than before, its pools' aside ($max_fds)");
	$_->{s}->quit for @sessions;
}

#
# 4. through a proxy, only the proxy's name is looked up
#
my $faults_log = $ENV{LANCELSM_TEST_DNS_FAULTS_LOG};
$node->safe_psql('postgres', qq{
	CREATE SERVER viaproxy FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'https://target1.silent.lancelsm.test',
		proxy 'http://127.0.0.1:1');
	CREATE USER MAPPING FOR PUBLIC SERVER viaproxy OPTIONS (api_key '$API_KEY');
	CREATE SERVER namedproxy FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'https://target2.silent.lancelsm.test',
		proxy 'http://proxy.silent.lancelsm.test:3128');
	CREATE USER MAPPING FOR PUBLIC SERVER namedproxy OPTIONS (api_key '$API_KEY');
	CREATE SERVER refused FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://refused.silent.lancelsm.test:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER refused OPTIONS (api_key '$API_KEY');
});
($s, $pid) = open_session($node);
$s->query_safe("SET statement_timeout = '10s'");
($ms, $out, $err) = timed_query($s, sprintf($FLUSH, 'viaproxy'));
is(sqlstate_of($err), 'HV00N', 'a proxy at an address that refuses: HV00N');
is(tasks($pid), 1, 'a proxy at an address: no lookup');
$s->query_safe("SET statement_timeout = '500ms'");
($ms, $out, $err) = timed_query($s, sprintf($FLUSH, 'namedproxy'));
is(sqlstate_of($err), '57014', 'a proxy by a silent name: 57014');
is(tasks($pid), 2, "a proxy by a silent name: one lookup pending, the proxy's");
my $until = time() + 10;
sleep(0.01)
  while slurp_file($faults_log) !~ /^silent proxy\.silent\.lancelsm\.test$/m
  && time() < $until;
like(slurp_file($faults_log), qr/^silent proxy\.silent\.lancelsm\.test$/m,
	"the proxy's name was looked up");
unlike(slurp_file($faults_log), qr/target[12]\.silent/,
	"no server's name behind a proxy was looked up");

# a name lancelsm.allowed_endpoints refuses is not looked up at all
$s->query_safe("SET statement_timeout = '10s'");
$s->query_safe("SET lancelsm.allowed_endpoints = 'lancedb.example'");
($ms, $out, $err) = timed_query($s, sprintf($FLUSH, 'refused'));
like($err, qr/ERROR:  42501: .*\nDETAIL:  The endpoint refused\.silent\.lancelsm\.test:$port is not allowed by lancelsm\.allowed_endpoints\./,
	'a name the allow-list refuses: 42501 naming the endpoint');
is(tasks($pid), 2, 'a name the allow-list refuses: no lookup');
unlike(slurp_file($faults_log), qr/refused\.silent/,
	'a name the allow-list refuses never reaches a DNS server');
$s->query_safe("RESET lancelsm.allowed_endpoints");

# without statement_timeout, connect_timeout (1 s) bounds the lookup
$s->query_safe("SET statement_timeout = 0");
($ms, $out, $err) = timed_query($s, sprintf($FLUSH, 'silent1'));
like($err,
	qr/ERROR:  HV00N: .*\nDETAIL:  Could not reach the server: Could not resolve host: h1\.silent\.lancelsm\.test \(no answer within 1000 milliseconds\)\./,
	'a silent name without statement_timeout: HV00N after connect_timeout');
$s->quit;

#
# 5. a new session still connects and flushes
#
($s, $pid) = open_session($node);
($ms, $out, $err) = timed_query($s, sprintf($FLUSH, 'emu'));
is(sqlstate_of($err), '', 'afterwards a new session connects and flushes')
  or diag($err);
$s->quit;

done_testing();
