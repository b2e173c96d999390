# security_redaction.pl: no piece of a secret sent with a request survives in
# what its failure leaves behind.
#
# A gateway answers with pieces of what it was sent, as gateways and
# proxies echo credentials: the API key masked to its first and last 4
# bytes ("sk_l...Q7vZ"), 8 bytes from the key's middle, the end of the
# user mapping's secret header value, the middle of its proxy password
# (a secret of the mapping whether or not a proxy is in use) and the
# start of the bearer token.  Three answers: a JSON error quoted as the
# server's message (502, a checkpoint), a 401 saying the same, and an
# HTML page quoted as an excerpt cut at 120 bytes, with the masked key in
# UTF-8 ("sk_l\x{2026}Q7vZ").  No 4-byte window of any of these secrets
# may be left in the caller's errors, in the server log (errors logged
# with their detail and hint), or in lancelsm_checkpoint_history; the
# words around the pieces stay, each run of masked bytes reads "***".
#
# Text the caller passed is no disclosure to it: a role with only USAGE
# on the server (its PUBLIC mapping's key is unreadable to it) calls
# lancelsm_flush with table names made of the key's known prefix and a
# right or a wrong next byte; the server answers 404 and echoes the
# name.  Were the name or its echo masked where they share 4 bytes with
# the key, the two errors would differ and tell the role the key a byte
# at a time.  Both errors, and their entries in the server log, must read
# the same but for the name, and show the name as it was passed; so must
# they when a gateway echoes the key itself beside the name.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $KEY = 'sk_lW7yR2xB9vN4cT3hJ6dQ7vZ';
my $HEADER = 'hq7Xv2Rk9Tz4Wm';
my $PROXY_PASSWORD = 'pZ5nK8rD3jB6';
my $TOKEN = 'tF4gH7kL2mN9pQ';
my %SECRETS = (key => $KEY, header => $HEADER,
	proxy_password => $PROXY_PASSWORD, token => $TOKEN);

my $emu = start_extra_emulator(api_key => $KEY);
my $node = setup_node_conf('redaction', $emu->{port},
	"log_error_verbosity = verbose\n");
my $token_file = $node->data_dir . '/lancelsm_token';
append_to_file($token_file, "$TOKEN\n");
# the statement that holds the secrets is not logged (the documented
# mitigation, as in security_secrets.pl)
$node->safe_psql('postgres', qq{
	ALTER SERVER emu OPTIONS (ADD bearer_token_file '$token_file');
	SET log_statement = 'none';
	SET log_min_error_statement = 'panic';
	ALTER USER MAPPING FOR PUBLIC SERVER emu OPTIONS (SET api_key '$KEY',
	  ADD extra_headers '{"X-Gw-Token": "$HEADER"}',
	  ADD proxy_user 'gw', ADD proxy_password '$PROXY_PASSWORD');
});
my ($s) = open_session($node);
$s->query_safe("SET statement_timeout = '20s'");

# a first checkpoint that succeeds gives the table its history entry (a
# table's first run is kept only once the server answered it)
my ($out, $err, $st) = run_sql($s, "SELECT lancelsm_checkpoint('emu', 'events')");
is($st, '', 'a checkpoint with every secret succeeds') or diag($err);
my $sent = emu_at($emu, 'GET', '/_emulator/log?table=events&route=flush_lsm')
  ->{requests}[0]{headers};
is(join('|', $sent->{'x-gw-token'}, $sent->{authorization}),
	"$HEADER|Bearer $TOKEN",
	'the requests were sent with the header and the bearer token');

sub fault { emu_at($emu, 'POST', '/_emulator/faults', $_[0]); }

# pieces: the windows of every secret found in text, as "name:window".
sub pieces
{
	my ($text) = @_;
	my @found;

	for my $name (sort keys %SECRETS)
	{
		my $secret = $SECRETS{$name};
		for my $i (0 .. length($secret) - 4)
		{
			my $w = substr($secret, $i, 4);
			push @found, "$name:$w" if index($text, $w) >= 0;
		}
	}
	return \@found;
}

my $masked = substr($KEY, 0, 4) . '...' . substr($KEY, -4);
my $message = "gateway refused key $masked (fragment "
  . substr($KEY, 9, 8) . '); X-Gw-Token ...' . substr($HEADER, -9)
  . '; proxy auth ' . substr($PROXY_PASSWORD, 3, 6) . '; bearer '
  . substr($TOKEN, 0, 7);
my $redacted = 'gateway refused key ***...*** (fragment ***); '
  . 'X-Gw-Token ...***; proxy auth ***; bearer ***';
is(join(',', sort keys %{ { map { (split /:/)[0] => 1 } @{ pieces($message) } } }),
	'header,key,proxy_password,token',
	'(the echo holds pieces of all four secrets)');

my $told = '';    # everything the caller was told

# echo: make the next flush_lsm answer with $answer (status and body of an
# emulator fault), run $sql; check its SQLSTATE and that its detail is
# $detail (quoted), then the request id.  Returns the error text.
sub echo
{
	my ($what, $answer, $sql, $state, $detail) = @_;

	emu_at($emu, 'POST', '/_emulator/reset');
	fault({ table => 'events', route => 'flush_lsm', %$answer });
	my ($o, $e, $code) = run_sql($s, $sql, \$told);
	is($code, $state, "$what: $state") or diag($e);
	like($e, qr/DETAIL:\s+\Q$detail\E\. Request ID: [0-9a-f-]{36}\.\n/,
		"$what: the detail keeps the words, each piece masked");
	return $e;
}

# 1. a checkpoint whose flush a gateway answers with a JSON error
echo('JSON error', { status => 502, json => { code => 20, error => $message } },
	"SELECT lancelsm_checkpoint('emu', 'events')", 'HV000',
	"The server answered HTTP status 502, code 20: $redacted");
my $history = $node->safe_psql('postgres',
	"SELECT ok, sqlstate, message FROM lancelsm_checkpoint_history "
	  . "WHERE server = 'emu' AND table_name = 'events'");
like($history,
	qr/^f\|HV000\|could not checkpoint LanceDB table "events": The server answered HTTP status 502, code 20: \Q$redacted\E\. Request ID/,
	'history: the failure with each piece masked');
is_deeply(pieces($history), [], 'history: no 4-byte window of any secret');

# 2. a 401 saying the same
echo('401', { status => 401, json => { code => 2, error => $message } },
	"SELECT lancelsm_flush('emu', 'events')", '28000',
	"The server answered HTTP status 401, code 2: $redacted");

# 3. an HTML page, quoted as an excerpt cut at 120 bytes; "\x{2026}" is
#    3 bytes of UTF-8, each shown as "?"
my $page = "<html>denied: key " . substr($KEY, 0, 4) . "\x{2026}"
  . substr($KEY, -4) . ', tenant ' . substr($HEADER, 2, 8) . '; '
  . ('y' x 80) . $TOKEN . '</html>';
my $excerpt = '<html>denied: key ***???***, tenant ***; ' . ('y' x 79) . '...';
echo('HTML page', { status => 502, content_type => 'text/html', body => $page },
	"SELECT lancelsm_flush('emu', 'events')", 'HV000',
	"The server answered HTTP status 502 with a body that is not a JSON error: \"$excerpt\"");

# 4. nothing the caller was told, nothing in the log
like($told, qr/\*\*\*/, '(the caller was told of masked pieces)');
is_deeply(pieces($told), [],
	'the caller: no 4-byte window of any secret in any error, detail or hint');
my $log = slurp_file($node->logfile);
like($log, qr/ERROR:\s+HV000:.*\n.*DETAIL:.*\Q$redacted\E/,
	'(the log holds the errors with their details)');
is_deeply(pieces($log), [], 'the server log: no 4-byte window of any secret');

# 5. the oracle: a USAGE-only role probes the key's next byte
$node->safe_psql('postgres', q{
	CREATE ROLE mallory LOGIN;
	GRANT USAGE ON FOREIGN SERVER emu TO mallory;
});
my ($ret, $mo, $me) = $node->psql('postgres', q{
	SELECT coalesce(umoptions::text, 'NULL') FROM pg_user_mappings
	WHERE srvname = 'emu'}, extra_params => [ '-U', 'mallory' ]);
is($mo, 'NULL', '(mallory cannot read the PUBLIC mapping\'s key)');

my $known = substr($KEY, 0, 4);
my $right = $known . substr($KEY, 4, 1);
my $wrong = $known . (substr($KEY, 4, 1) eq 'X' ? 'Y' : 'X');
is_deeply([ map { scalar @{ pieces($_) } } $right, $wrong ], [ 2, 1 ],
	'(the right name holds 2 windows of the key, the wrong one 1)');

# probe: mallory's error for a flush of table $name, and the server log's
# entry of it, with the request id and the name replaced; with $echo, a
# gateway answers 502 with that message, "NAME" replaced by the name.
sub probe
{
	my ($name, $echo) = @_;
	my $offset = -s $node->logfile;

	emu_at($emu, 'POST', '/_emulator/reset');
	if (defined $echo)
	{
		(my $said = $echo) =~ s/NAME/$name/g;
		fault({ table => $name, route => 'flush_lsm', status => 502,
			json => { code => 20, error => $said } });
	}
	my ($r, $o, $e) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT lancelsm_flush('emu', '$name')",
		extra_params => [ '-U', 'mallory' ]);
	my $logged = join("\n", grep { /^.*?(ERROR|DETAIL|HINT):/ }
		  split /\n/, substr(slurp_file($node->logfile), $offset));
	$logged =~ s/^.*?((ERROR|DETAIL|HINT):)/$1/mg;
	for ($e, $logged)
	{
		s/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/ID/g;
		s/\Q$name\E/NAME/g;
		s/\nLOCATION:.*//s;
		s/^psql:<stdin>:\d+: //mg;
	}
	return ($e, $logged);
}
my ($err_right, $log_right) = probe($right);
my ($err_wrong, $log_wrong) = probe($wrong);
my $expected = 'ERROR:  HV00R: could not flush LanceDB table "NAME"' . "\n"
  . 'DETAIL:  The server answered HTTP status 404, code 3: table NAME not found. Request ID: ID.'
  . "\n" . 'HINT:  Check the table name: namespace levels are joined by the server\'s id_delimiter.';
is($err_right, $expected,
	'the right next byte: the name and its echo as passed, nothing masked');
is($err_wrong, $expected,
	'a wrong next byte: the same error but for the name');
is($log_right, $expected,
	'the server log, the right next byte: the name and its echo as passed');
is($log_wrong, $expected,
	'the server log, a wrong next byte: the same entries but for the name');

# a gateway that echoes the key itself beside the name: the key is masked
# whole whatever the name (were the name's windows exempted one by one,
# the right next byte would leave "sk***" of it, a wrong one "s***")
my $gateway = "key $KEY rejected for table NAME";
($err_right, $log_right) = probe($right, $gateway);
($err_wrong, $log_wrong) = probe($wrong, $gateway);
$expected = 'ERROR:  HV000: could not flush LanceDB table "NAME"' . "\n"
  . 'DETAIL:  The server answered HTTP status 502, code 20: key *** rejected for table NAME. Request ID: ID.';
is($err_right, $expected,
	'a gateway echoing the key, the right next byte: the key masked whole');
is($err_wrong, $expected,
	'a gateway echoing the key, a wrong next byte: the same error');
is($log_right, $expected, 'the server log, the right next byte: the same');
is($log_wrong, $expected, 'the server log, a wrong next byte: the same');

# 6. the request id is lancelsm's own random UUID, no secret: a mapping
#    secret holding every window "H-4H" (H a hex digit) shares 4 bytes
#    with every UUID v4 ("xxxxxxxx-xxxx-4xxx-..."), yet the detail quotes
#    the id whole, the one the server was sent, while the server's echo
#    of that secret is masked
my $uuid_windows = join('', map { my $h = $_;
	  map { "$h-4$_" } 0 .. 9, 'a' .. 'f' } 0 .. 9, 'a' .. 'f');
$node->safe_psql('postgres', qq{
	SET log_statement = 'none';
	SET log_min_error_statement = 'panic';
	ALTER USER MAPPING FOR PUBLIC SERVER emu
	  OPTIONS (SET extra_headers '{"X-Gw-Token": "$uuid_windows"}');
});
emu_at($emu, 'POST', '/_emulator/reset');
fault({ table => 'events', route => 'flush_lsm', status => 502,
	json => { code => 20, error => 'gateway refused ' . substr($uuid_windows, 40, 12) } });
($out, $err, $st) = run_sql($s, "SELECT lancelsm_flush('emu', 'events')");
my $requests = emu_at($emu, 'GET',
	'/_emulator/log?table=events&route=flush_lsm')->{requests};
my $sent_id = $requests->[-1]{headers}{'x-request-id'};
like($sent_id, qr/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-/,
	'(the request was sent with a UUID v4 request id)');
cmp_ok(scalar(grep { index($sent_id, substr($uuid_windows, $_ * 4, 4)) >= 0 }
	  0 .. 255), '>=', 1, '(a window of the secret occurs in it)');
like($err,
	qr/DETAIL:\s+The server answered HTTP status 502, code 20: gateway refused \*\*\*\. Request ID: \Q$sent_id\E\.\n/,
	'the request id whole and the one sent; the echoed secret masked');

# 7. the server's host and database are options every role with USAGE
#    reads, no secret: a host name that shares 4 bytes with the key stays
#    whole in libcurl's text, and the database in the server's
my $host = 'gw-' . substr($KEY, 4, 6) . '.invalid';
is(scalar @{ pieces($host) }, 3, '(the host name holds 3 windows of the key)');
$node->safe_psql('postgres', qq{
	CREATE SERVER byname FOREIGN DATA WRAPPER lancelsm
	  OPTIONS (database 'mydb', host_override 'http://$host:1');
	SET log_statement = 'none';
	CREATE USER MAPPING FOR PUBLIC SERVER byname OPTIONS (api_key '$KEY');
});
($out, $err, $st) = run_sql($s, "SELECT lancelsm_flush('byname', 'events')");
is($st, 'HV00N', 'an unresolvable host name: HV00N') or diag($err);
like($err, qr/DETAIL:[^\n]*\Q$host\E/, 'the host name whole in the detail');
is_deeply(pieces($err), [ map { "key:" . substr($KEY, $_, 4) } 4 .. 6 ],
	'no other window of the key (the host name\'s own is the name)');

$s->quit;
$node->stop;
done_testing();
