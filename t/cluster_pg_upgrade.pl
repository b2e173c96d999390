# cluster_pg_upgrade.pl: pg_upgrade from the previous major with lancelsm
# installed.
#
# Runs when LANCELSM_UPGRADE_FROM names the installation directory of an
# older PostgreSQL with lancelsm installed in it (e.g.
# /usr/lib/postgresql/18); scripts/test.sh sets it for 19, whose chroot
# carries 18 too.  Elsewhere the test is skipped.
#
# On the old major, with lancelsm preloaded: the extension, server "emu"
# with a user mapping holding the API key, table "lake" declared with
# thresholds, and last_checkpoint_at recorded by lancelsm_checkpoint_due().
# pg_upgrade (--copy) to a new cluster of this major; then, as docs/operations.md
# ("What survives what", "Where the last success lives") says:
#  1. the extension is there at the same version;
#  2. the user mapping and its key survive;
#  3. the declared table, its thresholds and last_checkpoint_at survive;
#  4. the checkpoint history is not carried over (empty);
#  5. a checkpoint works on the new cluster: one flush reaches the
#     emulator, and the history records it.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

skip_in_repeat_runs();
my $old_install = $ENV{LANCELSM_UPGRADE_FROM};
plan skip_all => 'LANCELSM_UPGRADE_FROM names no older PostgreSQL installation'
  unless $old_install;
plan skip_all => "$old_install/lib/lancelsm.so: lancelsm is not installed for the old major"
  unless -e "$old_install/lib/lancelsm.so";

my $port = start_emulator();
emu('POST', '/_emulator/tables', { name => 'lake', buckets => 1 });
# 2 L0 generations and a write in lake's bucket: due for a checkpoint
# (l0_generations 2 > 1, wal_lag 1 > 0)
emu('POST', '/_emulator/tables/lake/generations', { count => 2, rows => 10 });
emu('POST', '/_emulator/tables/lake/write', { rows => 1, bucket => 'b0' });

my $preload = "shared_preload_libraries = 'lancelsm'\n";
my $old = PostgreSQL::Test::Cluster->new('old', install_path => $old_install);
$old->init;
$old->append_conf('postgresql.conf', $preload);
$old->start;
install_lancelsm($old, $port);
$old->safe_psql('postgres', qq{
	SELECT lancelsm_add_table('emu', 'lake', max_l0_generations => 1,
	  max_wal_lag => 0, max_checkpoint_age => '1 hour', validate => false);
}, timeout => 30);
is($old->safe_psql('postgres',
	'SELECT table_name, ok, action FROM lancelsm_checkpoint_due()'),
	'lake|t|checkpoint', 'old major: checkpoint_due checkpoints the due table');

# what must survive, read the same way on both sides
my %query = (
	extension => q{SELECT extversion FROM pg_extension WHERE extname = 'lancelsm'},
	mapping => q{SELECT srvname, usename, array_to_string(umoptions, ',')
		FROM pg_user_mappings},
	declared => q{SELECT server, table_name, max_l0_generations, max_l0_bytes,
		max_wal_lag, max_memtable_rows, max_checkpoint_age, last_checkpoint_at
		FROM lancelsm_table ORDER BY 1, 2},
);
my %before = map { $_ => $old->safe_psql('postgres', $query{$_}) } keys %query;
is($before{mapping}, "emu|public|api_key=$API_KEY", 'old major: the mapping holds the key');
like($before{declared}, qr/^emu\|lake\|1\|\|0\|\|01:00:00\|\d{4}-/,
	'old major: thresholds and last_checkpoint_at recorded');
my $old_major = $old->safe_psql('postgres', 'SHOW server_version_num') / 10000;
$old->stop;

my $new = PostgreSQL::Test::Cluster->new('new');
$new->init;
$new->append_conf('postgresql.conf', $preload);
my $new_major = $new->pg_version->major;
cmp_ok($old_major, '<', $new_major, "an upgrade from $old_major to $new_major");

# pg_upgrade writes its logs below the current directory or the new data
# directory: run it from a scratch directory of this test
my $scratch = PostgreSQL::Test::Utils::tempdir('pg_upgrade');
chdir $scratch or die "chdir $scratch: $!";
command_ok([
		'pg_upgrade', '--no-sync', '--copy',
		'-d', $old->data_dir, '-D', $new->data_dir,
		'-b', "$old_install/bin", '-B', $new->config_data('--bindir'),
		'-s', $new->host, '-p', $old->port, '-P', $new->port ],
	"pg_upgrade from $old_major to $new_major");
$new->start;

for my $what (sort keys %query)
{
	is($new->safe_psql('postgres', $query{$what}), $before{$what},
		"$what: as before the upgrade");
}
is($new->safe_psql('postgres', 'SELECT count(*) FROM lancelsm_checkpoint_history'),
	'0', 'the checkpoint history is not carried over');

emu('POST', '/_emulator/log/reset');
is($new->safe_psql('postgres',
	"SELECT lancelsm_checkpoint('emu', 'lake')"),
	'', 'a checkpoint works on the upgraded cluster');
my $c = emu('GET', '/_emulator/counts?table=lake');
is($c->{flush_lsm}, 1, 'its flush reached the emulator once');
is($new->safe_psql('postgres', q{SELECT table_name, ok FROM lancelsm_checkpoint_history}),
	'lake|t', 'the new history records it');

$new->stop;
done_testing();
