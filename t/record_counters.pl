# record_counters.pl: the table counters, lancelsm_table_counters: per
# (database, server, table) and action, the runs lancelsm ran and what
# they cost, with lancelsm preloaded (lancelsm.max_table_counters 6):
#
#   - direct flush, compact and checkpoint: one row each, with the counts
#     the emulator saw; a failed flush counted in runs and failures;
#   - lancelsm_checkpoint_all() and lancelsm_checkpoint_due() count too,
#     and the counters add up to the run history, time included;
#   - lancelsm_table_counters_reset by table, by server and by database
#     removes exactly the entries it names, and returns their number;
#   - with all 6 entries in use, new tables evict by the fair rule (their
#     own holder's oldest undeclared entries, not another role's nor
#     declared tables'), counted in lancelsm_info;
#   - lancelsm_last_stats: the stats the due run and lancelsm_table_stats
#     read, exactly as lancelsm_table_stats showed them, a failed read's
#     SQLSTATE, and no request sent by reading the view.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $port = start_emulator();
my $node = setup_node_conf('counters', $port, qq{
lancelsm.max_table_counters = 6
});

# counters: the rows of lancelsm_table_counters in database postgres, one
# line each: database, server, table, action, runs, failures, passes,
# polls, requests, retries
sub counters
{
	return $node->safe_psql('postgres', q{
		SELECT database, server, table_name, action, runs, failures, passes,
		       polls, requests, retries
		  FROM lancelsm_table_counters
		 ORDER BY database COLLATE "C", server COLLATE "C",
		          table_name COLLATE "C", action COLLATE "C"});
}

# sum0: the sum of a list of numbers
sub sum0 { my $t = 0; $t += $_ for @_; return $t; }

emu_table('one', 2);
emu_table('two', 2);
emu_table('quiet', 0);

is(counters(), '', 'nothing counted yet');

# direct calls
$node->safe_psql('postgres', q{SELECT lancelsm_flush('emu', 'one')});
$node->safe_psql('postgres', q{SELECT lancelsm_compact('emu', 'one')});
$node->safe_psql('postgres', q{SELECT lancelsm_checkpoint('emu', 'two')});
my $c = emu('GET', '/_emulator/counts?table=two');
my ($flush, $compact, $stats) =
  map { $c->{$_} // 0 } qw(flush_lsm compact_lsm get_lsm_stats);
is($flush, 1, 'direct: the checkpoint flushed once');
is(counters(), join("\n",
		'postgres|emu|one|compact|1|0|1|0|1|0',
		'postgres|emu|one|flush|1|0|0|0|1|0',
		"postgres|emu|two|checkpoint|1|0|$compact|$stats|"
		  . ($flush + $compact + $stats) . '|0'),
	'direct: one row per table and action, counts as the server saw them');

# a failed flush: counted in runs and failures
emu('POST', '/_emulator/faults',
	{ table => 'one', route => 'flush_lsm', status => 404 });
my ($rc, $out, $err) = $node->psql('postgres', q{SELECT lancelsm_flush('emu', 'one')});
isnt($rc, 0, 'failed flush: the call raises');
emu('DELETE', '/_emulator/faults');
is($node->safe_psql('postgres', q{
		SELECT runs, failures, requests FROM lancelsm_table_counters
		 WHERE table_name = 'one' AND action = 'flush'}),
	'2|1|2', 'failed flush: 2 runs, 1 failure, 2 requests');

# lancelsm_checkpoint_all() and lancelsm_checkpoint_due()
$node->safe_psql('postgres', q{
	SELECT lancelsm_add_table('emu', 'one', validate => false);
	SELECT lancelsm_add_table('emu', 'quiet', max_l0_generations => 1, validate => false);
});
is($node->safe_psql('postgres',
		'SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint_all()'),
	'2', 'checkpoint_all: both declared tables checkpointed');
emu('POST', '/_emulator/tables/quiet/generations', { count => 3, rows => 10 });
is($node->safe_psql('postgres', q{
		SELECT string_agg(table_name || ':' || ok || ':' || coalesce(action, '-'), ' '
		                  ORDER BY table_name)
		  FROM lancelsm_checkpoint_due()}),
	'one:true:none quiet:true:compact', 'checkpoint_due: it compacts quiet only');
$c = emu('GET', '/_emulator/counts?table=quiet');
is($node->safe_psql('postgres', q{
		SELECT sum(requests) FROM lancelsm_table_counters WHERE table_name = 'quiet'}),
	(sum0(map { $c->{$_} // 0 } qw(flush_lsm compact_lsm get_lsm_stats)) - 1),
	'quiet: every request the server saw counted, but the due run\'s stats read');
is($node->safe_psql('postgres', q{
		SELECT string_agg(table_name || ':' || action || ':' || runs || ':' || passes
		                  || ':' || requests, ' ' ORDER BY table_name, action)
		  FROM lancelsm_table_counters WHERE table_name = 'quiet'}),
	'quiet:checkpoint:1:0:2 quiet:compact:1:1:1',
	'checkpoint_all and checkpoint_due: counted (the due run\'s stats read is no run)');

# the counters add up to the run history, which keeps every run here
is($node->safe_psql('postgres', q{
		SELECT count(*) FROM (
		  SELECT table_name, action, count(*) AS runs,
		         count(*) FILTER (WHERE NOT ok) AS failures,
		         sum(passes) AS passes, sum(polls) AS polls,
		         sum(requests) AS requests,
		         round(sum(extract(epoch FROM finished_at - started_at)), 6) AS seconds
		    FROM lancelsm_run_history WHERE action <> 'reads'
		   GROUP BY table_name, action
		  EXCEPT
		  SELECT table_name, action, runs, failures, passes, polls, requests,
		         round(seconds::numeric, 6)
		    FROM lancelsm_table_counters) d}),
	'0', 'the counters equal the run history summed per table and action, seconds included');
is($node->safe_psql('postgres', q{
		SELECT count(*), count(DISTINCT stats_since),
		       bool_and(stats_since <= now() AND seconds > 0)
		  FROM lancelsm_table_counters}),
	'6|3|t', '6 rows of 3 tables, each table with its stats_since');

# reset by table, by server, by database
add_server($node, 'postgres', 'emu2', $port);
$node->safe_psql('postgres', q{
	SELECT lancelsm_flush('emu2', 'one');
	SELECT lancelsm_flush('emu2', 'two');
	CREATE DATABASE lakeb;
});
install_lancelsm($node, $port, 'lakeb');
$node->safe_psql('lakeb', q{SELECT lancelsm_flush('emu', 'two')});
my $tables = q{
	SELECT string_agg(DISTINCT database || '.' || server || '.' || table_name, ' '
	                  ORDER BY database || '.' || server || '.' || table_name)
	  FROM lancelsm_table_counters};
is($node->safe_psql('postgres', $tables),
	'lakeb.emu.two postgres.emu.one postgres.emu.quiet postgres.emu.two postgres.emu2.one postgres.emu2.two',
	'6 tables counted in 2 databases');
# reset_leaves: lancelsm_table_counters_reset($args) removes $removed
# entries and leaves the tables $left; $what names the case
sub reset_leaves
{
	my ($args, $removed, $left, $what) = @_;

	is($node->safe_psql('postgres', "SELECT lancelsm_table_counters_reset($args)"),
		$removed, "$what: $removed removed");
	is($node->safe_psql('postgres', $tables), $left, "$what: only what it names");
}
my $db = q{(SELECT oid FROM pg_database WHERE datname = 'postgres')};
reset_leaves("$db, (SELECT oid FROM pg_foreign_server WHERE srvname = 'emu'), 'two'", 1,
	'lakeb.emu.two postgres.emu.one postgres.emu.quiet postgres.emu2.one postgres.emu2.two',
	'reset by table');
reset_leaves("$db, (SELECT oid FROM pg_foreign_server WHERE srvname = 'emu2')", 2,
	'lakeb.emu.two postgres.emu.one postgres.emu.quiet', 'reset by server');
reset_leaves(q{(SELECT oid FROM pg_database WHERE datname = 'lakeb')}, 1,
	'postgres.emu.one postgres.emu.quiet', 'reset by database');
is($node->safe_psql('postgres', q{SELECT lancelsm_table_counters_reset()}),
	'2', 'reset of all: the last two');
my $before = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$node->safe_psql('postgres', q{SELECT lancelsm_flush('emu', 'one')});
is($node->safe_psql('postgres', qq{
		SELECT runs, stats_since > '$before' FROM lancelsm_table_counters}),
	'1|t', 'a table counted again starts from 1, with a new stats_since');
$node->safe_psql('postgres', q{SELECT lancelsm_table_counters_reset()});

# eviction: the role victim counts 2 tables, the superuser its 2 declared
# tables and 5 undeclared ones: the 3 past 6 evict the superuser's own
# oldest undeclared entries (it holds the most), never the victim's nor
# the declared ones
my @victim = map { "victim_$_" } 1 .. 2;
my @flood = map { "flood_$_" } 1 .. 5;
emu_table($_, 0) for (@victim, @flood);
$node->safe_psql('postgres', q{
	CREATE ROLE victim LOGIN;
	GRANT USAGE ON FOREIGN SERVER emu TO victim;
});
$node->safe_psql('postgres', "SELECT lancelsm_flush('emu', '$_')",
	extra_params => [ '-U', 'victim' ]) for @victim;
$node->safe_psql('postgres', 'SELECT count(*) FROM lancelsm_checkpoint_all()');
$node->safe_psql('postgres', "SELECT lancelsm_flush('emu', '$_')") for @flood;
is($node->safe_psql('postgres', $tables),
	'postgres.emu.flood_4 postgres.emu.flood_5 postgres.emu.one postgres.emu.quiet postgres.emu.victim_1 postgres.emu.victim_2',
	'eviction: the superuser\'s 3 oldest undeclared entries went');
is($node->safe_psql('postgres',
		'SELECT counter_entries, max_counter_entries, counter_evicted FROM lancelsm_info'),
	'6|6|3', 'lancelsm_info: 6 of 6 entries, 3 evicted');

# the last stats: the due run reads both declared tables (whatever their
# plans: lancelsm.due_plan off); one and quiet get generations first,
# then lancelsm_table_stats reads them again
emu('POST', '/_emulator/tables/one/generations', { count => 4, rows => 10 });
$node->safe_psql('postgres',
	'SET lancelsm.due_plan = off; SELECT count(*) FROM lancelsm_checkpoint_due()');
# stats_line: a query of one line per table of $view, ordered by name:
# the table, whether its read succeeded ($ok, an expression), its
# SQLSTATE ($sqlstate) and the totals, NULL as "-"
sub stats_line
{
	my ($view, $ok, $sqlstate) = @_;
	my @cols = qw(lsm_enabled buckets l0_generations l0_bytes memtable_rows
	  wal_lag_total wal_lag_max compacting_buckets);

	return "SELECT concat_ws(' ', table_name, $ok, coalesce($sqlstate, '-'), "
	  . join(', ', map { "coalesce($_\:\:text, '-')" } @cols)
	  . qq{) FROM $view ORDER BY table_name COLLATE "C"};
}
my $last = stats_line('lancelsm_last_stats', 'ok', 'sqlstate');
my $fresh = stats_line('lancelsm_table_stats', 'error IS NULL', 'error_sqlstate');
my $after_due = $node->safe_psql('postgres', $last);
my $total = emu('GET', '/_emulator/counts')->{total};
$node->safe_psql('postgres', 'SELECT * FROM lancelsm_last_stats') for 1 .. 3;
is(emu('GET', '/_emulator/counts')->{total}, $total,
	'last stats: reading the view 3 times sends no request');
is($node->safe_psql('postgres', $fresh), $after_due,
	'last stats: the due run\'s reads, as lancelsm_table_stats shows them');
like($after_due, qr/^one t - true 1 [1-9]/, 'last stats: one\'s generations were read');
is($node->safe_psql('postgres', q{
		SELECT count(*) FROM lancelsm_last_stats s JOIN lancelsm_run_history r USING (table_name)
		 WHERE s.read_at > r.finished_at}),
	$node->safe_psql('postgres', q{
		SELECT count(*) FROM lancelsm_last_stats s JOIN lancelsm_run_history r USING (table_name)}),
	'last stats: read after every run of their tables');

# a failed read: kept with its SQLSTATE and no numbers
emu('POST', '/_emulator/faults',
	{ table => 'quiet', route => 'get_lsm_stats', status => 404, count => -1 });
$node->safe_psql('postgres', 'SELECT count(*) FROM lancelsm_table_stats');
emu('DELETE', '/_emulator/faults');
is($node->safe_psql('postgres', "$last OFFSET 1"),
	'quiet f HV00R - - - - - - - -',
	'last stats: a failed read has its SQLSTATE and no numbers');

$node->stop;
done_testing();
