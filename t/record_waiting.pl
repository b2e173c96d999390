# record_waiting.pl: lancelsm_progress names the bucket a stuck checkpoint
# waits on, with lancelsm in shared_preload_libraries.
#
# A table of two buckets whose outstanding L0 is all in one of them, on a
# server whose compaction passes end without draining anything (the
# emulator's keep_compacted): that bucket is Active, yet from the first
# pass that ends without a drop lancelsm_progress names it
# (waiting_bucket, waiting_bucket_status) beside the diagnosis it gave
# before; before any pass has ended it names none.  Once compaction
# drains again the checkpoint converges and its row is gone.
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
my $node = setup_node_conf('waiting', $port);
my ($mon) = open_session($node);
my ($s, $pid) = open_session($node);

emu('POST', '/_emulator/tables', { name => 'pair', buckets => 2 });
emu('POST', '/_emulator/tables/pair/generations',
	{ count => 2, buckets => ['b1'] });
emu('POST', '/_emulator/behaviour', { keep_compacted => JSON::PP::true });
my $tok = send_query($s, q{SELECT lancelsm_checkpoint('emu', 'pair')});

# the first row of the checkpoint's progress that shows a pass without a
# drop (at most 10 s); a row seen before it must name no bucket
my ($row, $early) = ('', '');
my $until = time() + 10;
while (time() < $until)
{
	my $r = $mon->query_safe(
		"SELECT passes_without_drop, coalesce(waiting_bucket, '-'), "
		  . "coalesce(waiting_bucket_status, '-'), coalesce(diagnosis, '-') "
		  . "FROM lancelsm_progress WHERE pid = $pid");
	chomp $r;
	if ($r =~ /^(\d+)\|/ && $1 >= 1) { $row = $r; last; }
	$early = $r if $r =~ /^0\|/ && $r !~ /^0\|-\|-\|-$/;
	sleep(0.01);
}
is($early, '', 'stuck: before a pass ends without a drop, no bucket is named');
my ($passes, $rest) = split(/\|/, $row, 2);
cmp_ok($passes // 0, '<=', 5, "stuck: seen within five passes without a drop ($row)");
my $diag = 'Compaction passes end without draining anything'
  . (($passes // 0) >= 3
	? ': the server may keep compacted generations listed.' : '.');
is($rest, "b1|Active|$diag",
	'stuck: the bucket holding the outstanding L0, its status and the diagnosis');
is(query_until($mon,
		"SELECT waiting_bucket, waiting_bucket_status, passes_without_drop >= 5 FROM lancelsm_progress WHERE pid = $pid",
		'b1|Active|t'),
	'b1|Active|t', 'stuck: still named past five passes');

emu('POST', '/_emulator/behaviour', { keep_compacted => JSON::PP::false });
my (undef, $err) = finish_query($s, $tok);
is($err, '', 'drained: the checkpoint converges once passes drain again');
is($mon->query_safe("SELECT count(*) FROM lancelsm_progress"), '0',
	'drained: no progress row left');

$_->quit for ($mon, $s);
$node->stop;
done_testing();
