# engine_stalled_compaction.pl: patient like the SDK's checkpoint_lsm, with lancelsm in
# shared_preload_libraries.
#
# 1. A server whose compaction passes end without draining anything (the
#    emulator's keep_compacted): the checkpoint waits (no 08P01 after three
#    passes); lancelsm_progress shows the passes without a drop and the
#    diagnosis while it waits, and serves a database whose catalog is still
#    at 1.3 (without those two columns); a cancel ends it with 57014 and
#    the diagnosis in the detail.
# 2. One stalled table does not cost the others their rows: under
#    statement_timeout 3 s, lancelsm_checkpoint_all() stops waiting 300 ms
#    before the deadline and returns a row per declared table, the stalled
#    one not ok (57014, with the diagnosis), the converged one ok with its
#    last_checkpoint_at recorded.
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
my $node = setup_node_conf('patience', $port);
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', q{CREATE EXTENSION lancelsm VERSION '1.3'});
my ($mon, $mon_pid) = open_session($node);
my ($s, $pid) = open_session($node);

# 1. passes that never drain: the checkpoint waits
emu('POST', '/_emulator/tables/events/generations', { count => 2 });
emu('POST', '/_emulator/behaviour', { keep_compacted => JSON::PP::true });
emu('POST', '/_emulator/log/reset');
my $tok = send_query($s, q{SELECT lancelsm_checkpoint('emu', 'events')});
my $diag = 'Compaction passes end without draining anything: '
  . 'compacted generations may stay listed while an index catches up or '
  . 'until garbage collection, or the passes may not have merged them.';
is(query_until($mon,
		"SELECT passes_without_drop >= 4, diagnosis FROM lancelsm_progress WHERE pid = $pid",
		"t|$diag"),
	"t|$diag",
	'stall: past four passes without a drop it still waits, the diagnosis in lancelsm_progress');
my $old = $node->safe_psql('old',
	"SELECT count(*), min(outstanding_generations) FROM lancelsm_progress WHERE pid = $pid");
is($old, '1|2', 'stall: a 1.3 catalog reads the progress view in its own shape');
is($node->safe_psql('old',
		q{SELECT count(*) FROM pg_attribute WHERE attrelid = 'lancelsm_progress'::regclass AND attnum > 0}),
	'14', 'stall: ... of 14 columns');
$mon->query_safe("SELECT pg_cancel_backend($pid)");
my (undef, $err) = finish_query($s, $tok);
is(sqlstate_of($err), '57014', 'stall: cancel ends it with 57014');
like($err,
	qr/DETAIL:  The checkpoint of LanceDB table "events" saw compaction passes end without draining anything, \d+ in a row, with 2 outstanding L0 generations left: compacted generations may stay listed while an index catches up or until garbage collection, or the passes may not have merged them\./,
	'stall: the detail says what it waited on');
is(emu_counts()->{flush_lsm}, 1, 'stall: one flush');
# the pass the cancel left running ends (still draining nothing) first
is(query_until($mon,
		q{SELECT bool_or(compacting) FROM lancelsm_stats('emu', 'events')}, 'f'),
	'f', 'stall: its last pass has ended');
emu('POST', '/_emulator/behaviour', { keep_compacted => JSON::PP::false });

# 2. checkpoint_all: the stalled table gets its row, the other converges
emu('POST', '/_emulator/tables', { name => 'calm', buckets => 1 });
emu('POST', '/_emulator/tables/calm/generations', { count => 2 });
emu('POST', '/_emulator/faults',
	{ table => 'events', route => 'compact_lsm', status => 202, body => '', count => -1 });
$mon->query_safe(q{
	SELECT lancelsm_add_table('emu', 'events', validate => false);
	SELECT lancelsm_add_table('emu', 'calm', validate => false);
});
my ($ms, $rows, $err2) = timed_query($mon, q{
	SET statement_timeout = '3s';
	SELECT table_name, ok, sqlstate,
	       regexp_replace(message, '\d+ in a row', 'N in a row')
	  FROM lancelsm_checkpoint_all() ORDER BY table_name COLLATE "C"});
$mon->query_safe('RESET statement_timeout');
is(sqlstate_of($err2), '', 'all: no error, rows instead') or diag($err2);
is($rows,
	"calm|t||\n"
	  . 'events|f|57014|could not checkpoint LanceDB table "events": '
	  . 'The call stopped waiting shortly before statement_timeout, to return a row for each table. '
	  . 'The checkpoint of LanceDB table "events" saw compaction passes end without draining anything, '
	  . 'N in a row, with 2 outstanding L0 generations left: compacted generations may stay listed while an index catches up or until garbage collection, or the passes may not have merged them.',
	'all: the converged table ok, the stalled one 57014 with the diagnosis');
cmp_ok($ms, '>=', 2600, sprintf('all: it waited until the row deadline (%.0f ms)', $ms));
cmp_ok($ms, '<', 3000, 'all: ... and returned before statement_timeout');
is($mon->query_safe(
		q{SELECT table_name, last_checkpoint_at IS NOT NULL FROM lancelsm_table ORDER BY table_name COLLATE "C"}),
	"calm|t\nevents|f", 'all: last_checkpoint_at recorded for the converged table only');
is($mon->query_safe(
		q{SELECT table_name, ok, sqlstate FROM lancelsm_checkpoint_history ORDER BY table_name COLLATE "C"}),
	"calm|t|\nevents|f|57014", 'all: the history keeps each outcome');

$_->quit for ($mon, $s);
$node->stop;
done_testing();
