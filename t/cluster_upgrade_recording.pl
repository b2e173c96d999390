# cluster_upgrade_recording.pl: ALTER EXTENSION UPDATE keeps a job role
# recording, with lancelsm in shared_preload_libraries.
#
# For 1.3 and 1.4, a database at that version and a due job's role set up
# as that version's docs said: LOGIN, its own user mapping, USAGE on the
# server and, from 1.3's README, UPDATE (last_checkpoint_at) on
# lancelsm_table; from 1.4's, UPDATE on last_checkpoint_at and the seven
# outcome columns.  Two declared tables: "events", due for a checkpoint
# (max_checkpoint_age 1 hour, last checkpointed long ago), and "broken",
# due for a compaction (max_l0_generations 0) that the server refuses
# (403).  The role runs lancelsm_checkpoint_due() before the update and
# what that catalog keeps is recorded (1.3: last_checkpoint_at; 1.4: the
# outcomes and the message); then the superuser runs ALTER EXTENSION
# lancelsm UPDATE, with no grant, and the role's next run records every
# outcome (the message in lancelsm_table_message).  A role without the
# grant gets 42501 from its call, not a WARNING, and nothing is sent.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $port = start_emulator();
emu_table('broken', 0);
emu('POST', '/_emulator/faults',
	{ table => 'broken', route => 'compact_lsm', status => 403, count => -1 });

my $node = PostgreSQL::Test::Cluster->new('upgrade_recording');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'lancelsm'\n");
$node->start;

my %GRANT = (
	'1.3' => 'GRANT UPDATE (last_checkpoint_at) ON lancelsm_table TO lsm_job;',
	'1.4' => 'GRANT UPDATE (last_checkpoint_at, last_action, last_source, last_ok, last_sqlstate,
	            last_message, last_started_at, last_finished_at)
	            ON lancelsm_table TO lsm_job;',
);

# due_run: in $db, make both tables due (events last checkpointed long
# ago, broken with an L0 generation), then run the due job as $role;
# returns (its rows, SQLSTATE)
sub due_run
{
	my ($db, $role) = @_;

	$node->safe_psql($db, q{UPDATE lancelsm_table SET last_checkpoint_at = '2000-01-01 00:00:00+00'
	                         WHERE table_name = 'events'});
	emu('POST', '/_emulator/tables/broken/generations', { count => 1 });
	my ($ret, $out, $err) = $node->psql($db,
		q{SELECT table_name, ok, sqlstate, action FROM lancelsm_checkpoint_due()
		   ORDER BY table_name COLLATE "C"},
		extra_params => [ '-U', $role, '-v', 'VERBOSITY=verbose' ]);
	return ($out, sqlstate_of($err));
}

my $rows = "broken|f|42501|compact\nevents|t||checkpoint";
my $outcomes = q{
	SELECT table_name, last_checkpoint_at > now() - interval '1 minute' AS checkpointed,
	       last_action, last_source, last_ok, last_sqlstate,
	       last_finished_at > now() - interval '1 minute' AS recent
	  FROM lancelsm_table ORDER BY table_name COLLATE "C"};

$node->safe_psql('postgres', 'CREATE ROLE lsm_job LOGIN; CREATE ROLE no_grant LOGIN');
for my $v ('1.3', '1.4')
{
	my $db = 'db' . ($v =~ tr/.//dr);

	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, qq{
		CREATE EXTENSION lancelsm VERSION '$v';
		CREATE SERVER emu FOREIGN DATA WRAPPER lancelsm
		  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
		CREATE USER MAPPING FOR lsm_job SERVER emu OPTIONS (api_key '$API_KEY');
		CREATE USER MAPPING FOR no_grant SERVER emu OPTIONS (api_key '$API_KEY');
		GRANT USAGE ON FOREIGN SERVER emu TO lsm_job, no_grant;
		$GRANT{$v}
		SELECT lancelsm_add_table('emu', 'events');
		SELECT lancelsm_add_table('emu', 'broken');
		UPDATE lancelsm_table SET max_checkpoint_age = '1 hour' WHERE table_name = 'events';
		UPDATE lancelsm_table SET max_l0_generations = 0 WHERE table_name = 'broken';
	});

	# before the update: what the catalog of $v keeps is recorded
	is(join('|', due_run($db, 'lsm_job')), "$rows|",
		"$v before: the job role's due run acts on both tables");
	if ($v eq '1.3')
	{
		is($node->safe_psql($db, q{
				SELECT string_agg(table_name || ':' || coalesce((last_checkpoint_at > now() - interval '1 minute')::text, '-'), ' '
				                  ORDER BY table_name COLLATE "C") FROM lancelsm_table}),
			'broken:- events:true', "$v before: last_checkpoint_at recorded");
	}
	else
	{
		is($node->safe_psql($db, $outcomes),
			"broken||compact|checkpoint_due|f|42501|t\nevents|t|checkpoint|checkpoint_due|t||t",
			"$v before: the outcomes recorded");
		is($node->safe_psql($db,
				q{SELECT split_part(last_message, ': ', 1) FROM lancelsm_table WHERE table_name = 'broken'}),
			'could not compact LanceDB table "broken"', "$v before: the message recorded");
	}

	# the update, and no grant: the next run records everything
	$node->safe_psql($db, 'ALTER EXTENSION lancelsm UPDATE');
	is($node->safe_psql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'lancelsm'}),
		'1.5', "$v: updated to 1.5");
	$node->safe_psql($db, q{UPDATE lancelsm_table SET last_action = NULL, last_source = NULL,
	                          last_ok = NULL, last_sqlstate = NULL, last_finished_at = NULL});
	is(join('|', due_run($db, 'lsm_job')), "$rows|",
		"$v after: the job role's due run acts on both tables");
	is($node->safe_psql($db, $outcomes),
		"broken||compact|checkpoint_due|f|42501|t\nevents|t|checkpoint|checkpoint_due|t||t",
		"$v after: every outcome recorded, with no extra grant");
	is($node->safe_psql($db, q{
			SELECT string_agg(table_name || ':' || coalesce(split_part(last_message, ': ', 1), '-'), ' '
			                  ORDER BY table_name COLLATE "C") FROM lancelsm_table_message}),
		'broken:could not compact LanceDB table "broken" events:-',
		"$v after: the messages recorded in lancelsm_table_message");

	# a role that may not record: an ERROR, before any request
	emu('POST', '/_emulator/log/reset');
	my ($out, $state) = due_run($db, 'no_grant');
	is($state, '42501', "$v after: a role without the grant gets 42501 from its call");
	is(scalar(@{ emu('GET', '/_emulator/log')->{requests} }), 0,
		"$v after: ... before any request");
}

$node->stop;
done_testing();
