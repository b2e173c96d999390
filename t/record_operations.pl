# record_operations.pl: what a DBA sees of lancelsm itself.
#
# One node with lancelsm preloaded (lancelsm.max_progress_entries 7,
# lancelsm.max_history_entries 9) and one without:
#
#   - lancelsm_info: versions, preloaded, the registries' sizes, and the
#     history entries a checkpoint fills; without the preload, no counts;
#   - lancelsm.log_min_duration: -1 logs no action, 0 every one (server,
#     table, action, outcome, times), a bound above the action's duration
#     none;
#   - lancelsm_checkpoint_all over 12 failing tables: exactly 10 LOG lines
#     naming server and table, and one WARNING to the client counting 12;
#   - the upgrade in the documented order with the preload: the 1.5
#     library serves a 1.3 catalog (lancelsm_alter_table with 1.3's
#     meaning) and a 1.4 one, ALTER EXTENSION UPDATE then works, and after
#     a restart lancelsm_info shows the release 1.5.0 and the catalog 1.5;
#   - the update scripts refuse a session that holds a pre-1.4 library
#     (here: one that defines lancelsm.retry_budget without
#     lancelsm.log_min_duration) or a pre-1.5 one (here: a lancelsm_info
#     that says 1.4) with a hint naming the restart;
#   - on PostgreSQL 17 and later, the wait event LancelsmServer is
#     registered once a checkpoint waited for the server.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $port = start_emulator();
emu_reset();

my $node = PostgreSQL::Test::Cluster->new('operations');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'lancelsm'
lancelsm.max_progress_entries = 7
lancelsm.max_history_entries = 9
});
$node->start;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION lancelsm;
	CREATE SERVER emu FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER emu OPTIONS (api_key '$API_KEY');
});

# lancelsm_info, preloaded
is( $node->safe_psql(
		'postgres', q{SELECT library_version LIKE catalog_version || '.%', preloaded,
	       progress_entries, max_progress_entries, history_entries,
	       max_history_entries, herd_entries, max_herd_entries,
	       progress_skipped, history_evicted, pace_evicted FROM lancelsm_info}),
	't|t|0|7|0|9|0|256|0|0|0',
	'lancelsm_info: preloaded, the sizes set at server start, nothing used');

# log lines of actions
sub log_since
{
	my ($offset) = @_;
	return substr(slurp_file($node->logfile), $offset);
}

my $offset = -s $node->logfile;
$node->safe_psql('postgres', q{SELECT lancelsm_checkpoint('emu', 'events')});
unlike(log_since($offset), qr/lancelsm checkpoint of/,
	'lancelsm.log_min_duration -1 (the default): no line');

$offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	SET lancelsm.log_min_duration = 0;
	SELECT lancelsm_checkpoint('emu', 'events');
	SELECT lancelsm_flush('emu', 'events');
});
my $log = log_since($offset);
like(
	$log,
	qr/LOG:  lancelsm checkpoint of LanceDB table "events" of server "emu": ok\n.*DETAIL:  Started at \d{4}-\d\d-\d\d [^,]+, elapsed \d+\.\d{3} s, \d+ passes, \d+ polls, 0 retries, 0 re-issues\./,
	'lancelsm.log_min_duration 0: the checkpoint logged with server, table, outcome and times');
like(
	$log,
	qr/LOG:  lancelsm flush of LanceDB table "events" of server "emu": ok/,
	'lancelsm.log_min_duration 0: the flush logged');
is(scalar(() = $log =~ /LOG:  lancelsm (?:checkpoint|flush) of/g),
	2, 'one line per action');

$offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	SET lancelsm.log_min_duration = '1h';
	SELECT lancelsm_checkpoint('emu', 'events');
});
unlike(log_since($offset), qr/lancelsm checkpoint of/,
	'an action shorter than lancelsm.log_min_duration: no line');

# a failed action: "failed", its SQLSTATE, the failure's message first
$offset = -s $node->logfile;
$node->psql('postgres', q{
	SET lancelsm.log_min_duration = 0;
	SET log_error_verbosity = verbose;
	SELECT lancelsm_flush('emu', 'nosuchtable');
});
$log = log_since($offset);
like(
	$log,
	qr/LOG:  HV00R: lancelsm flush of LanceDB table "nosuchtable" of server "emu" failed\n.*DETAIL:  could not flush LanceDB table "nosuchtable": The server answered HTTP status 404\b[^\n]*? Request ID: [0-9a-f-]{36}\. Started at \d{4}-\d\d-\d\d [^,]+, elapsed \d+\.\d{3} s, /,
	'a failed action: its SQLSTATE, "failed", the failure in the detail');

is( $node->safe_psql('postgres',
		'SELECT history_entries FROM lancelsm_info'),
	'1', 'lancelsm_info: the checkpoint holds one history entry');

# failed rows of lancelsm_checkpoint_all: 10 LOG lines, one WARNING
$node->safe_psql('postgres', q{
	SELECT lancelsm_add_table('emu', 'gone' || lpad(i::text, 2, '0'), validate => false)
	  FROM generate_series(1, 12) i;
});
$offset = -s $node->logfile;
my ($stdout, $stderr);
$node->psql(
	'postgres',
	'SELECT count(*) FILTER (WHERE NOT ok) FROM lancelsm_checkpoint_all()',
	stdout => \$stdout,
	stderr => \$stderr);
is($stdout, '12', 'lancelsm_checkpoint_all: 12 failed rows');
is(scalar(() = $stderr =~ /WARNING/g), 1, 'one WARNING to the client');
like($stderr, qr/WARNING:  12 of 12 declared LanceDB tables failed/,
	'the WARNING counts the failed tables');
$log = log_since($offset);
is( scalar(
		() = $log =~
		  /LOG:  could not maintain LanceDB table "gone\d\d" of server "emu"/g),
	10,
	'10 LOG lines naming server and table, not 12');
like($log, qr/LOG:  could not maintain LanceDB table "gone01" of server "emu"\n.*DETAIL:  could not checkpoint LanceDB table "gone01"/,
	'each LOG line has the failure in its detail');
$node->safe_psql('postgres', q{
	SELECT lancelsm_remove_table('emu', 'gone' || lpad(i::text, 2, '0'))
	  FROM generate_series(1, 12) i;
});

# the upgrade in the documented order with the preload: package (this
# library) and restart first, then ALTER EXTENSION UPDATE
$node->safe_psql('postgres', 'CREATE DATABASE up');
$node->safe_psql('postgres', 'CREATE DATABASE up14');
$node->safe_psql('up14', q{CREATE EXTENSION lancelsm VERSION '1.4'});
is( $node->safe_psql(
		'up14', q{SELECT library_version, catalog_version FROM lancelsm_info}),
	'1.5.0|1.4',
	'1.4 catalog: lancelsm_info gives the library\'s release and the catalog\'s version');
$node->safe_psql('up', qq{
	CREATE EXTENSION lancelsm VERSION '1.3';
	CREATE SERVER emu FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER emu OPTIONS (api_key '$API_KEY');
	SELECT lancelsm_add_table('emu', 'events', 1, 2, 3, 4, '1 day');
	SELECT lancelsm_alter_table('emu', 'events', max_wal_lag => 30);
});
is( $node->safe_psql(
		'up', q{SELECT max_l0_generations, max_l0_bytes, max_wal_lag,
	       max_memtable_rows, max_checkpoint_age FROM lancelsm_table}),
	'||30||',
	'1.3 catalog: lancelsm_alter_table keeps its 1.3 meaning (sets exactly)');
is($node->safe_psql('up', 'SELECT count(*) FROM lancelsm_progress'),
	'0', '1.3 catalog: the progress view works with the 1.4 library');
$node->restart;
$node->safe_psql('up', 'ALTER EXTENSION lancelsm UPDATE');
$node->safe_psql('up14', 'ALTER EXTENSION lancelsm UPDATE');
$node->safe_psql('up', q{
	SELECT lancelsm_alter_table('emu', 'events', max_l0_generations => 5);
});
is( $node->safe_psql(
		'up', q{SELECT max_l0_generations, max_wal_lag FROM lancelsm_table}),
	'5|30', '1.4 catalog: lancelsm_alter_table keeps what it is not given');
$node->restart;
is( $node->safe_psql(
		'up', q{SELECT library_version, catalog_version, preloaded
	       FROM lancelsm_info}),
	'1.5.0|1.5|t',
	'after the update from 1.3 and a restart: release 1.5.0, catalog 1.5, preloaded');
is( $node->safe_psql(
		'up14', q{SELECT library_version, catalog_version, preloaded
	       FROM lancelsm_info}),
	'1.5.0|1.5|t',
	'after the update from 1.4 and a restart: release 1.5.0, catalog 1.5, preloaded');

if ($node->pg_version >= 17)
{
	$node->safe_psql('up', q{SELECT lancelsm_checkpoint('emu', 'events')});
	is( $node->safe_psql(
			'up', q{SELECT name FROM pg_wait_events
		       WHERE type = 'Extension' AND name = 'LancelsmServer'}),
		'LancelsmServer',
		'PostgreSQL 17 and later: the wait event LancelsmServer is registered');
}

# without the preload: no counts; the update script refuses an old library
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->start;

# refused_update(DB, SQL, OLDER_THAN, STAYS): SQL, ending in ALTER
# EXTENSION lancelsm UPDATE, is refused for a library older than
# OLDER_THAN with the hint naming the restart; the extension stays at STAYS
sub refused_update
{
	my ($db, $sql, $older_than, $stays) = @_;
	my $err;
	$plain->psql($db, $sql, stderr => \$err);
	like(
		$err,
		qr/ERROR:  this session runs a lancelsm library older than \Q$older_than\E\n.*HINT:  Restart the server if lancelsm is in shared_preload_libraries, or else start a new session, then run ALTER EXTENSION lancelsm UPDATE again\./s,
		"the update script names the restart when the session holds a library older than $older_than"
	);
	is( $plain->safe_psql(
			$db, q{SELECT extversion FROM pg_extension
		       WHERE extname = 'lancelsm'}),
		$stays, "and the extension stays at $stays");
}

$plain->safe_psql('postgres', q{CREATE EXTENSION lancelsm VERSION '1.3'});
refused_update('postgres', q{
	SET lancelsm.retry_budget = 8;
	ALTER EXTENSION lancelsm UPDATE;
}, '1.4', '1.3');
$plain->safe_psql('postgres', 'ALTER EXTENSION lancelsm UPDATE');
is( $plain->safe_psql(
		'postgres', q{SELECT library_version, catalog_version, preloaded,
	       num_nulls(progress_entries, max_progress_entries, history_entries,
	                 max_history_entries, herd_entries, max_herd_entries,
	                 progress_skipped, history_evicted)
	       FROM lancelsm_info}),
	'1.5.0|1.5|f|8',
	'without the preload: lancelsm_info has the versions and no counts');

# the 1.5 script asks the loaded library its release: a session whose
# lancelsm_info says 1.4 (as the 1.4 library's does) is refused
$plain->safe_psql('postgres', 'CREATE DATABASE old14');
$plain->safe_psql('old14', q{CREATE EXTENSION lancelsm VERSION '1.4'});
refused_update('old14', q{
	CREATE OR REPLACE FUNCTION lancelsm_info() RETURNS TABLE (
	    library_version text, catalog_version text, preloaded bool,
	    progress_entries int, max_progress_entries int, history_entries int,
	    max_history_entries int, herd_entries int, max_herd_entries int,
	    progress_skipped int8, history_evicted int8, pace_evicted int8,
	    run_entries int, max_run_entries int, run_evicted int8,
	    counter_entries int, max_counter_entries int, counter_evicted int8)
	  LANGUAGE sql
	  AS $$SELECT '1.4', '1.4', false, 0, 0, 0, 0, 0, 0, 0::int8, 0::int8,
	            0::int8, 0, 0, 0::int8, 0, 0, 0::int8$$;
	LOAD 'lancelsm';
	ALTER EXTENSION lancelsm UPDATE;
}, '1.5', '1.4');

$plain->stop;
$node->stop;
done_testing();
