# LsmNet.pm: the real network path of lancelsm's TAP tests: an nginx TLS
# edge (HTTP/2 and HTTP/1.1) in front of the emulator, and a squid egress
# proxy, both from their Debian packages.
#
# Each is started by the test that needs it, as the test's own user, in a
# temporary directory, listening on 127.0.0.1 only, on free ports; each
# runs under timeout(1), so it stops by itself after its lifetime even if
# the test dies, and END stops it at once.  The test certificates (a CA,
# certificates for localhost, for another name, and an expired one) are
# made with the openssl CLI.
#
# A test calls require_tool first: without the tool it skips (plan
# skip_all) with the reason, unless LANCELSM_REQUIRE_NETWORK is set (the
# host PostgreSQL 15 run of scripts/test.sh sets it): then it bails out.
package LsmNet;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use File::Spec;
use IO::Socket::INET;
use IPC::Run;
use LsmTap ();
use POSIX ();
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

our @EXPORT = qw(require_tool make_pki start_nginx start_squid stop_server
  log_mark log_since log_lines tool);

# Longest life of a server started here, in seconds.
my $LIFETIME = 240;

my @servers;
my $owner = $$;

# require_tool: the path of an executable (looked up in /usr/sbin, /sbin
# and PATH); skips the whole test without it, or bails out when
# LANCELSM_REQUIRE_NETWORK is set.
sub require_tool
{
	my ($name, $package) = @_;

	for my $dir ('/usr/sbin', '/sbin', split(/:/, $ENV{PATH} // ''))
	{
		return "$dir/$name" if -x "$dir/$name";
	}
	my $why = "$name is not installed (apt-get install $package)";
	BAIL_OUT($why) if $ENV{LANCELSM_REQUIRE_NETWORK};
	plan skip_all => $why;
}

# own_env: in a child about to exec a tool or server, drop the sanitizer
# runtime scripts/sanitize.sh preloads for lancelsm's backends: nginx,
# squid, openssl and curl are not under test, and their leaks at exit
# would read as reports.
sub own_env
{
	delete @ENV{qw(LD_PRELOAD ASAN_OPTIONS UBSAN_OPTIONS)};
}

# tool: run a command-line tool (@cmd), with own_env; returns its stdout,
# dies on failure.
sub tool
{
	my @cmd = @_;
	my ($out, $err);

	IPC::Run::run(\@cmd, '>', \$out, '2>', \$err, init => \&own_env)
	  or die "@cmd: $err";
	return $out;
}

# openssl: run the openssl CLI quietly; dies on failure.
sub openssl { tool('openssl', @_); }

# make_pki: in a new temporary directory (returned), a test CA (ca.crt) and certificates it signs, each
# with its key: localhost.crt (localhost and 127.0.0.1), wrong.crt (for
# wrong.example only) and expired.crt (localhost, expired yesterday), and
# one more per extra argument, [name, subjectAltName], valid two days
# (e.g. [ 'cloud', 'DNS:*.us-east-1.api.lancedb.com' ]).
sub make_pki
{
	my @extra = @_;
	my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('pki'));

	openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2',
		'-subj', '/CN=lancelsm test CA', '-keyout', "$dir/ca.key",
		'-out', "$dir/ca.crt");
	for my $c ([ 'localhost', 'DNS:localhost,IP:127.0.0.1', 2 ],
		[ 'wrong', 'DNS:wrong.example', 2 ],
		[ 'expired', 'DNS:localhost,IP:127.0.0.1', -1 ],
		map { [ @$_, 2 ] } @extra)
	{
		my ($name, $san, $days) = @$c;

		PostgreSQL::Test::Utils::append_to_file("$dir/$name.ext",
			"subjectAltName=$san\n");
		openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', "/CN=$name",
			'-keyout', "$dir/$name.key", '-out', "$dir/$name.csr");
		openssl('x509', '-req', '-days', $days, '-in', "$dir/$name.csr",
			'-CA', "$dir/ca.crt", '-CAkey', "$dir/ca.key",
			'-CAcreateserial', '-extfile', "$dir/$name.ext",
			'-out', "$dir/$name.crt");
	}
	return $dir;
}

# free_ports: $n distinct TCP ports of 127.0.0.1 that nothing listens on
# now.  All $n are held until the last is chosen: the kernel may give a
# port just closed again, and two nginx server blocks on one port would
# silently share it (the first answering for both).
sub free_ports
{
	my ($n) = @_;
	my @socks = map {
		IO::Socket::INET->new(LocalAddr => '127.0.0.1',
			LocalPort => 0, Listen => 1, ReuseAddr => 1)
		  or die "no free port: $!"
	} 1 .. $n;
	my @ports = map { $_->sockport } @socks;

	close $_ for @socks;
	return @ports;
}

# free_port: a TCP port of 127.0.0.1 that nothing listens on now.
sub free_port
{
	return (free_ports(1))[0];
}

# spawn: run @cmd under timeout(1) for $LIFETIME s, output to $log;
# returns its pid.
sub spawn
{
	my ($log, @cmd) = @_;
	my $pid = fork();

	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		POSIX::setsid();
		own_env();
		open(STDOUT, '>>', $log) or POSIX::_exit(127);
		open(STDERR, '>>', $log) or POSIX::_exit(127);
		exec('timeout', '-k', '5', $LIFETIME, @cmd) or POSIX::_exit(127);
	}
	return $pid;
}

# wait_listening: wait (at most 10 s) until 127.0.0.1:$port accepts.
sub wait_listening
{
	my ($srv, $port) = @_;
	my $until = time() + 10;

	while (time() < $until)
	{
		die "$srv->{name} exited early: "
		  . PostgreSQL::Test::Utils::slurp_file($srv->{log})
		  if waitpid($srv->{pid}, POSIX::WNOHANG()) == $srv->{pid};
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
			PeerPort => $port);
		if ($s)
		{
			close $s;
			return;
		}
		sleep(0.05);
	}
	die "$srv->{name} did not listen on $port within 10 s: "
	  . PostgreSQL::Test::Utils::slurp_file($srv->{log});
}

# nginx_server: one nginx server block listening on $port.
sub nginx_server
{
	my ($port, $pki, $upstream, $s) = @_;
	my $listen = "127.0.0.1:$port" . ($s->{tls} // 1 ? ' ssl' : '')
	  . ($s->{http2} // 1 ? ' http2' : '');
	my $cert = $s->{cert} // 'localhost';
	my $conf = "server {\n  listen $listen;\n  server_name localhost;\n";

	$conf .= "  ssl_certificate $pki/$cert.crt;\n"
	  . "  ssl_certificate_key $pki/$cert.key;\n"
	  . "  ssl_protocols " . ($s->{protocols} // 'TLSv1.2 TLSv1.3') . ";\n";
	$conf .= "  ssl_ciphers $s->{ciphers};\n" if $s->{ciphers};
	$conf .= "  keepalive_timeout " . ($s->{keepalive_timeout} // '10s') . ";\n"
	  . "  keepalive_requests " . ($s->{keepalive_requests} // 1000) . ";\n"
	  . "  http2_max_concurrent_streams " . ($s->{max_streams} // 128) . ";\n"
	  . "  error_page 502 /_edge/502.html;\n"
	  . "  error_page 504 /_edge/504.html;\n"
	  . "  location /_edge/ {\n    internal;\n    root html;\n"
	  . "    add_header Retry-After 7 always;\n  }\n"
	  . "  location / {\n"
	  . "    proxy_pass http://" . ($s->{upstream} // $upstream) . ";\n"
	  . "    proxy_http_version 1.1;\n"
	  . "    proxy_set_header Connection \"\";\n"
	  . "    proxy_read_timeout " . ($s->{read_timeout} // '60s') . ";\n"
	  . "  }\n}\n";
	return $conf;
}

# start_nginx: nginx with one server block per entry of %$blocks (name =>
# options: tls, http2 (both default on), cert (a make_pki name),
# protocols, ciphers, keepalive_timeout, keepalive_requests,
# read_timeout, upstream, max_streams (http2_max_concurrent_streams,
# default 128)), each on a free port, proxying to the emulator
# at 127.0.0.1:$emu_port.  Its access log has one line per request:
# "$connection $connection_requests $server_protocol $status $uri".
# Returns the instance: port => { name => port }, log => access log.
sub start_nginx
{
	my ($pki, $emu_port, $blocks) = @_;
	my $nginx = require_tool('nginx', 'nginx');
	my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('nginx'));
	my $srv = { name => 'nginx', log => "$dir/error.log",
		access => "$dir/access.log", port => {} };
	my $user = $< == 0 ? "user root;\n" : '';
	my $servers = '';

	mkdir "$dir/html";
	mkdir "$dir/html/_edge";
	for my $code (502, 504)
	{
		PostgreSQL::Test::Utils::append_to_file("$dir/html/_edge/$code.html",
			"<html><body><h1>$code edge page of the test nginx</h1></body></html>\n");
	}
	my @names = sort keys %$blocks;
	@{ $srv->{port} }{@names} = free_ports(scalar @names);
	for my $name (@names)
	{
		$servers .= nginx_server($srv->{port}{$name}, $pki,
			"127.0.0.1:$emu_port", $blocks->{$name});
	}
	PostgreSQL::Test::Utils::append_to_file("$dir/nginx.conf", <<"EOC");
${user}worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log info;
events { worker_connections 1024; }
http {
  log_format lsm '\$connection \$connection_requests \$server_protocol \$status \$uri';
  access_log $dir/access.log lsm;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
$servers}
EOC
	$srv->{pid} = spawn("$dir/error.log", $nginx, '-p', $dir, '-c',
		"$dir/nginx.conf", '-e', "$dir/error.log", '-g', 'daemon off;');
	push @servers, $srv;
	wait_listening($srv, $_) for values %{ $srv->{port} };
	note "nginx pid $srv->{pid} in $dir, ports "
	  . join(', ', map { "$_ $srv->{port}{$_}" } sort keys %{ $srv->{port} });
	return $srv;
}

# start_squid: squid on a free port of 127.0.0.1, memory cache only, that
# allows CONNECT to the ports in @$allow (none: it refuses everything);
# with (auth => [user, password]) only to that user, by Basic proxy
# authentication (407 otherwise).  Its access log (native format: the
# user name is the eighth field) is $srv->{access}.
sub start_squid
{
	my ($allow, %opt) = @_;
	my $squid = require_tool('squid', 'squid');
	my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir('squid'));
	my $port = free_port();
	my $srv = { name => 'squid', log => "$dir/cache.log",
		access => "$dir/access.log", port => $port };
	my $user = $< == 0 ? "cache_effective_user proxy\n" : '';
	my $rules = @$allow
	  ? "acl lsm_connect method CONNECT\nacl lsm_ports port @$allow\n"
	  : '';

	if ($opt{auth})
	{
		my ($user, $password) = @{ $opt{auth} };
		my $hash = tool('openssl', 'passwd', '-1', $password);

		PostgreSQL::Test::Utils::append_to_file("$dir/passwd", "$user:$hash");
		$rules .= "auth_param basic program /usr/lib/squid/basic_ncsa_auth $dir/passwd\n"
		  . "auth_param basic children 1 startup=1\n"
		  . "auth_param basic realm lancelsm test\n"
		  . "acl lsm_auth proxy_auth REQUIRED\n";
	}
	$rules .= "http_access allow lsm_connect lsm_ports"
	  . ($opt{auth} ? ' lsm_auth' : '') . "\n" if @$allow;

	PostgreSQL::Test::Utils::append_to_file("$dir/squid.conf", <<"EOC");
${user}http_port 127.0.0.1:$port
pid_filename $dir/squid.pid
access_log stdio:$dir/access.log squid
cache_log $dir/cache.log
cache_store_log none
cache deny all
cache_mem 8 MB
coredump_dir $dir
netdb_filename none
shutdown_lifetime 1 seconds
dns_v4_first on
logfile_rotate 0
$rules
http_access deny all
EOC
	chmod 0777, $dir if $< == 0;
	$srv->{pid} = spawn("$dir/cache.log", $squid, '-N', '-f',
		"$dir/squid.conf");
	push @servers, $srv;
	wait_listening($srv, $port);
	note "squid pid $srv->{pid} in $dir, port $port";
	return $srv;
}

# stop_server: stop a server as LsmTap stops an extra emulator (SIGTERM,
# which its timeout(1) wrapper passes on, then SIGKILL after 5 s), then
# SIGKILL whatever is left of its process group (nginx's worker).
sub stop_server
{
	my ($srv) = @_;
	my $pgid = $srv->{pid};

	return unless $pgid;
	LsmTap::stop_extra_emulator($srv);
	kill('KILL', -$pgid);
}

# log_lines: the lines of a log file (none when it does not exist yet).
sub log_lines
{
	my ($file) = @_;

	return () unless -e $file;
	return split /\n/, PostgreSQL::Test::Utils::slurp_file($file);
}

# log_mark: the number of lines of an access log now.
sub log_mark { return scalar(log_lines($_[0])); }

# log_since: the access log's lines after a mark.  nginx logs a request
# when it ends, after its answer went out: wait (at most 10 s) for the
# $min lines known to come (optional: e.g. the requests that reached the
# upstream), then (at most 2 s) until no new line comes for 200 ms.
sub log_since
{
	my ($file, $mark, $min) = @_;
	my $until = time() + 10;
	my $n = -1;
	my @lines;

	sleep(0.02)
	  while scalar(log_lines($file)) - $mark < ($min // 0) && time() < $until;
	$until = time() + 2;
	while (time() < $until)
	{
		@lines = log_lines($file);
		last if scalar(@lines) == $n;
		$n = scalar(@lines);
		sleep(0.2);
	}
	return @lines[ $mark .. $#lines ];
}

END
{
	local $?;

	if ($$ == $owner)
	{
		stop_server($_) for @servers;
	}
}

1;
