# LsmTap.pm: shared helpers of lancelsm's TAP tests.
#
# The TAP side of the test lab (scripts/lab.sh is the shell side).  Each
# test file starts its own LanceDB LSM route emulator on a free port,
# through the launcher every caller shares (scripts/emulator.sh), talks
# to its control API (/_emulator/...) with HTTP::Tiny, and runs a
# PostgreSQL::Test::Cluster node with the extension, a server pointing at
# the emulator and a user mapping.  Statements run in PostgreSQL::Test::BackgroundPsql sessions so
# that they can be timed, sent asynchronously and cancelled from another
# session.  Every wait here is bounded.
package LsmTap;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use File::Spec;
use FindBin;
use HTTP::Tiny;
use JSON::PP;
use POSIX ();
use Socket qw(getaddrinfo getnameinfo NI_NUMERICHOST SOCK_STREAM);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

our @EXPORT = qw(start_emulator emu emu_reset emu_counts wait_for_request
  setup_node open_session timed_query send_query finish_query
  backend_emulator_sockets backend_tcp_rows $API_KEY
  start_extra_emulator stop_extra_emulator emu_at backend_rss_kb
  reset_peak_rss sqlstate_of setup_node_conf skip_without_pg_cron
  query_until skip_in_repeat_runs install_lancelsm wait_peer_closed run_sql
  skip_without_name emu_table add_server init_cron_node pg_cron_seconds
  psql_verbose outcomes_written expect_skipped);

our $API_KEY = 'tap-secret-key';

my $emu_pid;
my $emu_owner = $$;
my $emu_port;
my $http = HTTP::Tiny->new(timeout => 10, keep_alive => 0);

# PostgreSQL::Test::BackgroundPsql as 16.2 ships it returns a query's
# output with its trailing newline; the later revision (in 17 and up, and
# back-patched: Debian's 15 has it) strips it and counts its queries in
# query_cnt.  With the older module, strip that newline too, so that every
# test reads the same output on every major.
require PostgreSQL::Test::BackgroundPsql;
{
	no warnings 'redefine';
	my $query = \&PostgreSQL::Test::BackgroundPsql::query;
	*PostgreSQL::Test::BackgroundPsql::query = sub {
		my ($self) = @_;
		my ($output, $ret) = $query->(@_);

		$output =~ s/\n\z// unless exists $self->{query_cnt};
		return wantarray ? ($output, $ret) : $output;
	};
}

# launch_emulator: fork and exec scripts/emulator.sh --exec (the one
# launcher of tests, benches and scripts) in a new temporary directory,
# with one table "events" of one bucket, passes of 100 ms, the API key
# $opt{api_key} (default $API_KEY), the port $opt{port} (default: a free
# one) and @{$opt{args}}; waits at most 10 s until it listens.  Returns
# (pid, port, log).
sub launch_emulator
{
	my (%opt) = @_;
	my $root = File::Spec->rel2abs("$FindBin::RealBin/..");
	my $dir = PostgreSQL::Test::Utils::tempdir('emulator');
	my $port_file = "$dir/emulator.port";
	my $log = "$dir/emulator.log";
	my $pid = fork();

	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		exec('bash', "$root/scripts/emulator.sh", '--exec', $dir,
			'--port', $opt{port} // 0,
			'--api-key', $opt{api_key} // $API_KEY, '--table', 'events:1',
			'--pass-ms', '100', @{ $opt{args} || [] })
		  or POSIX::_exit(127);
	}
	# an interpreter's start takes seconds on a loaded machine
	my $until = time() + 10;
	while (!-s $port_file && time() < $until)
	{
		die "emulator exited early, see $log: "
		  . (-e $log ? PostgreSQL::Test::Utils::slurp_file($log) : '')
		  if waitpid($pid, POSIX::WNOHANG()) == $pid;
		sleep(0.02);
	}
	unless (-s $port_file)
	{
		kill('KILL', $pid);
		waitpid($pid, 0);
		die "emulator did not write $port_file within 10 s, see $log";
	}
	my $port = PostgreSQL::Test::Utils::slurp_file($port_file);
	chomp $port;
	return ($pid, $port, $log);
}

# start_emulator: start the emulator with one table "events" of one bucket
# and no writer; returns its port.  It is stopped in END.
sub start_emulator
{
	my $log;

	($emu_pid, $emu_port, $log) = launch_emulator();
	note "emulator pid $emu_pid listening on port $emu_port, log $log";
	return $emu_port;
}

# Extra emulators (start_extra_emulator): a hash per instance with pid,
# port, host and log; all still running are stopped in END.
my @extra_emulators;

# start_extra_emulator: start one more emulator with the options of
# start_emulator plus @args (e.g. '--host', '::1', or '--tls-cert', FILE,
# '--tls-key', FILE); (host => H) names the address its control API is
# reached at, (port => P) asks for that port (a restart on the same port).
# Returns the instance (a hash: pid, port, host, log).
sub start_extra_emulator
{
	my (%opt) = @_;
	my $inst = { host => $opt{host} // '127.0.0.1' };

	($inst->{pid}, $inst->{port}, $inst->{log}) = launch_emulator(%opt);
	push @extra_emulators, $inst;
	note "extra emulator pid $inst->{pid} on $inst->{host} port $inst->{port}";
	return $inst;
}

# stop_extra_emulator: SIGTERM an extra emulator and wait (at most 5 s,
# then SIGKILL) until it is gone.
sub stop_extra_emulator
{
	my ($inst) = @_;

	return unless $inst->{pid};
	kill('TERM', $inst->{pid});
	my $until = time() + 5;
	while (waitpid($inst->{pid}, POSIX::WNOHANG()) == 0 && time() < $until)
	{
		sleep(0.02);
	}
	if (kill(0, $inst->{pid}))
	{
		kill('KILL', $inst->{pid});
		waitpid($inst->{pid}, 0);
	}
	$inst->{pid} = 0;
}

# emu_at: a control API request to an extra (plain-HTTP) emulator.
sub emu_at
{
	my ($inst, $method, $path, $body) = @_;
	my %opt = (headers => { 'content-type' => 'application/json' });
	my $host = $inst->{host} =~ /:/ ? "[$inst->{host}]" : $inst->{host};

	$opt{content} = encode_json($body) if defined $body;
	my $res = $http->request($method, "http://$host:$inst->{port}$path", \%opt);
	die "emulator $method $path: $res->{status} $res->{content}"
	  unless $res->{status} == 200;
	return decode_json($res->{content});
}

# backend_rss_kb: (VmRSS, VmHWM) of a process in kB, from /proc.
sub backend_rss_kb
{
	my ($pid) = @_;
	my ($rss, $hwm);

	open(my $fh, '<', "/proc/$pid/status") or die "/proc/$pid/status: $!";
	while (<$fh>)
	{
		$rss = $1 if /^VmRSS:\s+(\d+)/;
		$hwm = $1 if /^VmHWM:\s+(\d+)/;
	}
	close $fh;
	return ($rss, $hwm);
}

# reset_peak_rss: reset VmHWM of a process to its current RSS (same user).
sub reset_peak_rss
{
	my ($pid) = @_;

	open(my $fh, '>', "/proc/$pid/clear_refs") or die "clear_refs: $!";
	print $fh "5\n";
	close $fh;
}

# skip_without_pg_cron: skip the whole test (plan skip_all) when pg_cron
# is not installed for this PostgreSQL (PG_CONFIG's, else pg_config's).
# scripts/test.sh sets LANCELSM_REQUIRE_PG_CRON for every PostgreSQL that
# has a pg_cron package: there a missing pg_cron bails out instead.
sub skip_without_pg_cron
{
	my $pkglibdir = `@{[$ENV{PG_CONFIG} || "pg_config"]} --pkglibdir`;

	chomp $pkglibdir;
	return if -e "$pkglibdir/pg_cron.so";
	my $why = "pg_cron is not installed ($pkglibdir/pg_cron.so; "
	  . 'apt-get install postgresql-<major>-cron)';
	BAIL_OUT($why) if $ENV{LANCELSM_REQUIRE_PG_CRON};
	plan skip_all => $why;
}

# skip_in_repeat_runs: skip the whole test (plan skip_all) in the runs
# that repeat the suite for another purpose: under ASan and UBSan
# (scripts/sanitize.sh sets LANCELSM_UNDER_ASAN) and as the Debian
# package's autopkgtest (debian/tests/installcheck sets
# LANCELSM_PACKAGE_TEST).  For tests of network behaviour whose failure
# paths other tests already take under the sanitizers: they run once per
# PostgreSQL version, in the source tree's suite, to keep CI's time.
sub skip_in_repeat_runs
{
	plan skip_all => 'run once per version in the source tree suite, not '
	  . 'under the sanitizers (LANCELSM_UNDER_ASAN)'
	  if $ENV{LANCELSM_UNDER_ASAN};
	plan skip_all => 'run once per version in the source tree suite, not '
	  . 'as the package\'s autopkgtest (LANCELSM_PACKAGE_TEST)'
	  if $ENV{LANCELSM_PACKAGE_TEST};
}

# skip_without_name: skip the whole test (plan skip_all) unless getaddrinfo
# resolves $name to $address (and to nothing else), as it does where
# scripts/with-names.sh runs the suite; scripts/test.sh sets
# LANCELSM_REQUIRE_NAMES there, and then a name that does not resolve
# bails out instead.
sub skip_without_name
{
	my ($name, $address) = @_;
	my ($err, @res) = getaddrinfo($name, undef, { socktype => SOCK_STREAM });
	my @got = map { (getnameinfo($_->{addr}, NI_NUMERICHOST))[1] } @res;

	return if !$err && "@got" eq $address;
	my $why = "$name does not resolve to $address alone ("
	  . ($err ? "getaddrinfo: $err" : "it resolves to @got")
	  . '); run the suite under scripts/with-names.sh';
	BAIL_OUT($why) if $ENV{LANCELSM_REQUIRE_NAMES};
	plan skip_all => $why;
}

# sqlstate_of: the SQLSTATE of the first ERROR or FATAL in psql's
# verbose stderr, or '' when there is none.
sub sqlstate_of
{
	my ($err) = @_;

	return $err =~ /(?:ERROR|FATAL):\s+([0-9A-Z]{5}):/ ? $1 : '';
}

END
{
	# keep the test's exit status: waitpid below sets $?
	local $?;

	stop_extra_emulator($_) for grep { $$ == $emu_owner } @extra_emulators;

	if ($emu_pid && $$ == $emu_owner)
	{
		kill('TERM', $emu_pid);
		my $until = time() + 5;
		while (waitpid($emu_pid, POSIX::WNOHANG()) == 0 && time() < $until)
		{
			sleep(0.02);
		}
		kill('KILL', $emu_pid) if kill(0, $emu_pid);
		waitpid($emu_pid, 0);
	}
}

# emu: one control API request; returns the decoded JSON answer, dies on a
# status other than 200.
sub emu
{
	my ($method, $path, $body) = @_;
	my %opt = (headers => { 'content-type' => 'application/json' });

	$opt{content} = encode_json($body) if defined $body;
	my $res = $http->request($method, "http://127.0.0.1:$emu_port$path", \%opt);
	die "emulator $method $path: $res->{status} $res->{content}"
	  unless $res->{status} == 200;
	return decode_json($res->{content});
}

sub emu_reset { return emu('POST', '/_emulator/reset'); }

# emu_counts: route calls on table "events" since the last reset.
sub emu_counts { return emu('GET', '/_emulator/counts?table=events'); }

# wait_for_request: wait (at most 5 s) until the emulator has logged a
# request on route that matches the optional predicate; returns it.
sub wait_for_request
{
	my ($route, $pred) = @_;
	my $until = time() + 5;

	while (time() < $until)
	{
		my $log = emu('GET', "/_emulator/log?table=events&route=$route");
		for my $r (@{ $log->{requests} })
		{
			return $r if !$pred || $pred->($r);
		}
		sleep(0.01);
	}
	die "no $route request reached the emulator within 5 s";
}

# emu_table: a one-bucket table $name on the emulator, with $gens L0
# generations of 10 rows each (none when $gens is 0 or undef).
sub emu_table
{
	my ($name, $gens) = @_;

	emu('POST', '/_emulator/tables', { name => $name, buckets => 1 });
	emu('POST', "/_emulator/tables/$name/generations", { count => $gens, rows => 10 })
	  if $gens;
}

# add_server: in database $db of a started node where the extension is
# installed, server $server reaching the emulator at $port, and a PUBLIC
# user mapping with the API key.
sub add_server
{
	my ($node, $db, $server, $port) = @_;

	$node->safe_psql($db, qq{
		CREATE SERVER $server FOREIGN DATA WRAPPER lancelsm
		  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$port');
		CREATE USER MAPPING FOR PUBLIC SERVER $server OPTIONS (api_key '$API_KEY');
	}, timeout => 30);
}

# install_lancelsm: on a started node, in database $db (default postgres),
# the extension, server "emu" (the emulator at $port) and a PUBLIC user
# mapping with the API key.
sub install_lancelsm
{
	my ($node, $port, $db) = @_;

	$db //= 'postgres';
	$node->safe_psql($db, 'CREATE EXTENSION lancelsm', timeout => 30);
	add_server($node, $db, 'emu', $port);
}

# setup_node: a started node with the extension, server "emu" and a PUBLIC
# user mapping.
sub setup_node
{
	my ($name, $port) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init;
	$node->start;
	install_lancelsm($node, $port);
	return $node;
}

# setup_node_conf: like setup_node, with $conf appended to
# postgresql.conf before the first start, and lancelsm preloaded (so the
# extension works whether or not it needs shared_preload_libraries).
sub setup_node_conf
{
	my ($name, $port, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init;
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'lancelsm'\n" . ($conf // ''));
	$node->start;
	install_lancelsm($node, $port);
	return $node;
}

# init_cron_node: a new node, initialized but not started, whose
# postgresql.conf preloads pg_cron and lancelsm, points pg_cron at
# database postgres on the node's own host, and ends with $conf.
sub init_cron_node
{
	my ($name, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	my $host = $node->host;

	$node->init;
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_cron,lancelsm'
cron.database_name = 'postgres'
cron.host = '$host'
} . ($conf // ''));
	return $node;
}

# pg_cron_seconds: (pg_cron's extension version, whether it takes
# "N seconds" schedules: 1.5 and later do, older ones schedule by the
# minute) on a started node where pg_cron is created.
sub pg_cron_seconds
{
	my ($node) = @_;
	my $version = $node->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'pg_cron'");
	my ($major, $minor) = $version =~ /^(\d+)\.(\d+)/;

	return ($version, $major > 1 || ($major == 1 && $minor >= 5));
}

# psql_verbose: $sql in a psql of its own on database postgres, as role
# $role (default: the node's superuser), with verbose errors (SQLSTATEs)
# and without stopping at one; returns (stdout, stderr).
sub psql_verbose
{
	my ($node, $sql, $role) = @_;
	my ($out, $err);

	$node->psql('postgres', $sql, stdout => \$out, stderr => \$err,
		on_error_stop => 0,
		extra_params => [ (defined $role ? ('-U', $role) : ()),
			'-v', 'VERBOSITY=verbose' ],
		timeout => 60);
	return ($out, $err);
}

# outcomes_written: wait (bounded, as poll_query_until is) until no outcome
# waits in the queue for the outcome writer and no writer runs, i.e. until
# what a rolled back or failed call handed over is in lancelsm_table;
# returns true when so.
sub outcomes_written
{
	my ($node) = @_;

	return $node->poll_query_until('postgres', q{
		SELECT (SELECT pending_outcomes FROM lancelsm_info) = 0
		   AND NOT EXISTS (SELECT FROM pg_stat_activity
		                    WHERE backend_type = 'lancelsm outcome writer')});
}

# expect_skipped: check in session $s that lancelsm_checkpoint_all() and
# lancelsm_checkpoint_due() skip the one declared table, "events" of
# server "emu", while backend $pid runs its checkpoint: not ok, 55006, a
# message naming $pid, no pass and no poll; checkpoint_due reads its
# stats, finds it due for $reason (a string, or a Regexp where the count
# is the server's to say), and takes no action.  $what names the checks.
sub expect_skipped
{
	my ($s, $pid, $reason, $what) = @_;
	my $skipped = "skipped: a checkpoint of this table is running in backend $pid";
	my $why = ref $reason ? $reason : quotemeta($reason);

	is($s->query_safe(
			'SELECT server, table_name, ok, sqlstate, message, elapsed IS NULL, '
			  . 'passes, polls FROM lancelsm_checkpoint_all()'),
		"emu|events|f|55006|$skipped|t|0|0",
		"$what: lancelsm_checkpoint_all() skips it, not ok, 55006, naming the backend");
	like($s->query_safe(
			'SELECT table_name, ok, sqlstate, message, due, reason, action, polls '
			  . 'FROM lancelsm_checkpoint_due()'),
		qr/\A\Qevents|f|55006|$skipped|t|\E$why\Q|none|0\E\z/,
		"$what: lancelsm_checkpoint_due() reads its stats, skips it, not ok, 55006, no action");
}

# query_until: run $sql in session $s until it returns $want, a string or
# a Regexp to match (at most 10 s); returns the last answer.
sub query_until
{
	my ($s, $sql, $want) = @_;
	my $until = time() + 10;
	my $out;

	while (time() < $until)
	{
		$out = $s->query_safe($sql);
		chomp $out;
		return $out if (ref $want ? $out =~ $want : $out eq $want);
		sleep(0.02);
	}
	return $out;
}

# run_sql: one statement in session $s (from open_session); appends what
# the client was told to the string $told refers to, when given; returns
# (stdout, stderr, SQLSTATE or '').
sub run_sql
{
	my ($s, $sql, $told) = @_;
	my ($ms, $out, $err) = timed_query($s, $sql);

	$$told .= "$out\n$err\n" if $told;
	return ($out, $err, sqlstate_of($err));
}

# open_session: a background psql session (errors do not stop it, verbose
# errors so that the SQLSTATE is visible); returns ($session, $pid).
sub open_session
{
	my ($node) = @_;
	my $s = $node->background_psql('postgres', on_error_stop => 0,
		timeout => 30);

	$s->set_query_timer_restart;
	$s->query_safe('\set VERBOSITY verbose');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	chomp $pid;
	return ($s, $pid);
}

# timed_query: run one statement in a session; returns (elapsed ms, stdout,
# stderr) of that statement alone.
sub timed_query
{
	my ($s, $sql) = @_;

	$s->{stderr} = '';
	my $t0 = time();
	my $out = $s->query($sql);
	my $ms = (time() - $t0) * 1000;
	my $err = $s->{stderr};
	$s->{stderr} = '';
	chomp $out;
	return ($ms, $out, $err);
}

# send_query: send one statement without waiting for it; returns a token
# for finish_query.
my $async_cnt = 0;

sub send_query
{
	my ($s, $sql) = @_;
	my $banner = 'lsmtap async ' . ++$async_cnt;

	$s->{stderr} = '';
	$s->{stdout} = '';
	$s->{timeout}->start();
	$s->{stdin} .= "$sql\n;\n\\echo '$banner'\n\\warn '$banner'\n";
	$s->{run}->pump_nb();
	return $banner;
}

# finish_query: wait (bounded by the session timeout) for a statement sent
# with send_query; returns (stdout, stderr).  With $until_re, stops as
# soon as stderr matches it or psql exits (a terminated backend).
sub finish_query
{
	my ($s, $banner, $until_re) = @_;
	my $re = qr/\Q$banner\E\r?\n/;

	while (!($s->{stdout} =~ $re && $s->{stderr} =~ $re))
	{
		last if $until_re && $s->{stderr} =~ $until_re;
		die "psql query timed out" if $s->{timeout}->is_expired;
		last unless $s->{run}->pumpable;
		$s->{run}->pump();
	}
	my ($out, $err) = ($s->{stdout}, $s->{stderr});
	$out =~ s/\r?\n?$re//;
	$err =~ s/\r?\n?$re//;
	$s->{stdout} = $s->{stderr} = '';
	chomp $out;
	return ($out, $err);
}

# backend_tcp_rows: the /proc/net/tcp{,6} rows (split into fields) of every
# socket process $pid holds open to remote port $port (default: the
# emulator's).
sub backend_tcp_rows
{
	my ($pid, $port) = @_;
	my %inodes;
	my @rows;

	$port //= $emu_port;
	opendir(my $dh, "/proc/$pid/fd") or die "cannot read /proc/$pid/fd: $!";
	for my $fd (readdir $dh)
	{
		my $link = readlink("/proc/$pid/fd/$fd");
		$inodes{$1} = 1 if defined $link && $link =~ /^socket:\[(\d+)\]$/;
	}
	closedir $dh;
	for my $table ('/proc/net/tcp', '/proc/net/tcp6')
	{
		open(my $fh, '<', $table) or next;
		<$fh>;
		while (my $line = <$fh>)
		{
			my @f = split ' ', $line;
			my ($rport) = $f[2] =~ /:([0-9A-F]{4})$/;
			push @rows, \@f if hex($rport) == $port && $inodes{ $f[9] };
		}
		close $fh;
	}
	return @rows;
}

# backend_emulator_sockets: the TCP states (hex, as /proc/net/tcp gives
# them) of every socket process $pid holds open to the emulator's port.
sub backend_emulator_sockets
{
	my ($pid) = @_;

	return map { $_->[3] } backend_tcp_rows($pid);
}

# wait_peer_closed: wait (at most 30 s) until process $pid holds no
# established connection to remote port $port (default: the emulator's),
# i.e. until the server's close of an idle connection has reached it (its
# socket in CLOSE_WAIT, or gone); returns whether it did.
sub wait_peer_closed
{
	my ($pid, $port) = @_;
	my $until = time() + 30;

	while (grep { $_->[3] eq '01' } backend_tcp_rows($pid, $port))
	{
		return 0 if time() >= $until;
		sleep(0.02);
	}
	return 1;
}

1;
