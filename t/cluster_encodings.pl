# cluster_encodings.pl: text in the database's encoding (src/wire_text.c).
#
# One cluster, lancelsm preloaded, four databases: UTF8, LATIN1, EUC_JP and
# SQL_ASCII, each with the extension and server "emu".  Every session
# speaks UTF-8 (PGCLIENTENCODING), so what a row shows is compared as
# UTF-8 whatever the database holds.  The emulator answers non-ASCII text
# as raw UTF-8, as a Rust server does.  Per database:
# 1. Out: table "café" reaches the emulator as /v1/table/caf%C3%A9/...
#    (a LATIN1 server's user_id "é" and extra_headers, and a LATIN1 user
#    mapping's extra_headers, are sent as UTF-8 too); a mapping's secret
#    UTF-8 cannot hold is refused naming the option, never quoting it.
# 2. In: shard id "bü" is shown as "bü"; shard id "東" is shown where the
#    encoding holds it, while LATIN1 refuses it with 22P05 naming the
#    column, and a checkpoint of its table converges everywhere.
# 3. A server error message with "—", an emoji and "東" is converted or
#    escaped in the errdetail and in a message column; the real error
#    (its SQLSTATE, HV000) is what is raised.
# 4. Shared memory holds UTF-8: the checkpoint history written by one
#    database is read correctly (or escaped) by the others, and one table
#    checkpointed from two encodings has one entry.
# 5. SQL_ASCII: bytes that are not UTF-8 in a table name or the write
#    spec are 22021 before any request.
# 6. Progress read across encodings; a herd run joined across encodings
#    shares a failure whose detail crossed shared memory as UTF-8.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use JSON::PP;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# Perl strings below are UTF-8 bytes when they go to psql, characters
# (\x{...}) when they go to the emulator as JSON.
my $CAFE = "caf\xc3\xa9";
my $BU = "b\xc3\xbc";
my $EAST = "\xe6\x9d\xb1";
my $TOKYO = "\xe6\x9d\xb1\xe4\xba\xac";
my $EMDASH = "\xe2\x80\x94";
my $GRIN = "\xf0\x9f\x98\x80";

$ENV{PGCLIENTENCODING} = 'UTF8';

my $port = start_emulator();
my $node = setup_node_conf('encodings', $port);

my %ENCODING = (
	utf => 'UTF8',
	lat => 'LATIN1',
	euc => 'EUC_JP',
	ascii => 'SQL_ASCII');
my @DBS = qw(utf lat euc ascii);

for my $db (@DBS)
{
	$node->safe_psql('postgres',
		"CREATE DATABASE $db TEMPLATE template0 ENCODING '$ENCODING{$db}' "
		  . "LC_COLLATE 'C' LC_CTYPE 'C'");
	$node->safe_psql($db, qq{
		CREATE EXTENSION lancelsm;
		CREATE SERVER emu FOREIGN DATA WRAPPER lancelsm
		  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
		CREATE USER MAPPING FOR PUBLIC SERVER emu OPTIONS (api_key '$API_KEY');
	});
}

# tables: "café" with shard "bü", "east" with shard "東", "東京"
sub make_tables
{
	emu('POST', '/_emulator/tables',
		{ name => "caf\x{e9}", shard_ids => ["b\x{fc}"] });
	emu('POST', '/_emulator/tables',
		{ name => 'east', shard_ids => ["\x{6771}"] });
	emu('POST', '/_emulator/tables', { name => "\x{6771}\x{4eac}" });
}

# run: $sql in $db; (exit code, stdout, stderr) with verbose errors.
sub run
{
	my ($db, $sql) = @_;
	my ($out, $err);
	my $rc = $node->psql($db, "\\set VERBOSITY verbose\n$sql",
		stdout => \$out, stderr => \$err);
	return ($rc, $out, $err);
}

# detail: the DETAIL line of an error report.
sub detail
{
	my ($err) = @_;

	return $err =~ /^DETAIL:\s+(.*)$/m ? $1 : '';
}

# log_paths: the raw paths of the requests on a table since the reset.
sub log_paths
{
	my ($table) = @_;
	return [ map { $_->{path} }
		  @{ emu('GET', "/_emulator/log")->{requests} } ];
}

# 1. and 2.: names out, shard ids in
my %length = (utf => 2, lat => 2, euc => 2, ascii => 3);
my %east = (utf => $EAST, euc => $EAST, ascii => $EAST);
for my $db (@DBS)
{
	emu_reset();
	make_tables();
	emu('POST', '/_emulator/log/reset', {});
	$node->safe_psql($db, "SELECT lancelsm_flush('emu', '$CAFE')");
	is_deeply(log_paths(), ["/v1/table/caf%C3%A9/flush_lsm/"],
		"$db: table name $CAFE goes out as caf%C3%A9");

	is( $node->safe_psql($db,
			"SELECT shard_id || ' ' || length(shard_id) FROM lancelsm_stats('emu', '$CAFE')"),
		"$BU $length{$db}",
		"$db: shard id $BU is shown as $BU");

	emu('POST', '/_emulator/tables/east/generations', { count => 2, rows => 5 });
	$node->safe_psql($db, "SELECT lancelsm_checkpoint('emu', 'east')");
	is(scalar @{ emu('GET', '/_emulator/tables/east')->{buckets}[0]{generations} },
		0, "$db: a checkpoint of the table with shard $EAST converges");
	my ($rc, $out, $err) =
	  run($db, "SELECT shard_id FROM lancelsm_stats('emu', 'east')");
	if (defined $east{$db})
	{
		is("$rc $out", "0 $east{$db}", "$db: shard id $EAST is shown");
	}
	else
	{
		is(sqlstate_of($err), '22P05', "$db: shard id $EAST raises 22P05");
		like($err,
			qr/the server's value of column "shard_id" has no equivalent in encoding "LATIN1"/,
			"$db: the error names the column");
		is(detail($err),
			'The value is "\u6771", written here with escapes.',
			"$db: the detail shows the value escaped");
	}
}

# a LATIN1 server's options go out as UTF-8
emu_reset();
make_tables();
emu('POST', '/_emulator/log/reset', {});
$node->safe_psql('lat', qq{
	CREATE SERVER emu2 FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port',
	           user_id '\xc3\xa9', extra_headers '{"X-Tenant": "\xc3\xbc"}');
	CREATE USER MAPPING FOR PUBLIC SERVER emu2 OPTIONS (api_key '$API_KEY');
	SELECT lancelsm_flush('emu2', '$CAFE');
});
my $req = emu('GET', '/_emulator/log')->{requests}[0];
# http.server decodes header bytes as ISO 8859-1: UTF-8 "é" reads "Ã©"
is_deeply(
	[ $req->{path}, $req->{headers}{'x-lancedb-user-id'},
		$req->{headers}{'x-tenant'} ],
	[ "/v1/table/caf%C3%A9/flush_lsm/", "\x{c3}\x{a9}", "\x{c3}\x{bc}" ],
	'lat: user_id and extra_headers values go out as UTF-8');

# a LATIN1 user mapping's extra_headers, converted as a secret is (quietly,
# src/functions/option.c), go out as UTF-8 too
emu('POST', '/_emulator/log/reset', {});
$node->safe_psql('lat', qq{
	CREATE SERVER emu3 FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
	CREATE USER MAPPING FOR PUBLIC SERVER emu3
	  OPTIONS (api_key '$API_KEY', extra_headers '{"X-Tenant-Key": "\xc3\xbc"}');
	SELECT lancelsm_flush('emu3', '$CAFE');
});
my @reqs = @{ emu('GET', '/_emulator/log')->{requests} };
is_deeply(
	[ scalar @reqs, $reqs[0]{path}, $reqs[0]{headers}{'x-tenant-key'} ],
	[ 1, "/v1/table/caf%C3%A9/flush_lsm/", "\x{c3}\x{bc}" ],
	"lat: a user mapping's extra_headers value goes out as UTF-8");

# a user mapping's secret that UTF-8 cannot hold is refused by the
# validator naming the option only, never quoting the value: bytes of a
# SQL_ASCII database that are not UTF-8 (22021), an EUC_JP user-defined
# character, which has no Unicode equivalent (22P05); sent raw in the
# database's own encoding
for my $case ([ 'ascii', 'SQL_ASCII', "b\xffz", '22021' ],
	[ 'euc', 'EUC_JP', "\xf5\xa1z", '22P05' ])
{
	my ($db, $client, $bytes, $state) = @$case;
	my ($rc, $out, $err) = run($db,
		"SET client_encoding = '$client';\n"
		  . "CREATE USER MAPPING FOR CURRENT_USER SERVER emu "
		  . "OPTIONS (api_key 'sk_$bytes')");
	is( sqlstate_of($err) . ' '
		  . ($err =~ /ERROR:  \S+: (.*)$/m ? $1 : $err),
		"$state the value of option \"api_key\" has no equivalent in encoding \"UTF8\"",
		"$db: a mapping secret UTF-8 cannot hold is $state naming the option");
	unlike($err, qr/sk_/, "$db: the error does not quote the secret");
	is( $node->safe_psql($db,
			"SELECT count(*) FROM pg_user_mappings WHERE srvname = 'emu' "
			  . "AND usename = current_user"),
		'0', "$db: no mapping was created");
}

# 3. the server's error message, converted or escaped
my %shown = (
	utf => "disk $EMDASH full $GRIN $EAST",
	lat => 'disk \u2014 full \U0001F600 \u6771',
	euc => "disk \\u2014 full \\U0001F600 $EAST",
	ascii => "disk $EMDASH full $GRIN $EAST");
for my $db (@DBS)
{
	emu_reset();
	make_tables();
	emu('POST', '/_emulator/faults',
		{
			table => "caf\x{e9}",
			route => 'flush_lsm',
			status => 500,
			count => 2,
			json => { code => 1, error => "disk \x{2014} full \x{1f600} \x{6771}" }
		});
	my ($rc, $out, $err) = run($db, "SELECT lancelsm_flush('emu', '$CAFE')");
	is(sqlstate_of($err), 'HV000', "$db: the real error is raised");
	like(detail($err),
		qr/^The server answered HTTP status 500, code 1: \Q$shown{$db}\E\. Request ID: /,
		"$db: the server's message is converted or escaped in the detail");
	is( $node->safe_psql($db,
			"SELECT sqlstate || ' ' || split_part(message, ': ', 3) FROM lancelsm_checkpoint('emu', ARRAY['$CAFE'])"
		),
		"HV000 $shown{$db}. Request ID",
		"$db: the message column shows it the same way");
}

# 4. shared memory holds UTF-8: each database reads the others' history;
#    history is kept per database (its OID is in the key), so the same
#    table checkpointed from LATIN1 and from UTF8 has one entry in each
#    database, both read back as the same name everywhere
emu_reset();
make_tables();
$node->safe_psql('lat', "SELECT lancelsm_checkpoint('emu', '$CAFE')");
$node->safe_psql('utf', "SELECT lancelsm_checkpoint('emu', '$TOKYO')");
$node->safe_psql('lat', "SELECT lancelsm_checkpoint('emu', '$CAFE')");
$node->safe_psql('utf', "SELECT lancelsm_checkpoint('emu', '$CAFE')");
is( $node->safe_psql('euc',
		"SELECT string_agg(database, ',' ORDER BY database COLLATE \"C\") "
		  . "FROM lancelsm_checkpoint_history WHERE table_name = '$CAFE'"),
	'lat,utf',
	"$CAFE checkpointed twice from LATIN1, then from UTF8: one history entry per database");
my %tokyo = (utf => $TOKYO, lat => '\u6771\u4EAC', euc => $TOKYO,
	ascii => $TOKYO);
for my $db (@DBS)
{
	is( $node->safe_psql($db,
			"SELECT string_agg(table_name, ',' ORDER BY table_name COLLATE \"C\") "
			  . "FROM lancelsm_checkpoint_history WHERE table_name <> 'east'"),
		join(',', sort ($CAFE, $CAFE, $tokyo{$db})),
		"$db: the history written by LATIN1 and UTF8 reads correctly");
}

# 5. SQL_ASCII: bytes that are not UTF-8 are 22021 before any request
emu_reset();
make_tables();
emu('POST', '/_emulator/log/reset', {});
my $bad = "convert_from('\\x62ff'::bytea, 'SQL_ASCII')";
for my $sql (
	"SELECT lancelsm_flush('emu', $bad)",
	"SELECT lancelsm_set_write_spec('emu', '$CAFE', 'bucket', $bad, 4, NULL, '{}')",
	"SELECT lancelsm_set_write_spec('emu', '$CAFE', 'bucket', 'id', 4, ARRAY[$bad], '{}')",
	"SELECT lancelsm_set_write_spec('emu', '$CAFE', 'bucket', 'id', 4, NULL, "
	  . "jsonb_build_object('k', $bad))")
{
	my ($rc, $out, $err) = run('ascii', $sql);
	is(sqlstate_of($err), '22021', "ascii: 22021 for $sql");
}
is_deeply(log_paths(), [], 'ascii: no request was sent');

# 6. an EUC_JP checkpoint's progress row read from LATIN1 and UTF8; then
#    a LATIN1 and a UTF8 session waiting behind it: once it is cancelled,
#    one leads the next run and the other joins it (the herd keys the
#    UTF-8 name) and shares its failure, whose detail crossed shared
#    memory as UTF-8
emu_reset();
make_tables();
emu('POST', '/_emulator/tables/caf%C3%A9/generations', { count => 2 });
emu('POST', '/_emulator/tables/caf%C3%A9/latch',
	{ bucket => "b\x{fc}", held => JSON::PP::true });
my (%session, %pid);
for my $db (qw(euc lat utf postgres))
{
	$session{$db} = $node->background_psql($db, on_error_stop => 0,
		timeout => 30);
	$session{$db}->query_safe('\set VERBOSITY verbose');
	$pid{$db} = $session{$db}->query_safe('SELECT pg_backend_pid()');
	chomp $pid{$db};
}
my $ctl = $session{postgres};
my $first = send_query($session{euc}, "SELECT lancelsm_checkpoint('emu', '$CAFE')");
my $running = "SELECT table_name FROM lancelsm_progress WHERE pid = $pid{euc} "
  . "AND target_generations IS NOT NULL";
is(query_until($session{lat}, $running, $CAFE), $CAFE,
	'lat: the progress row of an EUC_JP checkpoint shows its table name');
# a stalled pass re-issues the flush, which clears the targets until the
# next watermark: wait for them again rather than read once
is(query_until($session{utf}, $running, $CAFE), $CAFE, 'utf: so does UTF8');

# waiting: wait until $n sessions other than $lpid wait in the extension
sub waiting
{
	my ($n, $lpid) = @_;
	return query_until($ctl,
		"SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Extension' "
		  . "AND query LIKE '%lancelsm_checkpoint%' AND pid <> $lpid",
		"$n");
}
my $ROW = "SELECT ok, sqlstate, message FROM lancelsm_checkpoint('emu', ARRAY['$CAFE'])";
my %token = map { $_ => send_query($session{$_}, $ROW) } qw(lat utf);
is(waiting(2, $pid{euc}), '2', 'lat, utf: both wait behind the EUC_JP run');
$ctl->query_safe("SELECT pg_cancel_backend($pid{euc})");
my (undef, $ferr) = finish_query($session{euc}, $first);
like($ferr, qr/57014/, 'euc: the first run is cancelled');
is( query_until($ctl,
		"SELECT count(*) FROM lancelsm_progress WHERE pid IN ($pid{lat}, $pid{utf}) "
		  . "AND target_generations IS NOT NULL",
		'1'),
	'1',
	'lat, utf: one of them leads the next run');
my $lpid = query_until($ctl,
	"SELECT pid FROM lancelsm_progress WHERE pid IN ($pid{lat}, $pid{utf}) "
	  . 'AND target_generations IS NOT NULL',
	qr/^\d+$/);
my ($leader, $joiner) = $lpid == $pid{lat} ? qw(lat utf) : qw(utf lat);
is(waiting(1, $lpid), '1', "$joiner: joins the run of $leader");
emu('POST', '/_emulator/faults',
	{
		table => "caf\x{e9}",
		route => 'get_lsm_stats',
		status => 500,
		json => { code => 1, error => "disk \x{2014} full \x{6771}" }
	});
my ($lout) = finish_query($session{$leader}, $token{$leader});
my ($jout) = finish_query($session{$joiner}, $token{$joiner});
my %own = (lat => 'disk \u2014 full \u6771', utf => "disk $EMDASH full $EAST");
like($lout,
	qr/^f\|HV000\|could not checkpoint LanceDB table "\Q$CAFE\E": The server answered HTTP status 500, code 1: \Q$own{$leader}\E\. Request ID: /,
	"$leader: the leader fails with the server's message in its encoding");
# LATIN1 escaped it, as the leader writing it or as the joiner reading it
like($jout,
	qr/^f\|HV000\|could not checkpoint LanceDB table "\Q$CAFE\E": The checkpoint of backend $lpid, which this one joined, failed: The server answered HTTP status 500, code 1: disk \\u2014 full \\u6771\. Request ID: /,
	"$joiner: the joiner shares the failure, its detail read across encodings");
$_->quit for values %session;

done_testing();
