# engine_windows_kept.pl: the request windows a backend keeps per server
# and role (src/task/window_kept.c) are bounded.
#
# A statement's windows serve only its own next driver run, so the next
# statement drops them: after checkpoints on 60 servers, one statement
# each, the hash table of kept windows (a dynahash, shown in
# pg_backend_memory_contexts) holds no more memory than after the first;
# 1.4 kept one list entry per server and role for the backend's life.
# Closing a server's pool (lancelsm_disconnect) drops its window too,
# which no view shows.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $SERVERS = 60;
my $port = start_emulator();
my $node = setup_node('windows_kept', $port);
my $sql = '';
for my $i (1 .. $SERVERS)
{
	$sql .= qq{
		CREATE SERVER w$i FOREIGN DATA WRAPPER lancelsm
		  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
		CREATE USER MAPPING FOR PUBLIC SERVER w$i OPTIONS (api_key '$API_KEY');};
}
$node->safe_psql('postgres', $sql);

my ($s) = open_session($node);
my $WINDOWS = q{SELECT count(*) || ' ' || coalesce(sum(total_bytes), 0)
	FROM pg_backend_memory_contexts WHERE name = 'lancelsm request windows'};
my $CHECKPOINT = "SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint('w%d', ARRAY['events'])";

is($s->query_safe($WINDOWS), '0 0', 'no window is kept before any call');
is($s->query_safe(sprintf($CHECKPOINT, 1)), '1', 'a checkpoint on the first server');
my $first = $s->query_safe($WINDOWS);
like($first, qr/^1 [1-9]\d*$/, 'its window is kept in one hash table');
my $ok = 0;
for my $i (2 .. $SERVERS)
{
	$ok += $s->query_safe(sprintf($CHECKPOINT, $i));
}
is($ok, $SERVERS - 1, "checkpoints on $SERVERS servers, one statement each");
is($s->query_safe($WINDOWS), $first,
	"after $SERVERS servers the kept windows hold what they held after one");
is($s->query_safe("SELECT lancelsm_disconnect('w$SERVERS')"), 't',
	"closing the last server's pool");
is($s->query_safe($WINDOWS), $first, 'the hash table stays, no larger');
$s->quit;

done_testing();
