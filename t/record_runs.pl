# record_runs.pl: the run history, lancelsm_run_history: one row per action
# lancelsm runs on a table, with lancelsm preloaded
# (lancelsm.max_run_history 50):
#
#   - direct calls: lancelsm_flush, lancelsm_compact, lancelsm_checkpoint
#     (one table and an array), each one row with source direct and its
#     exact passes, polls and requests;
#   - lancelsm_checkpoint_all(): one row per declared table, source
#     checkpoint_all;
#   - lancelsm_checkpoint_due(): one row for the table past its threshold,
#     source checkpoint_due; none for the table it leaves alone; one
#     "reads" row of the run, counting its stats reads (1.5);
#   - a failed flush (the server answers 404): its row has ok false and
#     HV00R, though the call raised its error; a checkpoint ended by
#     statement_timeout: 57014 and the interruption;
#   - lancelsm_info counts the runs kept and their maximum;
#   - a lancelsm_checkpoint_due() run that statement_timeout ends while
#     the server holds its stats answers still has its reads row: ok
#     false, 57014, the reads sent as the server saw them, the tables not
#     due; a read refused before any request is not sent; a strict run's
#     HV000 leaves its reads row ok;
#   - after a restart (an empty run history), a due run that acts on 55
#     declared tables fills the 50 entries with their runs and still
#     keeps its reads row, evicting the oldest of them.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use JSON::PP;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $port = start_emulator();
my $node = setup_node_conf('runs', $port, qq{
lancelsm.max_run_history = 50
});

# runs: the run history's rows from position $from on (1-based), one line
# each: table, action, source, ok, sqlstate, passes, polls, requests, and
# whether started_at <= finished_at
sub runs
{
	my ($from) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT table_name, action, source, ok, coalesce(sqlstate, '-'),
		       passes, polls, requests, started_at <= finished_at
		  FROM (SELECT *, row_number() OVER () AS n FROM lancelsm_run_history) r
		 WHERE n >= $from ORDER BY n});
}

emu_table('one', 2);
emu_table('two', 2);
emu_table('quiet', 0);

is($node->safe_psql('postgres', 'SELECT count(*) FROM lancelsm_run_history'),
	'0', 'no run yet');

# direct calls
$node->safe_psql('postgres', q{SELECT lancelsm_flush('emu', 'one')});
$node->safe_psql('postgres', q{SELECT lancelsm_compact('emu', 'one')});
$node->safe_psql('postgres', q{SELECT lancelsm_checkpoint('emu', 'two')});
# the checkpoint's passes and polls depend on timing: its row must say
# what the emulator counted
my $c = emu('GET', '/_emulator/counts?table=two');
my ($flush, $compact, $stats) =
  map { $c->{$_} // 0 } qw(flush_lsm compact_lsm get_lsm_stats);
is($flush, 1, 'direct: the checkpoint flushed once');
ok($compact > 0, "direct: the checkpoint compacted ($compact passes)");
is(runs(1), join("\n",
		'one|flush|direct|t|-|0|0|1|t',
		'one|compact|direct|t|-|1|0|1|t',
		"two|checkpoint|direct|t|-|$compact|$stats|" . ($flush + $compact + $stats) . '|t'),
	'direct: flush, compact and checkpoint, one row each, counts as the server saw them');

# a failed flush: the call raises, the run is kept
emu('POST', '/_emulator/faults',
	{ table => 'one', route => 'flush_lsm', status => 404 });
my ($rc, $out, $err) = $node->psql('postgres', q{SELECT lancelsm_flush('emu', 'one')});
like($err, qr/HV00R|not found|could not flush/, 'failed flush: the call raises');
emu('DELETE', '/_emulator/faults');
is($node->safe_psql('postgres', q{
		SELECT table_name, action, source, ok, sqlstate, message IS NOT NULL, requests
		  FROM (SELECT *, row_number() OVER () AS n FROM lancelsm_run_history) r
		 WHERE n = 4}),
	'one|flush|direct|f|HV00R|t|1', 'failed flush: its row has ok false and HV00R');

# a checkpoint that statement_timeout ends (the compaction latch held, it
# cannot drain): its row has 57014 and the interruption
emu_table('held', 1);
emu('POST', '/_emulator/tables/held/latch', { bucket => 'b0', held => JSON::PP::true });
($rc, $out, $err) = $node->psql('postgres', q{
	SET statement_timeout = '1s';
	SELECT lancelsm_checkpoint('emu', 'held')});
like($err, qr/statement timeout/, 'timed out checkpoint: the call raises');
emu('POST', '/_emulator/tables/held/latch', { bucket => 'b0', held => JSON::PP::false });
is($node->safe_psql('postgres', q{
		SELECT table_name, action, source, ok, sqlstate, message
		  FROM (SELECT *, row_number() OVER () AS n FROM lancelsm_run_history) r
		 WHERE n = 5}),
	'held|checkpoint|direct|f|57014|the statement was interrupted (canceled, timed out or failed) before the checkpoint finished',
	'timed out checkpoint: its row has 57014 and the interruption');

# lancelsm_checkpoint_all() over the declared tables
$node->safe_psql('postgres', q{
	SELECT lancelsm_add_table('emu', 'one', validate => false);
	SELECT lancelsm_add_table('emu', 'quiet', max_l0_generations => 1, validate => false);
});
emu_table('one_more', 0);
emu('POST', '/_emulator/tables/one/generations', { count => 2, rows => 10 });
is($node->safe_psql('postgres', q{
		SELECT string_agg(table_name || ':' || ok, ' ' ORDER BY table_name)
		  FROM lancelsm_checkpoint_all()}),
	'one:true quiet:true', 'checkpoint_all: both declared tables');
is($node->safe_psql('postgres', q{
		SELECT string_agg(table_name || ':' || action || ':' || source || ':' || ok, ' ' ORDER BY table_name)
		  FROM (SELECT *, row_number() OVER () AS n FROM lancelsm_run_history) r
		 WHERE n >= 6}),
	'one:checkpoint:checkpoint_all:true quiet:checkpoint:checkpoint_all:true',
	'checkpoint_all: one row per declared table');

# lancelsm_checkpoint_due(): quiet is past max_l0_generations, one has
# no threshold: only quiet gets a row
emu('POST', '/_emulator/tables/quiet/generations', { count => 3, rows => 10 });
is($node->safe_psql('postgres', q{
		SELECT string_agg(table_name || ':' || coalesce(action, '-'), ' ' ORDER BY table_name)
		  FROM lancelsm_checkpoint_due()}),
	'one:none quiet:compact', 'checkpoint_due: it compacts quiet only');
is($node->safe_psql('postgres', q{
		SELECT string_agg(table_name || ':' || action || ':' || source || ':' || ok
		                  || ':' || passes || ':' || polls || ':' || requests, ' ')
		  FROM (SELECT *, row_number() OVER () AS n FROM lancelsm_run_history) r
		 WHERE n >= 8}),
	'quiet:compact:checkpoint_due:true:1:0:1',
	'checkpoint_due: one row for the table it acted on, none for the other');
# and (1.5) one row of the run's own: its stats reads, sent and skipped
is($node->safe_psql('postgres', q{
		SELECT concat_ws(':', coalesce(server, '-'), coalesce(table_name, '-'),
		                 action, source, ok, requests, reads_sent, reads_skipped)
		  FROM (SELECT *, row_number() OVER () AS n FROM lancelsm_run_history) r
		 WHERE n = 9}),
	'-:-:reads:checkpoint_due:t:2:2:0',
	'checkpoint_due: a reads row, with its 2 stats reads sent and none skipped');

is($node->safe_psql('postgres',
		'SELECT run_entries, max_run_entries, run_evicted FROM lancelsm_info'),
	'9|50|0', 'lancelsm_info: 9 runs kept of 50, none evicted');

# lancelsm_checkpoint_due() that an error ends still has its reads row
# (1.5), in database due_errors: spare_a and spare_b planned an hour
# ahead by a first run; broken on a server without a user mapping (its
# read fails before any request: not sent); slow_a .. slow_c never read,
# whose stats requests the emulator reads and never answers, until
# statement_timeout ends the run
emu_table($_, 0) for qw(spare_a spare_b slow_a slow_b slow_c);
$node->safe_psql('postgres', 'CREATE DATABASE due_errors');
install_lancelsm($node, $port, 'due_errors');
$node->safe_psql('due_errors', qq{
	CREATE SERVER unmapped FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	SELECT count(lancelsm_add_table('emu', 'spare_' || s, max_l0_generations => 5,
	  validate => false, max_read_interval => '1 hour')) FROM unnest('{a,b}'::text[]) s;
	SELECT lancelsm_add_table('unmapped', 'broken', validate => false);
}, timeout => 30);

# the reads rows of database due_errors from position $from on (0-based):
# ok, sqlstate, message, reads_sent, requests, reads_skipped
sub due_reads_rows
{
	my ($from) = @_;
	return $node->safe_psql('due_errors', qq{
		SELECT ok, sqlstate, message, reads_sent, requests, reads_skipped
		  FROM lancelsm_run_history
		 WHERE action = 'reads' AND database = 'due_errors'
		 ORDER BY finished_at OFFSET $from});
}

is($node->safe_psql('due_errors', q{
		SELECT string_agg(table_name || ':' || ok || ':' || coalesce(sqlstate, '-'), ' '
		                  ORDER BY table_name COLLATE "C")
		  FROM lancelsm_checkpoint_due()}),
	'broken:false:42704 spare_a:true:- spare_b:true:-',
	'due run 1: broken fails without a user mapping, the spares are read');
is(due_reads_rows(0), 't|||2|2|0',
	'due run 1: its reads row counts the two reads sent, not the read refused before any request');

# run 2: slow_a .. slow_c are read, their answers held; spare_a and
# spare_b are not due
$node->safe_psql('due_errors', q{
	SELECT count(lancelsm_add_table('emu', 'slow_' || s, validate => false))
	  FROM unnest('{a,b,c}'::text[]) s});
emu('POST', '/_emulator/faults', { table => $_, route => 'get_lsm_stats',
	action => 'hang', count => -1, max_ms => 60000 })
  for qw(slow_a slow_b slow_c);
emu('POST', '/_emulator/log/reset');
my $s = $node->background_psql('due_errors', on_error_stop => 0, timeout => 60);
$s->query_safe('\set VERBOSITY verbose');
$s->query_safe("SET statement_timeout = '3s'");
my $call = send_query($s, 'SELECT count(*) FROM lancelsm_checkpoint_due()');

# the stats requests of each table called since the log reset, "t:n ..."
sub stats_requests
{
	my $t = emu('GET', '/_emulator/counts/tables')->{tables};
	return join(' ', map { "$_:" . ($t->{$_}{get_lsm_stats} // 0) }
		  sort keys %$t);
}
my $until = time() + 10;
sleep(0.02)
  while stats_requests() ne 'slow_a:1 slow_b:1 slow_c:1' && time() < $until;
is(stats_requests(), 'slow_a:1 slow_b:1 slow_c:1',
	'due run 2: the three reads reached the server, which holds their answers');
($out, $err) = finish_query($s, $call);
like($err, qr/ERROR:\s+57014: canceling statement due to statement timeout/,
	'due run 2: statement_timeout ends it with 57014');
$s->quit;
is(stats_requests(), 'slow_a:1 slow_b:1 slow_c:1',
	'due run 2: no other request reached the server');
is(due_reads_rows(1),
	"f|57014|canceling statement due to statement timeout|3|3|2",
	'due run 2: its reads row, ok false, 57014, the 3 reads sent, the 2 tables not due');
is($node->safe_psql('due_errors', q{
		SELECT finished_at - started_at >= interval '2.5 s'
		  FROM lancelsm_run_history
		 WHERE action = 'reads' AND database = 'due_errors'
		 ORDER BY finished_at OFFSET 1}),
	't', 'due run 2: its reads row was written when the timeout ended it');

# run 3, strict: broken fails, the run ends in HV000 after its reads and
# actions: its reads row is ok (broken's failure is its own row)
emu('POST', '/_emulator/faults/clear');
my ($sout, $serr) = psql_verbose($node, q{\c due_errors
SELECT count(*) FROM lancelsm_checkpoint_due(strict => true)});
is(sqlstate_of($serr), 'HV000', 'due run 3, strict: broken failed, HV000');
is(due_reads_rows(2), 't|||3|3|2',
	'due run 3, strict: its reads row is ok, the 3 reads sent, the 2 tables not due');

# a run history full of declared tables' runs keeps the due run's reads
# row: 55 declared tables over their threshold (max_l0_generations 0, 1
# L0 generation each), one compact each
$node->restart;
my @full = map { "full_$_" } 1 .. 55;
emu_table($_, 1) for @full;
$node->safe_psql('due_errors', q{
	SELECT count(lancelsm_add_table('emu', 'full_' || i, max_l0_generations => 0,
	  validate => false)) FROM generate_series(1, 55) i});
is($node->safe_psql('due_errors', q{
		SELECT count(*) FILTER (WHERE action = 'compact' AND ok), count(*)
		  FROM lancelsm_checkpoint_due() WHERE table_name LIKE 'full_%'}),
	'55|55', 'due run 4: 55 declared tables compacted');
is($node->safe_psql('due_errors', q{
		SELECT count(*) FILTER (WHERE action = 'compact'),
		       string_agg(concat_ws(':', ok, reads_sent, requests, reads_skipped), ' ')
		         FILTER (WHERE action = 'reads')
		  FROM lancelsm_run_history}),
	'49|t:58:58:2',
	'due run 4: the full run history keeps its reads row and the 49 newest compacts');
is($node->safe_psql('due_errors', 'SELECT run_entries, run_evicted FROM lancelsm_info'),
	'50|6', 'due run 4: 6 runs evicted, the 50 entries in use');

$node->stop;
done_testing();
