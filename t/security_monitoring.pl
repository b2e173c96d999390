# security_monitoring.pl: monitoring belongs to the DBA's job, with
# lancelsm in shared_preload_libraries and lancelsm.max_table_counters 20.
#
# Roles: "dba" (no superuser; USAGE on the server, the PUBLIC user
# mapping's right key, and UPDATE (last_checkpoint_at) on lancelsm_table:
# it may record), "peer" (USAGE on the server only, with its own user
# mapping and a wrong key) and "watcher" (pg_read_all_stats).  15 tables
# are declared; dba reads and checkpoints them all, t15's compaction
# refused (403), so that each has last stats and counters, and t15 a
# failure message.
#
# 1. peer reads lancelsm_table_stats (every read a 401) and runs direct
#    flushes and checkpoints on declared tables: lancelsm_last_stats and
#    lancelsm_table_counters are exactly as dba left them.  Its due job and
#    checkpoint_all raise 42501 before any request.
# 2. peer's 12 made-up names fill the 5 free entries and evict only their
#    own (7); dba's 12 made-up names evict one of peer's, then dba's own
#    (dba, holding the 15 declared, holds the most): no declared table's
#    entry goes.
# 3. The server's message is in lancelsm_table_message, readable by
#    watcher, not by peer nor dba (42501); lancelsm_status shows it to
#    watcher only; lancelsm_table has no last_message any more.
# 4. A declared table whose counters were reset: peer's direct flush of it
#    is not counted (the call knows the table is declared), dba's is.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $port = start_emulator();
my $node = setup_node_conf('monitoring', $port,
	"lancelsm.max_table_counters = 20\n");
my @declared = map { sprintf('t%02d', $_) } 1 .. 15;
emu_table($_, 1) for @declared;
emu('POST', '/_emulator/faults',
	{ table => 't15', route => 'compact_lsm', status => 403, count => -1 });

$node->safe_psql('postgres', qq{
	CREATE ROLE dba LOGIN;
	CREATE ROLE peer LOGIN;
	CREATE ROLE watcher LOGIN IN ROLE pg_read_all_stats;
	GRANT USAGE ON FOREIGN SERVER emu TO dba, peer;
	GRANT UPDATE (last_checkpoint_at) ON lancelsm_table TO dba;
	CREATE USER MAPPING FOR peer SERVER emu OPTIONS (api_key 'not-the-key');
} . join('', map { "SELECT lancelsm_add_table('emu', '$_');\n" } @declared));

# as: run $sql as $role in a new connection; returns (stdout, SQLSTATE)
sub as
{
	my ($role, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql,
		extra_params => [ '-U', $role, '-v', 'VERBOSITY=verbose' ]);
	return ($out, sqlstate_of($err));
}

# what the views show, as the superuser
sub last_stats
{
	return $node->safe_psql('postgres', q{
		SELECT string_agg(table_name || ':' || ok || ':' || read_at, ' '
		                  ORDER BY table_name COLLATE "C")
		  FROM lancelsm_last_stats});
}

sub counters
{
	return $node->safe_psql('postgres', q{
		SELECT string_agg(table_name || ':' || action || ':' || runs || ':' || failures, ' '
		                  ORDER BY table_name COLLATE "C", action)
		  FROM lancelsm_table_counters});
}

is((as('dba', 'SELECT count(*) FROM lancelsm_table_stats'))[0], '15',
	'dba: reads the 15 declared tables');
is((as('dba', 'SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint_all()'))[0],
	'14', 'dba: checkpoints them, t15 failing');
my $stats = last_stats();
my $counted = counters();
is($node->safe_psql('postgres',
		'SELECT count(*), count(*) FILTER (WHERE ok) FROM lancelsm_last_stats'),
	'15|15', 'dba: 15 tables read ok');
is($counted, join(' ', map { "$_:checkpoint:1:" . ($_ eq 't15' ? 1 : 0) } @declared),
	'dba: one checkpoint counted per table, t15 failed');

# 1. a role that may not record changes none of it
emu('POST', '/_emulator/log/reset');
is((as('peer', 'SELECT count(*) FILTER (WHERE error_sqlstate IS NOT NULL) FROM lancelsm_table_stats'))[0],
	'15', 'peer: its 15 reads fail (a wrong key)');
as('peer', "SELECT lancelsm_flush('emu', 't01')");
as('peer', "SELECT count(*) FROM lancelsm_checkpoint('emu', ARRAY['t02', 't03'])");
is(last_stats(), $stats, 'peer: lancelsm_last_stats is exactly as dba left it');
is(counters(), $counted, 'peer: lancelsm_table_counters is exactly as dba left it');
is((as('peer', 'SELECT count(*) FROM lancelsm_checkpoint_due()'))[1], '42501',
	'peer: its due job raises 42501');
is((as('peer', 'SELECT count(*) FROM lancelsm_checkpoint_all()'))[1], '42501',
	'peer: its checkpoint_all raises 42501');
my $log = emu('GET', '/_emulator/log');
is(scalar(@{ $log->{requests} }), 18,
	'peer: 15 stats reads, 1 flush and 2 checkpoints\' flushes sent; none by the refused calls');

# kept: how many tables of the counters are declared (t..) and made up
sub kept
{
	return $node->safe_psql('postgres', q{
		SELECT count(*) FILTER (WHERE table_name LIKE 't%'),
		       count(*) FILTER (WHERE table_name LIKE 'made_up_%')
		  FROM lancelsm_table_counters});
}

# 2. undeclared names never evict a declared table's entry
my @peer_names = map { sprintf('made_up_%02d', $_) } 1 .. 12;
my @dba_names = map { sprintf('made_up_%02d', $_) } 13 .. 24;
my $array = sub { 'ARRAY[' . join(', ', map { "'$_'" } @_) . ']' };
is((as('peer', 'SELECT count(*) FROM lancelsm_checkpoint(\'emu\', ' . $array->(@peer_names) . ')'))[0],
	'12', 'flood: peer checkpoints 12 made-up names');
is(kept(), '15|5', 'flood: the 15 declared tables kept, 5 of peer\'s names in the free entries');
is($node->safe_psql('postgres', 'SELECT counter_entries, counter_evicted FROM lancelsm_info'),
	'20|7', 'flood: peer evicted 7 of its own entries');
is((as('dba', 'SELECT count(*) FROM lancelsm_checkpoint(\'emu\', ' . $array->(@dba_names) . ')'))[0],
	'12', 'flood: dba checkpoints 12 other made-up names');
is(kept(), '15|5', 'flood: still the 15 declared tables, and 5 made-up names');
is($node->safe_psql('postgres', q{
		SELECT count(*) FILTER (WHERE table_name <= 'made_up_12'),
		       count(*) FILTER (WHERE table_name > 'made_up_12')
		  FROM lancelsm_table_counters WHERE table_name LIKE 'made_up_%'}),
	'4|1', 'flood: dba, the largest holder, evicted one of peer\'s names, then its own');
is($node->safe_psql('postgres', 'SELECT counter_evicted FROM lancelsm_info'),
	'19', 'flood: 12 more evictions, none of a declared table');
is(last_stats(), $stats, 'flood: lancelsm_last_stats is exactly as dba left it');

# 3. the server's message is readable as the histories are
my $message = $node->safe_psql('postgres',
	q{SELECT split_part(last_message, ': ', 1) FROM lancelsm_table_message WHERE table_name = 't15'});
is($message, 'could not checkpoint LanceDB table "t15"',
	'message: t15\'s failure is in lancelsm_table_message');
is((as('watcher', q{SELECT split_part(last_message, ': ', 1) FROM lancelsm_table_message
		WHERE last_message IS NOT NULL}))[0],
	$message, 'message: watcher (pg_read_all_stats) reads the relation');
is((as('peer', 'SELECT * FROM lancelsm_table_message'))[1], '42501',
	'message: peer may not read the relation');
is((as('dba', 'SELECT * FROM lancelsm_table_message'))[1], '42501',
	'message: nor may dba, which records it');
is((as('watcher', q{SELECT count(*), count(last_message) FROM lancelsm_status}))[0],
	'15|1', 'message: lancelsm_status shows it to watcher');
is((as('peer', q{SELECT count(*), count(last_message), count(*) FILTER (WHERE NOT last_ok) FROM lancelsm_status}))[0],
	'15|0|1', 'message: peer sees t15 failing in lancelsm_status, without the message');
is((as('peer', 'SELECT last_message FROM lancelsm_table'))[1], '42703',
	'message: lancelsm_table has no last_message column');

# 4. a declared table not counted yet (its counters reset) is not counted
#    by peer's direct flush, and is by dba's
$node->safe_psql('postgres', q{SELECT lancelsm_table_counters_reset(NULL, NULL, 't01')});
as('peer', "SELECT lancelsm_flush('emu', 't01')");
is($node->safe_psql('postgres', q{SELECT count(*) FROM lancelsm_table_counters WHERE table_name = 't01'}),
	'0', 'direct: peer\'s flush of a declared table not counted yet is not counted');
as('dba', "SELECT lancelsm_flush('emu', 't01')");
is($node->safe_psql('postgres', q{
		SELECT action || ':' || runs || ':' || failures FROM lancelsm_table_counters WHERE table_name = 't01'}),
	'flush:1:0', 'direct: dba\'s flush of it is');

$node->stop;
done_testing();
