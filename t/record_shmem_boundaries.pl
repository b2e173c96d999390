# record_shmem_boundaries.pl: shared memory that knows its boundaries, with lancelsm
# in shared_preload_libraries, a second database (lake2) and a second role
# (intruder, no superuser) that owns servers of its own.
#
# 1. Herds end per table: one call over a fast and a held ("slow") table
#    publishes the fast table's outcome the moment it finishes: its
#    history entry and the end of its progress row come before the call
#    ends, and a checkpoint of the fast table from the second database
#    and role leads a run of its own at once (no wait behind the call,
#    no 57014); lancelsm_checkpoint_all() there does not skip it.
# 2. Shared memory knows its database: history and progress show the
#    database; a server of the same name in another database, whose
#    endpoint answers otherwise, neither turns this database's failure
#    into ok nor lends its pass duration to this database's checkpoint;
#    made-up names answered by another server's endpoint do not evict
#    this server's entries; a recalled pass duration never puts the first
#    poll past lancelsm.poll_interval_max.
# 3. The herd key holds the request target and every credential: two
#    servers that differ only in id_delimiter, or only in their client
#    certificate and key, do not share a run.
# 4. One call claims at most 32 progress entries and herd runs: the rest
#    run unlisted (lancelsm_info's progress_skipped counts them) and unshared.
# 5. A database still at 1.2 is served by this library (its views, and
#    lancelsm_checkpoint_due() without slice arguments); an old history
#    file is discarded at startup with a LOG line.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use JSON::PP;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $port = start_emulator();
my $evil = start_extra_emulator();
my $node = setup_node_conf('boundaries', $port, qq{
lancelsm.poll_interval_max = '1s'
lancelsm.max_history_entries = 8
max_connections = 60
});
my ($other) = open_session($node);

# wait_for_sql: query_until in the other session.
sub wait_for_sql { return query_until($other, @_); }

# try_sql: $sql in database $db (default postgres); its output, or its
# error (a failed test, not the end of the file, where a column is
# missing).
sub try_sql
{
	my ($sql, $db) = @_;
	my ($rc, $out, $err) = $node->psql($db // 'postgres', $sql);
	return $rc == 0 ? $out : "error: $err";
}

# try_until: try_sql until it returns $want (at most 10 s); the last
# answer.
sub try_until
{
	my ($sql, $want) = @_;
	my $until = time() + 10;
	my $out;

	while (time() < $until)
	{
		$out = try_sql($sql);
		return $out if $out eq $want;
		sleep(0.02);
	}
	return $out;
}

# pin: hold or release the compaction latch of bucket b0 of a table.
sub pin
{
	my ($table, $held) = @_;
	emu('POST', "/_emulator/tables/$table/latch",
		{ bucket => 'b0', held => $held ? JSON::PP::true : JSON::PP::false });
}

# table: a one-bucket table on the main emulator with $gens L0 generations.
sub table
{
	my ($name, $gens) = @_;
	emu('POST', '/_emulator/tables', { name => $name, buckets => 1 });
	emu('POST', "/_emulator/tables/$name/generations", { count => $gens })
	  if $gens;
}

# first_poll_ms: on emulator log $log, the milliseconds from the last
# compact request to the stats read that follows it.
sub first_poll_ms
{
	my ($reqs) = @_;
	my ($compact, $poll);
	for my $r (@$reqs)
	{
		if ($r->{route} eq 'compact_lsm') { ($compact, $poll) = ($r->{time}, undef); }
		elsif ($r->{route} eq 'get_lsm_stats' && defined $compact && !defined $poll)
		{
			$poll = $r->{time};
		}
	}
	return defined $poll ? int(1000 * ($poll - $compact)) : -1;
}

# the second database and the second role
$node->safe_psql('postgres', q{
	CREATE ROLE intruder LOGIN;
	GRANT USAGE ON FOREIGN DATA WRAPPER lancelsm TO intruder;
	CREATE DATABASE lake2;
});
$node->safe_psql('lake2', q{
	CREATE EXTENSION lancelsm;
	GRANT USAGE ON FOREIGN DATA WRAPPER lancelsm TO intruder;
});
# as_intruder: SQL as the second role in database $db
sub as_intruder
{
	my ($db, $sql) = @_;
	return $node->safe_psql($db, $sql, extra_params => [ '-U', 'intruder' ]);
}
# lake2's "emu" is the intruder's, on the intruder's own endpoint; "main"
# is the same endpoint and key as postgres's "emu"
as_intruder('lake2', qq{
	CREATE SERVER emu FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$evil->{port}');
	CREATE USER MAPPING FOR intruder SERVER emu OPTIONS (api_key '$API_KEY');
	CREATE SERVER main FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER main OPTIONS (api_key '$API_KEY');
});
# in postgres, the intruder owns "evil", on its own endpoint
as_intruder('postgres', qq{
	CREATE SERVER evil FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$evil->{port}');
	CREATE USER MAPPING FOR intruder SERVER evil OPTIONS (api_key '$API_KEY');
});

# 2a. history: flooding and spoofing from another server and database
$other->query_safe('SELECT lancelsm_checkpoint_history_reset()');
table('hist', 1);
emu('POST', '/_emulator/faults',
	{ table => 'hist', route => 'compact_lsm', status => 404 });
is($other->query_safe(
		q{SELECT string_agg(table_name || ':' || left(ok::text, 1) || ':' || coalesce(sqlstate, ''), ' ' ORDER BY table_name)
		  FROM lancelsm_checkpoint('emu', ARRAY['hist', 'events'])}),
	'events:t: hist:f:HV00R', 'history: this database fails hist, converges events');
emu('DELETE', '/_emulator/faults');
my @made_up = map { sprintf('made_up_%02d', $_) } 1 .. 20;
emu_at($evil, 'POST', '/_emulator/tables', { name => $_, buckets => 1 })
  for (@made_up, 'hist');
is(as_intruder('postgres',
		"SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint('evil', ARRAY['"
		  . join("', '", @made_up) . "'])"),
	'20', 'flood: another server\'s owner checkpoints 20 made-up names, answered by its endpoint');
is($other->query_safe(
		q{SELECT string_agg(table_name || ':' || left(ok::text, 1), ' ' ORDER BY table_name)
		  FROM lancelsm_checkpoint_history WHERE server = 'emu'}),
	'events:t hist:f', 'flood: this server\'s entries are all kept');
is($other->query_safe(
		q{SELECT count(*) FROM lancelsm_checkpoint_history WHERE server = 'evil'}),
	'6', 'flood: the flooder keeps only what the others left free');
is(as_intruder('lake2',
		q{SELECT ok FROM lancelsm_checkpoint('emu', ARRAY['hist'])}),
	't', 'spoof: a server named emu in lake2 checkpoints its own hist');
is(try_sql(
		q{SELECT string_agg(database || ':' || server || ':' || left(ok::text, 1), ' ' ORDER BY database)
		  FROM lancelsm_checkpoint_history WHERE table_name = 'hist'}),
	'lake2:emu:t postgres:emu:f',
	'spoof: this database\'s failure stays a failure, next to lake2\'s own entry');

# 2b. pace memory: a pass of 4 s learnt in lake2 on a server of the same
# name does not delay this database's first poll
emu_at($evil, 'POST', '/_emulator/tables', { name => 'paced', buckets => 1 });
emu_at($evil, 'POST', '/_emulator/tables/paced/generations', { count => 1 });
emu_at($evil, 'POST', '/_emulator/tables/paced/pass_script', { pass_ms => [4000] });
is(as_intruder('lake2', q{SELECT ok, passes FROM lancelsm_checkpoint('emu', ARRAY['paced'])}),
	't|1', 'pace: lake2 learns a 4 s pass of its own paced');
table('paced', 1);
emu('POST', '/_emulator/log/reset');
is($other->query_safe(q{SELECT ok, passes FROM lancelsm_checkpoint('emu', ARRAY['paced'])}),
	"t\|1", 'pace: this database checkpoints its paced');
my $gap = first_poll_ms(emu('GET', '/_emulator/log?table=paced')->{requests});
ok($gap >= 0 && $gap < 800,
	"pace: its first poll came ${gap} ms after compact, not after lake2's pass");

# 2c. a recalled pass duration never delays the first poll past
# lancelsm.poll_interval_max (learnt and recalled at the same poll
# interval bounds: a pace learnt within other bounds is not recalled)
table('capped', 1);
emu('POST', '/_emulator/tables/capped/pass_script', { pass_ms => [ 4000, 4000 ] });
is($other->query_safe(q{SET lancelsm.poll_interval_max = '200ms';
		SELECT ok, passes FROM lancelsm_checkpoint('emu', ARRAY['capped']);
		RESET lancelsm.poll_interval_max}),
	"t\|1", 'cap: a 4 s pass learnt');
emu('POST', '/_emulator/tables/capped/generations', { count => 1 });
emu('POST', '/_emulator/log/reset');
is($other->query_safe(q{SET lancelsm.poll_interval_max = '200ms';
		SELECT ok, passes FROM lancelsm_checkpoint('emu', ARRAY['capped']);
		RESET lancelsm.poll_interval_max}),
	"t\|1", 'cap: the next checkpoint converges');
$gap = first_poll_ms(emu('GET', '/_emulator/log?table=capped')->{requests});
ok($gap >= 0 && $gap < 800,
	"cap: its first poll came ${gap} ms after compact (poll_interval_max 200ms)");

my ($a, $apid) = open_session($node);
my ($c, $cpid) = open_session($node);

# 3. servers that differ only in id_delimiter do not share a run
$other->query_safe(qq{
	CREATE SERVER emu_dot FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port', id_delimiter '.');
	CREATE USER MAPPING FOR PUBLIC SERVER emu_dot OPTIONS (api_key '$API_KEY');
});
table('shared_x', 2);
pin('shared_x', 1);
my $t1 = send_query($a, q{SELECT ok, polls > 0 FROM lancelsm_checkpoint('emu', ARRAY['shared_x'])});
is(wait_for_sql("SELECT count(*) FROM lancelsm_progress WHERE pid = $apid AND target_generations IS NOT NULL", '1'),
	'1', 'delimiter: a run of shared_x on emu is going');
my $t2 = send_query($c, q{SELECT ok, polls > 0 FROM lancelsm_checkpoint('emu_dot', ARRAY['shared_x'])});
is(wait_for_sql("SELECT count(*) FROM lancelsm_progress WHERE pid = $cpid AND target_generations IS NOT NULL", '1'),
	'1', 'delimiter: emu_dot (?delimiter=.) leads a run of its own');
pin('shared_x', 0);
is((finish_query($a, $t1))[0], 't|t', 'delimiter: emu\'s run converges by its own polls');
is((finish_query($c, $t2))[0], 't|t', 'delimiter: emu_dot\'s run converges by its own polls');

# 3b. nor do servers that differ only in their client certificate and key
# (unused over plain http://, yet part of what a request authenticates with)
my $pem = $node->data_dir . '/PG_VERSION';
$other->query_safe(qq{
	CREATE SERVER emu_cert FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port',
	           ssl_cert_file '$pem', ssl_key_file '$pem');
	CREATE USER MAPPING FOR PUBLIC SERVER emu_cert OPTIONS (api_key '$API_KEY');
});
emu('POST', '/_emulator/tables/shared_x/generations', { count => 2 });
pin('shared_x', 1);
$t1 = send_query($a, q{SELECT ok, polls > 0 FROM lancelsm_checkpoint('emu', ARRAY['shared_x'])});
is(wait_for_sql("SELECT count(*) FROM lancelsm_progress WHERE pid = $apid AND target_generations IS NOT NULL", '1'),
	'1', 'certificate: a run of shared_x on emu is going');
$t2 = send_query($c, q{SELECT ok, polls > 0 FROM lancelsm_checkpoint('emu_cert', ARRAY['shared_x'])});
is(wait_for_sql("SELECT count(*) FROM lancelsm_progress WHERE pid = $cpid AND target_generations IS NOT NULL", '1'),
	'1', 'certificate: emu_cert leads a run of its own');
pin('shared_x', 0);
is((finish_query($a, $t1))[0], 't|t', 'certificate: emu\'s run converges by its own polls');
is((finish_query($c, $t2))[0], 't|t', 'certificate: emu_cert\'s run converges by its own polls');

# 4. one call claims at most 32 progress entries and herd runs
my @many = map { sprintf('many_%02d', $_) } 1 .. 40;
for my $t (@many)
{
	table($t, 1);
	pin($t, 1);
}
my $skipped0 = $other->query_safe('SELECT progress_skipped FROM lancelsm_info');
my $t3 = send_query($a, "SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint('emu', ARRAY['"
	  . join("', '", @many) . "'])");
is(wait_for_sql("SELECT count(*) FROM lancelsm_progress WHERE pid = $apid AND target_generations IS NOT NULL", '32'),
	'32', 'bounded: the call shows 32 tables');
is($other->query_safe("SELECT progress_skipped - $skipped0 FROM lancelsm_info"), '8',
	'bounded: the 8 others are counted as skipped');
my $t4 = send_query($c, q{SELECT ok, polls > 0 FROM lancelsm_checkpoint('emu', ARRAY['many_40'])});
is(wait_for_sql("SELECT count(*) FROM lancelsm_progress WHERE pid = $cpid AND target_generations IS NOT NULL", '1'),
	'1', 'bounded: a table past the 32nd is unshared: another session leads its own run');
pin($_, 0) for @many;
is((finish_query($a, $t3))[0], '40', 'bounded: all 40 tables converge');
is((finish_query($c, $t4))[0], 't|t', 'bounded: the other session converges by its own polls');
is($other->query_safe("SELECT count(*) FROM lancelsm_progress"), '0',
	'bounded: no progress entry is left');

# 1. herds end per table; progress shows the database
table('fast', 1);
table('slow', 2);
pin('slow', 1);
my $call = send_query($a,
	q{SELECT table_name, ok FROM lancelsm_checkpoint('emu', ARRAY['fast', 'slow'])});
is(wait_for_sql(
		q{SELECT count(*) FROM lancelsm_checkpoint_history
		  WHERE table_name = 'fast' AND ok},
		'1'),
	'1', 'per table: fast\'s outcome is in the history while the call runs');
is(try_until("SELECT database || ':' || table_name FROM lancelsm_progress WHERE pid = $apid",
		'postgres:slow'),
	'postgres:slow', 'per table: the call shows slow only, with its database');
my $b = $node->background_psql('lake2', on_error_stop => 0, timeout => 30,
	extra_params => [ '-U', 'intruder' ]);
$b->query_safe('\set VERBOSITY verbose');
emu('POST', '/_emulator/tables/fast/generations', { count => 1 });
my ($out, $err) = finish_query($b, send_query($b,
		q{SET statement_timeout = '5s';
		  SELECT ok, polls > 0, message IS NULL FROM lancelsm_checkpoint('main', ARRAY['fast'])}));
is("$out$err", 't|t|t',
	'per table: lake2\'s intruder leads its own run of fast at once');
$node->safe_psql('lake2', q{SELECT lancelsm_add_table('main', 'fast', validate => false)});
is(try_sql(q{SELECT table_name, ok, coalesce(message, '') FROM lancelsm_checkpoint_all()},
		'lake2'),
	'fast|t|', 'per table: lancelsm_checkpoint_all() in lake2 does not skip fast');
is(wait_for_sql("SELECT table_name FROM lancelsm_progress WHERE pid = $apid", 'slow'),
	'slow', 'per table: slow still runs');
pin('slow', 0);
($out) = finish_query($a, $call);
is($out, "fast|t\nslow|t", 'per table: the call ends with both tables converged');

# 5a. a database still at 1.2 is served by this library
$node->safe_psql('postgres', 'CREATE DATABASE lake12');
$node->safe_psql('lake12', q{CREATE EXTENSION lancelsm VERSION '1.2'});
is($node->safe_psql('lake12', q{
	SELECT (SELECT count(*) FROM pg_attribute WHERE attrelid = 'lancelsm_checkpoint_history'::regclass AND attnum > 0),
	       (SELECT count(*) > 0 FROM lancelsm_checkpoint_history),
	       (SELECT count(*) FROM lancelsm_progress)}),
	'8|t|0', '1.2 catalog: its views read this library\'s shared memory');
# the checkpoint_due of 1.2 and 1.3, without slice arguments, runs the
# whole declared set
$node->safe_psql('lake12',
	q{INSERT INTO lancelsm_table (server, table_name) VALUES ('nosuch', 'a'), ('nosuch', 'b')});
is($node->safe_psql('lake12', q{
	SELECT string_agg(table_name || ':' || sqlstate, ' ' ORDER BY table_name)
	  FROM lancelsm_checkpoint_due()}),
	'a:42704 b:42704', '1.2 catalog: lancelsm_checkpoint_due() without arguments runs every table');
$node->safe_psql('lake12', q{DELETE FROM lancelsm_table});
$node->safe_psql('lake12', 'ALTER EXTENSION lancelsm UPDATE');
is(try_sql(q{
	SELECT string_agg(DISTINCT database, ' ' ORDER BY database) FROM lancelsm_checkpoint_history},
		'lake12'),
	'lake2 postgres', '1.3 after ALTER EXTENSION UPDATE: the database column');

# 5b. an old history file (format 2, lancelsm 1.2) is discarded with a LOG
$b->quit;
$_->quit for ($a, $c, $other);
$node->stop;
my $file = $node->data_dir . '/pg_stat/lancelsm_history.stat';
ok(-s $file, 'history file: written at shutdown');
open(my $fh, '>', $file) or die "$file: $!";
binmode $fh;
print $fh pack('LLLl', 0x4C534D48, 2, 1000, 0);
close $fh;
my $log_offset = -s $node->logfile;
$node->start;
ok($node->log_contains(
		'discarding lancelsm checkpoint history file "pg_stat/lancelsm_history.stat" of an older format',
		$log_offset),
	'history file: a format 2 file is discarded with a LOG line');
is($node->safe_psql('postgres', 'SELECT count(*) FROM lancelsm_checkpoint_history'),
	'0', 'history file: nothing of it is read');
ok(!-e $file, 'history file: removed');

stop_extra_emulator($evil);
$node->stop;
done_testing();
