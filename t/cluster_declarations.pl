# cluster_declarations.pl: declarations a DBA can trust.
#
# One node, the emulator with tables events and orders:
#
#   - declaring reads the table once: a typo is refused with HV00R and
#     nothing is declared (one stats request); validate => false declares
#     without a request; NULL validate is 22004;
#   - ALTER SERVER ... RENAME by the server's owner, a role without any
#     privilege on lancelsm_table, is followed: the rows, lancelsm_status
#     and lancelsm_last_stats (lancelsm preloaded) name the new server,
#     and checkpoints work on it;
#   - a rename onto a name that tables are declared on is refused (42710);
#   - DROP SERVER without CASCADE, once the user mappings are gone, and
#     DROP OWNED BY its owner, are refused with 2BP01, naming every table,
#     with a hint; the server and its declarations stay;
#   - DROP SERVER ... CASCADE removes its declarations, and only its, and
#     the record (lancelsm preloaded) forgets them at commit as after
#     lancelsm_remove_table: out of lancelsm_table_counters and
#     lancelsm_last_stats, their history and run-history rows marked
#     removed_at, the other server's rows untouched; rolled back, it
#     forgets nothing;
#   - pg_dump then pg_restore --clean --if-exists into the same database,
#     and into a new one, succeed without an error and keep the
#     declarations working (checkpoints ok, the event triggers in place:
#     the restored server cannot be dropped without CASCADE);
#   - DROP EXTENSION ... CASCADE with servers and declarations works.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $port = start_emulator();
emu_table('events', 1);
emu_table('orders', 1);

my $node = PostgreSQL::Test::Cluster->new('declarations');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'lancelsm'\n");
$node->start;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION lancelsm;
	CREATE ROLE regress_decl_owner;
	GRANT USAGE ON FOREIGN DATA WRAPPER lancelsm TO regress_decl_owner;
	CREATE SERVER lance FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	ALTER SERVER lance OWNER TO regress_decl_owner;
	CREATE USER MAPPING FOR PUBLIC SERVER lance OPTIONS (api_key '$API_KEY');
	CREATE SERVER other FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER other OPTIONS (api_key '$API_KEY');
});

# stats_reads: the stats requests the emulator saw for $table since the
# last reset
sub stats_reads
{
	my ($table) = @_;

	return emu('GET', "/_emulator/counts?table=$table")->{get_lsm_stats} // 0;
}

# declared: the rows of lancelsm_table in $db, "server|table" a line
sub declared
{
	my ($db) = @_;

	return $node->safe_psql($db // 'postgres', q{
		SELECT server, table_name FROM lancelsm_table
		 ORDER BY server COLLATE "C", table_name COLLATE "C"});
}

# failing: psql's verbose stderr of $sql in database $db, as $role if given
sub failing
{
	my ($sql, $role, $db) = @_;
	my ($out, $err);
	my $set = $role ? "SET ROLE $role;\n" : '';

	$node->psql($db // 'postgres', "\\set VERBOSITY verbose\n$set$sql",
		stdout => \$out, stderr => \$err);
	return $err;
}

# checkpoints: the rows of lancelsm_checkpoint_all() in $db
sub checkpoints
{
	my ($db) = @_;

	return $node->safe_psql($db // 'postgres', q{
		SELECT server, table_name, ok, coalesce(sqlstate, '')
		  FROM lancelsm_checkpoint_all()
		 ORDER BY server COLLATE "C", table_name COLLATE "C"});
}

# declaring checks the table
emu('POST', '/_emulator/log/reset');
my $err = failing(q{SELECT lancelsm_add_table('lance', 'evnets')});
is(sqlstate_of($err), 'HV00R', 'a typo is refused with HV00R');
like(
	$err,
	qr/could not read the LSM statistics of LanceDB table "evnets".*CONTEXT:  checking LanceDB table "evnets" of server "lance" before declaring it/s,
	'the error names the table and says it was being declared');
is(stats_reads('evnets'), 1, 'the typo was read once');
is(declared(), '', 'and nothing is declared');
is(sqlstate_of(failing(q{SELECT lancelsm_add_table('lance', 'x', validate => NULL)})),
	'22004', 'validate => NULL is 22004');
$node->safe_psql('postgres', q{
	SELECT lancelsm_add_table('lance', 'events');
	SELECT lancelsm_add_table('lance', 'orders', max_l0_generations => 5);
	SELECT lancelsm_add_table('lance', 'later', validate => false);
	SELECT lancelsm_add_table('other', 'events');
});
is(join(',', map { stats_reads($_) } qw(events orders later)),
	'2,1,0', 'declaring read events (twice: two servers) and orders once, later never');
is(declared(), "lance|events\nlance|later\nlance|orders\nother|events",
	'declared: three tables on lance, one on other');

# a rename by the server's owner, who has no privilege on lancelsm_table,
# after a read of the view that fills lancelsm_last_stats
$node->safe_psql('postgres', 'SELECT count(*) FROM lancelsm_table_stats');
$node->safe_psql('postgres', q{
	SET ROLE regress_decl_owner;
	ALTER SERVER lance RENAME TO lance_prod;
});
is(declared(), "lance_prod|events\nlance_prod|later\nlance_prod|orders\nother|events",
	'the rename is followed, the other server untouched');
is( $node->safe_psql(
		'postgres', q{SELECT max_l0_generations FROM lancelsm_table
	       WHERE server = 'lance_prod' AND table_name = 'orders'}),
	'5', 'the thresholds are kept');
is( $node->safe_psql(
		'postgres', q{SELECT string_agg(DISTINCT server, ',') FROM lancelsm_status}),
	'lance_prod,other', 'lancelsm_status shows the new name');
is( $node->safe_psql(
		'postgres', q{SELECT server, table_name FROM lancelsm_last_stats
	       WHERE table_name IN ('events', 'orders')
	       ORDER BY server COLLATE "C", table_name COLLATE "C"}),
	"lance_prod|events\nlance_prod|orders\nother|events",
	'lancelsm_last_stats shows the new name');
is(checkpoints(),
	"lance_prod|events|t|\nlance_prod|later|f|HV00R\nlance_prod|orders|t|\nother|events|t|",
	'the declared tables run on the renamed server');

# a rename onto a name tables are declared on (left from a drop while
# event triggers were off) is refused, and nothing changes
$node->safe_psql('postgres',
	q{INSERT INTO lancelsm_table (server, table_name) VALUES ('ghost', 'events')});
$err = failing(q{ALTER SERVER other RENAME TO ghost});
is(sqlstate_of($err), '42710', 'a rename onto declared rows is refused');
like($err, qr/HINT:  Remove the declarations of server "ghost" with lancelsm_remove_table, or choose another name\./,
	'with a hint');
$node->safe_psql('postgres', q{SELECT lancelsm_remove_table('ghost', 'events')});
is( $node->safe_psql('postgres', q{SELECT srvname FROM pg_foreign_server ORDER BY 1}),
	"lance_prod\nother", 'the servers keep their names');

# a drop without CASCADE is refused while tables are declared on the server
$node->safe_psql('postgres', q{DROP USER MAPPING FOR PUBLIC SERVER lance_prod});
$err = failing(q{DROP SERVER lance_prod}, 'regress_decl_owner');
is(sqlstate_of($err), '2BP01', 'DROP SERVER is refused with 2BP01');
like(
	$err,
	qr/ERROR:  2BP01: cannot drop server "lance_prod" because declared LanceDB tables depend on it\nDETAIL:  declared LanceDB table "events" depends on server "lance_prod"\ndeclared LanceDB table "later" depends on server "lance_prod"\ndeclared LanceDB table "orders" depends on server "lance_prod"\nHINT:  Use DROP \.\.\. CASCADE to remove the declared tables too, or remove them first with lancelsm_remove_table\./,
	'the error names every table, with a hint');
is(sqlstate_of(failing(q{DROP OWNED BY regress_decl_owner}, 'regress_decl_owner')),
	'2BP01', 'DROP OWNED BY the owner is refused too');
is( $node->safe_psql('postgres', q{SELECT count(*) FROM pg_foreign_server WHERE srvname = 'lance_prod'}),
	'1', 'the server stays');
is(declared(), "lance_prod|events\nlance_prod|later\nlance_prod|orders\nother|events",
	'and so do its declarations');

# record: what the record in shared memory shows, one view a line:
# "view=[server:table... ...]" in name order; removed is "r", else "-"
my %RECORD = (
	counters => q{SELECT coalesce(server, '?') || ':' || table_name || ':' || action
	  FROM lancelsm_table_counters},
	last_stats => q{SELECT coalesce(server, '?') || ':' || table_name
	  FROM lancelsm_last_stats},
	history => q{SELECT coalesce(server, '?') || ':' || table_name || ':'
	  || CASE WHEN removed_at IS NULL THEN '-' ELSE 'r' END
	  FROM lancelsm_checkpoint_history},
	runs => q{SELECT coalesce(server, '?') || ':' || table_name || ':' || action || ':'
	  || CASE WHEN removed_at IS NULL THEN '-' ELSE 'r' END
	  FROM lancelsm_run_history WHERE table_name IS NOT NULL},
);

sub record
{
	return join("\n",
		map {
			"$_=["
			  . $node->safe_psql('postgres',
				"SELECT string_agg(x, ' ' ORDER BY x COLLATE \"C\") FROM ($RECORD{$_}) q(x)")
			  . ']'
		} sort keys %RECORD);
}

# CASCADE removes the server's declarations, and only its; rolled back,
# it changes nothing
my $record_before = record();
is( $record_before,
	"counters=[lance_prod:events:checkpoint lance_prod:later:checkpoint lance_prod:orders:checkpoint other:events:checkpoint]\n"
	  . "history=[lance_prod:events:- lance_prod:orders:- other:events:-]\n"
	  . "last_stats=[lance_prod:events lance_prod:later lance_prod:orders other:events]\n"
	  . "runs=[lance_prod:events:checkpoint:- lance_prod:later:checkpoint:- lance_prod:orders:checkpoint:- other:events:checkpoint:-]",
	'the record before DROP SERVER other CASCADE: both servers\' tables');
$node->safe_psql('postgres', q{BEGIN; DROP SERVER other CASCADE; ROLLBACK});
is(declared(), "lance_prod|events\nlance_prod|later\nlance_prod|orders\nother|events",
	'a rolled-back DROP SERVER ... CASCADE keeps the declarations');
is(record(), $record_before, 'and the record forgets nothing');
$node->safe_psql('postgres', q{DROP SERVER other CASCADE});
is(declared(), "lance_prod|events\nlance_prod|later\nlance_prod|orders",
	'DROP SERVER ... CASCADE removes its declared tables');
is( record(),
	"counters=[lance_prod:events:checkpoint lance_prod:later:checkpoint lance_prod:orders:checkpoint]\n"
	  . "history=[lance_prod:events:- lance_prod:orders:- other:events:r]\n"
	  . "last_stats=[lance_prod:events lance_prod:later lance_prod:orders]\n"
	  . "runs=[lance_prod:events:checkpoint:- lance_prod:later:checkpoint:- lance_prod:orders:checkpoint:- other:events:checkpoint:r]",
	'the record forgets them: out of the counters and last stats, history rows removed_at, lance_prod\'s untouched'
);
is( $node->safe_psql(
		'postgres', q{
		SELECT count(DISTINCT removed_at), bool_and(removed_at <= now())
		  FROM (SELECT removed_at FROM lancelsm_checkpoint_history WHERE server = 'other'
		        UNION ALL
		        SELECT removed_at FROM lancelsm_run_history WHERE server = 'other') r}),
	'1|t', 'both histories carry the one time of the drop\'s commit');
$node->safe_psql('postgres', qq{
	CREATE USER MAPPING FOR PUBLIC SERVER lance_prod OPTIONS (api_key '$API_KEY');
	SELECT lancelsm_remove_table('lance_prod', 'later');
	SELECT lancelsm_checkpoint_all();
});

# pg_dump, then pg_restore --clean into the same database and a new one
my $dump = $node->basedir . '/decl.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, 'postgres' ], 'pg_dump');
my $before = $node->safe_psql('postgres', q{
	SELECT concat_ws(' ', server, table_name, max_l0_generations,
	                 last_checkpoint_at IS NOT NULL, last_ok)
	  FROM lancelsm_table ORDER BY server COLLATE "C", table_name COLLATE "C"});
is($before, "lance_prod events t t\nlance_prod orders 5 t t",
	'the declarations before the dump');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
for my $db ('postgres', 'restored')
{
	my ($out, $errs) = ('', '');
	my $ok = IPC::Run::run(
		[ 'pg_restore', '--clean', '--if-exists', '-d', $node->connstr($db), $dump ],
		'>', \$out, '2>', \$errs);
	ok($ok, "pg_restore --clean --if-exists into $db succeeds");
	is($errs, '', "pg_restore into $db reports no error");
	is( $node->safe_psql(
			$db, q{
		SELECT concat_ws(' ', server, table_name, max_l0_generations,
		                 last_checkpoint_at IS NOT NULL, last_ok)
		  FROM lancelsm_table ORDER BY server COLLATE "C", table_name COLLATE "C"}),
		$before, "$db: the declarations are restored");
	is(checkpoints($db), "lance_prod|events|t|\nlance_prod|orders|t|",
		"$db: the restored declarations run");
	is( $node->safe_psql(
			$db, q{SELECT string_agg(evtname || ' ' || evtevent, ', ' ORDER BY evtname)
		       FROM pg_event_trigger}),
		'lancelsm_server_drop sql_drop, lancelsm_server_rename ddl_command_end',
		"$db: the event triggers are in place");
	is(sqlstate_of(failing(q{DROP USER MAPPING FOR PUBLIC SERVER lance_prod; DROP SERVER lance_prod}, undef, $db)),
		'2BP01', "$db: the restored server cannot be dropped without CASCADE");
}

# DROP EXTENSION ... CASCADE drops the servers, the declarations and the
# event triggers together
$node->safe_psql('restored', 'DROP EXTENSION lancelsm CASCADE');
is( $node->safe_psql(
		'restored', q{SELECT (SELECT count(*) FROM pg_foreign_server)
	       + (SELECT count(*) FROM pg_event_trigger)}),
	'0', 'DROP EXTENSION lancelsm CASCADE drops the servers and the event triggers');

$node->stop;
done_testing();
