# record_fair_eviction.pl: fair shared memory.  History entries are held by the
# (database, role) that wrote them: a role that spreads made-up names over
# many servers evicts only its own entries once it holds the largest
# share, never those of another database or another role that hold fewer;
# within a holder, the entries of declared tables go last; every eviction
# is counted in lancelsm_info.  The run history (lancelsm_run_history,
# one entry per run) follows the same rule.
#
# lancelsm.max_history_entries and lancelsm.max_run_history are 20.  In
# database postgres the role "victim" keeps 5 entries; in database lakeb the superuser keeps 5 (2 of
# them declared tables checkpointed by lancelsm_checkpoint_all(), the
# oldest).  Then the role "flooder" checkpoints 234 names spread over 39
# servers in postgres (one of them the victim's server): it fills the 10
# free entries and evicts only its own (224 evictions).  Then lakeb
# checkpoints 4 new names: 3 evict the flooder's (the largest holder), the
# 4th lakeb's own oldest undeclared entry, not its older declared ones.
# Last, the history file written at shutdown is of format 5 (1.5: with
# removed_at), and format 3 (lancelsm 1.3) and format 4 (1.4) files are
# read at startup, their entries not removed.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $port = start_emulator();
my $node = setup_node_conf('fair', $port, qq{
lancelsm.max_history_entries = 20
lancelsm.max_run_history = 20
});

my @victim = map { "victim_$_" } 1 .. 5;
my @lakeb = ((map { "decl_$_" } 1 .. 2), (map { "lakeb_$_" } 1 .. 3));
my @late = map { "late_$_" } 1 .. 4;
my @flood = map { sprintf('made_up_%03d', $_) } 1 .. 234;
emu('POST', '/_emulator/tables', { name => $_, buckets => 1 })
  for (@victim, @lakeb, @late, @flood);

# array: a SQL text[] literal of names
sub array { return "ARRAY['" . join("', '", @_) . "']"; }

$node->safe_psql('postgres', q{
	CREATE ROLE victim LOGIN;
	CREATE ROLE flooder LOGIN;
	GRANT USAGE ON FOREIGN SERVER emu TO victim, flooder;
	CREATE DATABASE lakeb;
});
# 38 more servers on the same endpoint, usable by the flooder
$node->safe_psql('postgres', join('', map { qq{
	CREATE SERVER flood_$_ FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER flood_$_ OPTIONS (api_key '$API_KEY');
	GRANT USAGE ON FOREIGN SERVER flood_$_ TO flooder;} } 1 .. 38));
install_lancelsm($node, $port, 'lakeb');
$node->safe_psql('lakeb', q{
	SELECT lancelsm_add_table('emu', 'decl_1', validate => false);
	SELECT lancelsm_add_table('emu', 'decl_2', validate => false);
});

# held: the table names of database $db whose names start with $prefix,
# sorted, space-separated, in the checkpoint history, then (after "|") in
# the run history
sub held
{
	my ($db, $prefix) = @_;
	return join('|', map { $node->safe_psql('postgres', qq{
		SELECT coalesce(string_agg(table_name, ' ' ORDER BY table_name COLLATE "C"), '')
		  FROM $_
		 WHERE database = '$db' AND starts_with(table_name, '$prefix')}) }
		  qw(lancelsm_checkpoint_history lancelsm_run_history));
}

# flooded: how many entries of made-up names the checkpoint history and
# the run history keep, joined by "|"
sub flooded
{
	return $node->safe_psql('postgres', q{
		SELECT (SELECT count(*) FROM lancelsm_checkpoint_history WHERE starts_with(table_name, 'made_up_')),
		       (SELECT count(*) FROM lancelsm_run_history WHERE starts_with(table_name, 'made_up_'))});
}

# both: a string twice, joined by "|", as held returns it
sub both { return "$_[0]|$_[0]"; }

is($node->safe_psql('lakeb', q{
		SELECT string_agg(table_name || ':' || ok, ' ' ORDER BY table_name)
		  FROM lancelsm_checkpoint_all()}),
	'decl_1:true decl_2:true', 'lakeb: its declared tables checkpointed');
is($node->safe_psql('lakeb', q{SELECT ok FROM lancelsm_checkpoint('emu', ARRAY['lakeb_1'])}),
	't', 'lakeb: lakeb_1 checkpointed');
is($node->safe_psql('lakeb', q{
		SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint('emu', ARRAY['lakeb_2', 'lakeb_3'])}),
	'2', 'lakeb: lakeb_2 and lakeb_3 checkpointed');
is($node->safe_psql('postgres',
		'SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint(\'emu\', ' . array(@victim) . ')',
		extra_params => [ '-U', 'victim' ]),
	'5', 'victim: 5 tables checkpointed');
is($node->safe_psql('postgres',
		'SELECT history_entries, max_history_entries, history_evicted, run_entries, max_run_entries, run_evicted FROM lancelsm_info'),
	'10|20|0|10|20|0', 'before the flood: 10 of 20 entries and runs, none evicted');

# the flood: 234 names, 6 on each of 39 servers (emu and flood_1..38)
my @servers = ('emu', map { "flood_$_" } 1 .. 38);
my $ok = 0;
for my $s (0 .. $#servers)
{
	my @names = @flood[ (6 * $s) .. (6 * $s + 5) ];
	$ok += $node->safe_psql('postgres',
		"SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint('$servers[$s]', "
		  . array(@names) . ')',
		extra_params => [ '-U', 'flooder' ]);
}
is($ok, 234, 'flood: 234 made-up names checkpointed over 39 servers');
is(held('postgres', 'victim_'), both(join(' ', @victim)),
	'flood: the other role\'s entries in the same database are all kept');
is(held('lakeb', ''), both(join(' ', sort @lakeb)),
	'flood: the other database\'s entries are all kept');
is(flooded(), '10|10',
	'flood: the flooder keeps only the 10 entries and 10 runs that were free');
is($node->safe_psql('postgres',
		'SELECT history_entries, history_evicted, run_entries, run_evicted FROM lancelsm_info'),
	'20|224|20|224', 'flood: 224 evictions of each counted, all of the flooder\'s own');

# lakeb grows past the flooder: it evicts the flooder's entries while it
# holds fewer, then its own oldest undeclared entry, not its declared ones
is($node->safe_psql('lakeb',
		'SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint(\'emu\', ' . array(@late) . ')'),
	'4', 'lakeb: 4 more tables checkpointed');
is(held('lakeb', ''), both(join(' ', sort(@late, 'decl_1', 'decl_2', 'lakeb_2', 'lakeb_3'))),
	'lakeb: its declared tables stay, its oldest undeclared entry went');
is(flooded(), '7|7',
	'lakeb: 3 of the flooder\'s entries and 3 of its runs evicted');
is(held('postgres', 'victim_'), both(join(' ', @victim)),
	'lakeb: the victim\'s entries are still all kept');
is($node->safe_psql('postgres', 'SELECT history_evicted, run_evicted FROM lancelsm_info'),
	'228|228', 'lakeb: 4 more evictions of each counted');

# the history file: lancelsm 1.5 writes format 5 (904-byte entries: those
# of 1.4, then removed_at); a format 3 file of lancelsm 1.3 (896-byte
# entries, no role) and a format 4 file of 1.4 are read
my $dbid = $node->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'postgres'});
my $srvid = $node->safe_psql('postgres', q{SELECT oid FROM pg_foreign_server WHERE srvname = 'emu'});
$node->stop;
my $file = $node->data_dir . '/pg_stat/lancelsm_history.stat';
open(my $fh, '<', $file) or die "$file: $!";
binmode $fh;
read($fh, my $header, 16);
close $fh;
is(join(' ', unpack('LLLl', $header)), join(' ', 0x4C534D48, 5, 904, 20),
	'history file: format 5, 904-byte entries, all 20 written at shutdown');
# old_file: with the node stopped, a history file of format $format (896-byte
# entries) holding one entry: its key (in use; declared; database, server,
# role (1.3: padding), name hash, name, age), then its outcome (ok,
# sqlstate, server, message, started_at, finished_at, passes); then start
# the node and return what the history shows
sub old_file
{
	my ($format, $declared, $role, $name, $passes) = @_;
	my $ts = 850_000_000_000_000;    # microseconds since 2000

	open(my $out, '>', $file) or die "$file: $!";
	binmode $out;
	print $out pack('LLLl', 0x4C534D48, $format, 896, 1),
	  pack('CCx2LLLQa256q', 1, $declared, $dbid, $srvid, $role, 0, $name, $ts),
	  pack('Ca6a64a512xqqlx4', 1, '', 'emu', '', $ts, $ts, $passes);
	close $out;
	$node->start;
	return $node->safe_psql('postgres', q{
		SELECT string_agg(database || ':' || server || ':' || table_name || ':' || ok
		                  || ':' || passes || ':' || (removed_at IS NULL), ' ')
		  FROM lancelsm_checkpoint_history});
}

is(old_file(3, 0, 0, 'from_13', 3), 'postgres:emu:from_13:true:3:true',
	'history file: a format 3 file of 1.3 is read');
# 1.4: the same, with the role (10, the bootstrap superuser) and declared
$node->stop;
is(old_file(4, 1, 10, 'from_14', 4), 'postgres:emu:from_14:true:4:true',
	'history file: a format 4 file of 1.4 is read, nothing removed');

$node->stop;
done_testing();
