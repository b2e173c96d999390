# record_stale.pl: no stale rows, with lancelsm in shared_preload_libraries.
#
# Two declared tables, "events" (healthy) and "broken" (its stats reads
# refused, 403, after a flush that succeeds), each read and checkpointed
# once, so that
# each has a row in lancelsm_last_stats, lancelsm_table_counters,
# lancelsm_status and both histories.
#
# 1. lancelsm_remove_table('emu', 'broken') rolled back (a transaction, a
#    savepoint) changes nothing.  Committed, it takes broken out of
#    lancelsm_last_stats, lancelsm_table_counters and lancelsm_status; its
#    rows in lancelsm_checkpoint_history and lancelsm_run_history stay,
#    with removed_at set (the commit's time), and no alert query of
#    contrib/postgres_exporter/lancelsm.yaml nor docs/monitoring.md reports
#    it, while events is as it was.
# 2. DROP EXTENSION and CREATE EXTENSION: nothing from before shows in
#    any view of the database, in the backend that ran them (a savepoint
#    that rolled back a drop changed nothing) or in a new one; another
#    database's entries stay.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $port = start_emulator();
my $node = setup_node_conf('stale', $port);
emu_table('broken', 1);
emu('POST', '/_emulator/tables/events/generations', { count => 1 });
$node->safe_psql('postgres', 'CREATE DATABASE other');
install_lancelsm($node, $port, 'other');

my ($s) = open_session($node);
# the WARNING of a run with a failed table and the NOTICE of a DROP ...
# CASCADE are not what this test reads
$s->query_safe('SET client_min_messages = error');

# what each view shows of this database, one line per row, in name order
my %VIEW = (
	last_stats => q{SELECT table_name || ':' || ok FROM lancelsm_last_stats
	  WHERE database = current_database()},
	counters => q{SELECT table_name || ':' || action || ':' || runs
	  FROM lancelsm_table_counters WHERE database = current_database()},
	status => q{SELECT table_name || ':' || coalesce(last_ok::text, '-')
	  FROM lancelsm_status},
	history => q{SELECT table_name || ':' || ok || ':' || (removed_at IS NOT NULL)
	  FROM lancelsm_checkpoint_history WHERE database = current_database()},
	runs => q{SELECT table_name || ':' || action || ':' || ok || ':' || (removed_at IS NOT NULL)
	  FROM lancelsm_run_history WHERE database = current_database()},
);

# views: the rows of every view, as one string, in the session given (a
# background session) or in a new connection to $db
sub views
{
	my ($session, $db) = @_;
	my @out;

	for my $v (sort keys %VIEW)
	{
		my $sql = "SELECT string_agg(x, ' ' ORDER BY x COLLATE \"C\") FROM ($VIEW{$v}) q(x)";
		my $rows = $session ? $session->query_safe($sql)
		  : $node->safe_psql($db, $sql);
		chomp $rows;
		push @out, "$v=[$rows]";
	}
	return join(' ', @out);
}

$s->query_safe(q{
	SELECT lancelsm_add_table('emu', 'events');
	SELECT lancelsm_add_table('emu', 'broken');
});
emu('POST', '/_emulator/faults',
	{ table => 'broken', route => 'get_lsm_stats', status => 403, count => -1 });
$s->query_safe('SELECT count(*) FROM lancelsm_table_stats');
$s->query_safe('SELECT count(*) FROM lancelsm_checkpoint_all()');
$node->safe_psql('other', q{SELECT lancelsm_add_table('emu', 'events');
	SELECT count(*) FROM lancelsm_checkpoint_all()});

my $before = 'counters=[broken:checkpoint:1 events:checkpoint:1] '
  . 'history=[broken:false:false events:true:false] '
  . 'last_stats=[broken:false events:true] '
  . 'runs=[broken:checkpoint:false:false events:checkpoint:true:false] '
  . 'status=[broken:false events:true]';
is(views($s), $before, 'declared: both tables in every view');

# 1. removal rolled back, then committed
$s->query_safe(q{BEGIN; SELECT lancelsm_remove_table('emu', 'broken'); ROLLBACK});
is(views($s), $before, 'rollback: a rolled-back removal changes nothing');
$s->query_safe(q{BEGIN; SAVEPOINT a; SELECT lancelsm_remove_table('emu', 'broken');
	ROLLBACK TO SAVEPOINT a; COMMIT});
is(views($s), $before, 'savepoint: a removal rolled back to its savepoint changes nothing');

is($s->query_safe(q{SELECT lancelsm_remove_table('emu', 'broken')}), 't',
	'removed: lancelsm_remove_table says it was declared');
my $after = 'counters=[events:checkpoint:1] '
  . 'history=[broken:false:true events:true:false] '
  . 'last_stats=[events:true] '
  . 'runs=[broken:checkpoint:false:true events:checkpoint:true:false] '
  . 'status=[events:true]';
is(views($s), $after,
	'removed: gone from last stats, counters and status; its history rows marked removed_at');
is(views(undef, 'postgres'), $after, 'removed: the same in a new backend');
is($s->query_safe(q{
		SELECT count(DISTINCT removed_at), bool_and(removed_at <= now())
		  FROM (SELECT removed_at FROM lancelsm_checkpoint_history WHERE table_name = 'broken'
		        UNION ALL
		        SELECT removed_at FROM lancelsm_run_history WHERE table_name = 'broken') r}),
	'1|t', 'removed: both histories carry the one time of the removal');

# the alert queries of the exporter and of docs/monitoring.md
my $exporter = slurp_file("$FindBin::RealBin/../contrib/postgres_exporter/lancelsm.yaml");
my ($error_query) = $exporter =~ /^lancelsm_checkpoint_error:\n  query: \|\n((?:    .*\n)+)/m;
ok($error_query, 'alerts: the exporter has its checkpoint error query');
is($s->query_safe("SELECT count(*) FROM ($error_query) q"), '0',
	'alerts: the exporter reports no failing checkpoint');
my ($last_query) = $exporter =~ /^lancelsm_checkpoint_last:\n  query: \|\n((?:    .*\n)+)/m;
is($s->query_safe("SELECT string_agg(table_name, ' ') FROM ($last_query) q WHERE database = 'postgres'"),
	'events', 'alerts: the exporter\'s last checkpoints are those of declared tables');
my $docs = slurp_file("$FindBin::RealBin/../docs/monitoring.md");
my ($sql_block) = $docs =~ /## The same checks in SQL.*?```sql\n(.*?)```/s;
my @checks = grep { /lancelsm_/ && !/cron\./ } split(/;\s*(?:--[^\n]*)?\n/, $sql_block);
is(scalar(@checks), 5, 'alerts: docs/monitoring.md has five checks over lancelsm');
for my $check (@checks)
{
	my $rows = $s->query_safe("SELECT count(*) FROM ($check) q WHERE q.table_name = 'broken'");
	is($rows, '0', 'alerts: no docs check reports the removed table: '
		  . (split(/\n/, $check))[0]);
}

# 2. DROP EXTENSION and CREATE EXTENSION: nothing from before
$s->query_safe(q{BEGIN; SAVEPOINT d; DROP EXTENSION lancelsm CASCADE;
	ROLLBACK TO SAVEPOINT d; COMMIT});
is(views($s), $after, 'drop rolled back: everything as it was');
$s->query_safe('DROP EXTENSION lancelsm CASCADE');
$s->query_safe('CREATE EXTENSION lancelsm');
$s->query_safe(qq{CREATE SERVER emu FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER emu OPTIONS (api_key '$API_KEY')});
my $empty = 'counters=[] history=[] last_stats=[] runs=[] status=[]';
is(views($s), $empty, 'recreated: nothing from before, in the same backend');
is(views(undef, 'postgres'), $empty, 'recreated: nothing from before, in a new backend');
is(views(undef, 'other'),
	'counters=[events:checkpoint:1] '
	  . 'history=[events:true:false] last_stats=[] '
	  . 'runs=[events:checkpoint:true:false] status=[events:true]',
	'recreated: another database keeps its entries');
$s->query_safe(q{SELECT lancelsm_add_table('emu', 'events')});
$s->query_safe('SELECT count(*) FROM lancelsm_checkpoint_all()');
is(views($s),
	'counters=[events:checkpoint:1] '
	  . 'history=[events:true:false] last_stats=[] '
	  . 'runs=[events:checkpoint:true:false] status=[events:true]',
	'recreated: a new checkpoint counts from zero');

$s->quit;
$node->stop;
done_testing();
