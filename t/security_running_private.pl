# security_running_private.pl: lancelsm_running() and lancelsm_status
# show a role only its own running checkpoints, as pg_stat_activity shows
# a role only its own backends' queries; members of pg_read_all_stats and
# superusers see all of them.
#
# alice checkpoints "events" on server emu; bob checkpoints
# "payroll_q4_merger" on server priv, which only he may use; both wait on
# a pinned compaction latch.  Then, from sessions of their own:
#  - alice sees exactly her row, bob exactly his, mallory (no grants) none;
#  - carol, a member of pg_read_all_stats, and the superuser see both;
#  - in lancelsm_status (both tables declared), each sees the running
#    columns of their own table only.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $port = start_emulator();
my $node = setup_node_conf('running_private', $port,
	"lancelsm.poll_interval_min = '20ms'\nlancelsm.poll_interval_max = '100ms'\n");
$node->safe_psql('postgres', qq{
	CREATE ROLE alice LOGIN;
	CREATE ROLE bob LOGIN;
	CREATE ROLE carol LOGIN IN ROLE pg_read_all_stats;
	CREATE ROLE mallory LOGIN;
	GRANT USAGE ON FOREIGN SERVER emu TO alice;
	CREATE SERVER priv FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	GRANT USAGE ON FOREIGN SERVER priv TO bob;
	CREATE USER MAPPING FOR bob SERVER priv OPTIONS (api_key '$API_KEY');
	SELECT lancelsm_add_table('emu', 'events', validate => false);
	SELECT lancelsm_add_table('priv', 'payroll_q4_merger', validate => false);
});

# session_as: a session of role $role; returns ($session, $pid)
sub session_as
{
	my ($role) = @_;
	my $s = $node->background_psql('postgres', on_error_stop => 0,
		timeout => 30, extra_params => [ '-U', $role ]);

	$s->query_safe('\set VERBOSITY verbose');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	chomp $pid;
	return ($s, $pid);
}

# pin: hold or release the compaction latch of bucket b0 of a table
sub pin
{
	my ($table, $held) = @_;
	emu('POST', "/_emulator/tables/$table/latch",
		{ bucket => 'b0', held => $held ? JSON::PP::true : JSON::PP::false });
}

emu_reset();
emu_table('payroll_q4_merger', 2);
emu('POST', '/_emulator/tables/events/generations', { count => 2 });
pin('events', 1);
pin('payroll_q4_merger', 1);
my ($sa, $alice_pid) = session_as('alice');
my ($sb, $bob_pid) = session_as('bob');
my $ta = send_query($sa, "SELECT ok FROM lancelsm_checkpoint('emu', ARRAY['events'])");
my $tb = send_query($sb,
	"SELECT ok FROM lancelsm_checkpoint('priv', ARRAY['payroll_q4_merger'])");

# one row whatever runs ('none' when nothing does): PostgreSQL 16's
# BackgroundPsql cannot tell an empty answer from its own separator
my $RUNNING = q{SELECT coalesce(string_agg(server || '|' || table_name || '|' || pid,
	E'\n' ORDER BY server COLLATE "C"), 'none') FROM lancelsm_running()};
my $STATUS = q{SELECT server, table_name, running_pid IS NOT NULL,
	running_phase IS NOT NULL FROM lancelsm_status ORDER BY server COLLATE "C"};
my $both = "emu|events|$alice_pid\npriv|payroll_q4_merger|$bob_pid";
my ($super) = open_session($node);
is(query_until($super, $RUNNING, $both), $both,
	'the superuser sees both running checkpoints');

my %sees = (
	alice => "emu|events|$alice_pid",
	bob => "priv|payroll_q4_merger|$bob_pid",
	carol => $both,
	mallory => 'none');
my %status = (
	alice => "emu|events|t|t\npriv|payroll_q4_merger|f|f",
	bob => "emu|events|f|f\npriv|payroll_q4_merger|t|t",
	carol => "emu|events|t|t\npriv|payroll_q4_merger|t|t",
	mallory => "emu|events|f|f\npriv|payroll_q4_merger|f|f");
for my $role (sort keys %sees)
{
	my ($s) = session_as($role);

	is($s->query_safe($RUNNING), $sees{$role},
		"$role: lancelsm_running() shows exactly the rows $role may see");
	is($s->query_safe($STATUS), $status{$role},
		"$role: lancelsm_status shows the running columns $role may see");
	$s->quit;
}

pin('events', 0);
pin('payroll_q4_merger', 0);
my ($out, $err) = finish_query($sa, $ta);
is("$out|$err", 't|', 'alice: the checkpoint succeeded once the latch was free');
($out, $err) = finish_query($sb, $tb);
is("$out|$err", 't|', 'bob: the checkpoint succeeded once the latch was free');
is($super->query_safe($RUNNING), 'none', 'finished: nothing runs');

done_testing();
