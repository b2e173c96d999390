# engine_fresh_reads.pl: fresh reads, as the SDK's remote table makes
# them, against the emulator's lagging read replicas.
#
# 1. Checkpoints against replicas that lag 0, 5, 100, 200 and 1,000 ms, on
#    a quiet memtable and on an L0 backlog, with and without a version on
#    the flush's answer: after each ok, no generation its opening flush
#    sealed, or older, is left in L0 (read from the emulator's primary).
#    Without fresh reads every lag above 0 leaves one there.
# 2. The request log: every request after the first answer carries
#    x-lancedb-min-read-version, the highest x-lancedb-version answered
#    before it, on every route (flush, compact, stats, and set, unset and
#    get of the write spec); a version is never lowered.
# 3. Preloaded, a new session starts from what earlier ones saw; not
#    preloaded, each session starts cold.
# 4. A read refused (412) for the version it demanded: the version is
#    forgotten and the read sent once more, without it.
# 5. The server option read_consistency_interval: x-lancedb-min-timestamp
#    on every request, now minus the interval.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use JSON::PP;
use List::Util qw(max);
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $port = start_emulator();
my $node = setup_node_conf('fresh', $port);

sub primary { return emu('GET', "/_emulator/tables/$_[0]"); }

sub table_log
{
	my ($t) = @_;
	return emu('GET', "/_emulator/log?table=$t")->{requests};
}

# 1. checkpoints against lagging replicas
for my $flush_version (1, 0)
{
	emu('POST', '/_emulator/freshness',
		{ no_version_header => $flush_version ? [] : ['flush_lsm'] });
	for my $lag (0, 5, 100, 200, 1000)
	{
		for my $case ('quiet', 'backlog')
		{
			my $t = "f${lag}_${case}_" . ($flush_version ? 'v' : 'nv');
			my $what = "lag $lag ms, $case, flush answer "
			  . ($flush_version ? 'with' : 'without') . ' a version';

			emu_table($t, $case eq 'backlog' ? 2 : 0);
			emu('POST', '/_emulator/freshness', { lag_ms => $lag, table => $t });
			emu('POST', "/_emulator/tables/$t/write", { rows => 5 });
			my $sealed = primary($t)->{buckets}[0]{current_generation};
			$node->safe_psql('postgres',
				"SELECT lancelsm_checkpoint('emu', '$t')");
			my @left = map { $_->{generation} }
			  grep { $_->{generation} <= $sealed }
			  @{ primary($t)->{buckets}[0]{generations} };
			is("@left", '', "$what: ok, nothing up to generation $sealed left in L0");
			my $flush = (grep { ($_->{route} // '') eq 'flush_lsm' } @{ table_log($t) })[0];
			is(defined $flush->{version} ? 'version' : 'none',
				$flush_version ? 'version' : 'none',
				"$what: the flush's answer as set");
		}
	}
}
emu('POST', '/_emulator/freshness', { no_version_header => [] });

# 2. the headers on every route: each request carries the highest version
# answered before it on its table
emu('POST', '/_emulator/tables', { name => 'routes', buckets => 1, lsm => JSON::PP::false });
emu('POST', '/_emulator/log/reset');
$node->safe_psql('postgres', q{
	SELECT lancelsm_set_write_spec('emu', 'routes', 'bucket', 'id', 1);
	SELECT count(*) FROM lancelsm_write_spec('emu', 'routes');
	SELECT lancelsm_flush('emu', 'routes');
	SELECT count(*) FROM lancelsm_stats('emu', 'routes');
});
emu('POST', '/_emulator/tables/routes/generations', { count => 1 });
$node->safe_psql('postgres', q{
	SELECT lancelsm_compact('emu', 'routes');
	SELECT lancelsm_checkpoint('emu', 'routes');
	SELECT lancelsm_unset_write_spec('emu', 'routes');
});
my @log = @{ table_log('routes') };
my ($highest, @sent, @want, %routes) = (0);
for my $r (@log)
{
	push @sent, $r->{headers}{'x-lancedb-min-read-version'} // '-';
	push @want, $highest ? $highest : '-';
	$routes{ $r->{route} }++ if $highest;
	$highest = max($highest, $r->{version} // 0);
}
is("@sent", "@want",
	'routes: every request carries the highest version answered before it');
is(join(',', sort keys %routes),
	'compact_lsm,flush_lsm,get_lsm_stats,get_lsm_write_spec,unset_lsm_write_spec',
	'routes: ... on every route after the first (set)');
is(scalar(grep { defined $_->{headers}{'x-lancedb-min-read-version'} } @log),
	scalar(@log) - 1, 'routes: the request log counts the header on all but the first');

# a lower version answered later does not lower it
emu('POST', '/_emulator/tables', { name => 'lower', buckets => 1 });
emu('POST', '/_emulator/tables/lower/generations', { count => 3 });
$node->safe_psql('postgres', q{SELECT lancelsm_flush('emu', 'lower')});
my $kept = primary('lower')->{version};
emu('POST', '/_emulator/tables', { name => 'lower', buckets => 1 });
$node->safe_psql('postgres', q{SELECT lancelsm_flush('emu', 'lower'); SELECT lancelsm_flush('emu', 'lower')});
my @lower = map { $_->{headers}{'x-lancedb-min-read-version'} // '-' }
  grep { ($_->{route} // '') eq 'flush_lsm' } @{ table_log('lower') };
is("@lower", "- $kept $kept",
	'lower: a table answering a lower version keeps the higher one');

# 3. a new session starts warm when preloaded
emu('POST', '/_emulator/log/reset');
$node->safe_psql('postgres', q{SELECT lancelsm_flush('emu', 'lower')});
is(table_log('lower')->[0]{headers}{'x-lancedb-min-read-version'}, $kept,
	'preloaded: a new session sends what an earlier one saw');

my $cold = PostgreSQL::Test::Cluster->new('cold');
$cold->init;
$cold->start;
install_lancelsm($cold, $port);
emu('POST', '/_emulator/log/reset');
$cold->safe_psql('postgres', q{SELECT lancelsm_flush('emu', 'lower')});
$cold->safe_psql('postgres', q{SELECT lancelsm_flush('emu', 'lower'); SELECT lancelsm_flush('emu', 'lower')});
my @cold = map { $_->{headers}{'x-lancedb-min-read-version'} // '-' } @{ table_log('lower') };
my $v = primary('lower')->{version};
is("@cold", "- - $v", 'not preloaded: each session starts cold, then keeps what it saw');
$cold->stop;

# 4. a read refused for a version the server does not have
emu('POST', '/_emulator/tables', { name => 'again', buckets => 1 });
emu('POST', '/_emulator/tables/again/generations', { count => 3 });
$node->safe_psql('postgres', q{SELECT lancelsm_flush('emu', 'again')});
my $old = primary('again')->{version};
emu('POST', '/_emulator/tables', { name => 'again', buckets => 1 });    # created again
emu('POST', '/_emulator/freshness', { ahead_status => 412 });
emu('POST', '/_emulator/log/reset');
is($node->safe_psql('postgres', q{SELECT count(*) FROM lancelsm_stats('emu', 'again')}),
	'1', 'refused: the read succeeds');
my @again = map { ($_->{status}) . ':' . ($_->{headers}{'x-lancedb-min-read-version'} // '-') }
  @{ table_log('again') };
is("@again", "412:$old 200:-", 'refused: once with the kept version, then once without');
emu('POST', '/_emulator/tables', { name => 'again', buckets => 1 });
emu('POST', '/_emulator/freshness', { ahead_status => 0 });

# 5. read_consistency_interval
$node->safe_psql('postgres',
	q{ALTER SERVER emu OPTIONS (ADD read_consistency_interval '30')});
emu('POST', '/_emulator/log/reset');
my $before = time();
$node->safe_psql('postgres', q{SELECT count(*) FROM lancelsm_stats('emu', 'events')});
my $after = time();
my $ts = table_log('events')->[0]{headers}{'x-lancedb-min-timestamp'} // '';
like($ts, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/,
	'interval: x-lancedb-min-timestamp in RFC 3339');
my $secs = $node->safe_psql('postgres',
	"SELECT extract(epoch FROM '$ts'::timestamptz)");
ok($secs >= $before - 30 - 0.01 && $secs <= $after - 30 + 0.01,
	'interval: ... now minus 30 s');
is(scalar(my @bad = grep { !defined $_->{headers}{'x-lancedb-min-timestamp'} }
	  @{ table_log('events') }), 0, 'interval: on every request');
$node->psql('postgres',
	q{ALTER SERVER emu OPTIONS (SET read_consistency_interval '-1')},
	stderr => \my $err);
like($err, qr/read consistency interval must be a whole number of seconds between 0 and 86400/,
	'interval: validated');
$node->safe_psql('postgres',
	q{ALTER SERVER emu OPTIONS (DROP read_consistency_interval)});

$node->stop;
done_testing();
