# bench/h2.pl: HTTP/2 against HTTP/1.1 through the nginx TLS edge of
# t/net_tls_edge.pl (t/LsmNet.pm), in one run, each figure a ratio to the
# HTTP/1.1 reference measured beside it.  Run by bench/h2.sh (or as a
# TAP file: it asserts nothing but that the calls succeed, and prints its
# figures with diag).
#
# For each of http_version unset (HTTP/2 by ALPN) and '1.1', in fresh
# sessions: a 50-table lancelsm_checkpoint(server, text[]) (each table one
# L0 generation), a lancelsm_checkpoint_all() over 500 declared tables,
# and 1,000 lancelsm_flush calls in one statement: wall time (median of
# BENCH_REPS, default 3), requests, TCP connections (= TLS handshakes,
# from nginx's access log) and the most requests on one connection.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib "$FindBin::RealBin/../t";
use LsmNet;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $reps = $ENV{BENCH_REPS} || 3;
my $port = start_emulator();
my $pki = make_pki();
my $edge = start_nginx($pki, $port, { h2 => {} });
my $node = setup_node_conf('h2bench', $port);

for my $c ([ 'h2', '' ], [ 'h11', ", http_version '1.1'" ])
{
	$node->safe_psql('postgres', qq{
		CREATE SERVER $c->[0] FOREIGN DATA WRAPPER lancelsm
		  OPTIONS (database 'mydb', ssl_ca_file '$pki/ca.crt',
		           host_override 'https://localhost:$edge->{port}{h2}'$c->[1]);
		CREATE USER MAPPING FOR PUBLIC SERVER $c->[0] OPTIONS (api_key '$API_KEY');
	});
}
my @t50 = map { sprintf('t%02d', $_) } 1 .. 50;
my @t500 = map { sprintf('c%03d', $_) } 1 .. 500;
emu('POST', '/_emulator/tables', { name => $_, buckets => 1 }) for @t50, @t500;
my $array = "ARRAY['" . join("','", @t50) . "']";

# measure: run $sql in a fresh session; (ms, log lines, stdout)
sub measure
{
	my ($sql) = @_;
	my ($s) = open_session($node);
	$s->query_safe("SET statement_timeout = '120s'");
	my $mark = log_mark($edge->{access});
	my ($ms, $out, $err) = timed_query($s, $sql);

	die "$sql: $err" if $err =~ /ERROR/;
	my @log = log_since($edge->{access}, $mark);
	$s->quit;
	return ($ms, \@log, $out);
}

sub median { my @v = sort { $a <=> $b } @_; return $v[ $#v / 2 ]; }

my %cases = (
	'50-table checkpoint' => sub {
		emu('POST', "/_emulator/tables/$_/generations", { count => 1 }) for @t50;
		return "SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint('$_[0]', $array)";
	},
	'checkpoint_all, 500 tables' => sub {
		# the 500 tables declared on this server only
		$node->safe_psql('postgres', qq{
			SELECT count(lancelsm_remove_table(server, table_name)) FROM lancelsm_table;
			SELECT count(lancelsm_add_table('$_[0]', 'c' || lpad(i::text, 3, '0')))
			  FROM generate_series(1, 500) i});
		return "SELECT count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint_all()";
	},
	'1,000 flushes' => sub {
		return "SELECT count(lancelsm_flush('$_[0]', 'events')) FROM generate_series(1, 1000)";
	});
my @lines = sprintf('%-28s %-9s %9s %6s %9s %9s %11s',
	'case', 'version', 'ms (med)', 'ratio', 'requests', 'conns', 'most/conn');
for my $case (sort keys %cases)
{
	my %ms;
	for my $srv ('h11', 'h2')
	{
		my (@ms, $log);
		for (1 .. $reps)
		{
			my ($t, $l, $out) = measure($cases{$case}->($srv));
			push @ms, $t;
			$log = $l;
		}
		$ms{$srv} = median(@ms);
		my (%conn, $most);
		$most = 0;
		for (@$log)
		{
			my ($c, $n) = split;
			$conn{$c} = 1;
			$most = $n if $n > $most;
		}
		push @lines, sprintf('%-28s %-9s %9.0f %6.2f %9d %9d %11d', $case,
			$srv eq 'h2' ? 'HTTP/2' : 'HTTP/1.1', $ms{$srv},
			$ms{$srv} / $ms{h11}, scalar(@$log), scalar(keys %conn), $most);
	}
}
diag("bench/h2.pl, $reps reps, nginx keepalive_requests 1000:\n" . join("\n", @lines));

# CPU per request over HTTPS with HTTP/2, against libcurl alone through the
# same edge: lancelsm_checkpoint_due() over $ntables declared tables with
# no L0 (one get_lsm_stats each, nothing due), the backend's CPU from
# /proc/PID/schedstat; then bench/curl_floor.c (as it is) sending as many
# get_lsm_stats to the same tables through nginx, on 32 transfers at once.
# curl_floor trusts the system's CA bundle only, so it runs in a mount
# namespace of its own (unshare -rm) where the bundle's path shows the
# test CA; nothing outside that namespace changes.
my $ntables = $ENV{BENCH_H2_TABLES} || 5000;
my $floor = PostgreSQL::Test::Utils::tempdir('floor') . '/curl_floor';
system('cc', '-O2', '-o', $floor, "$FindBin::RealBin/curl_floor.c", '-lcurl') == 0
  or die 'cc curl_floor.c failed';
emu('POST', '/_emulator/tables', { name => "k$_", buckets => 1 }) for 1 .. $ntables;
$node->safe_psql('postgres', qq{
	SELECT count(lancelsm_remove_table(server, table_name)) FROM lancelsm_table;
	SELECT count(lancelsm_add_table('h2', 'k' || i)) FROM generate_series(1, $ntables) i});

sub oncpu_ns
{
	my ($pid) = @_;
	my ($ns) = split ' ', PostgreSQL::Test::Utils::slurp_file("/proc/$pid/schedstat");
	return $ns;
}

my @cpu;
for (1 .. $reps)
{
	my ($s) = open_session($node);
	$s->query_safe("SET statement_timeout = '300s'");
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	$pid =~ s/\s+//g;
	my $mark = log_mark($edge->{access});
	my $cpu0 = oncpu_ns($pid);
	my $rows = $s->query_safe('SELECT count(*) FROM lancelsm_checkpoint_due()');
	my $cpu1 = oncpu_ns($pid);
	my $sent = () = log_since($edge->{access}, $mark);
	$s->quit;
	$rows =~ s/\s+//g;
	die "checkpoint_due: $rows rows and $sent requests for $ntables tables"
	  unless $rows == $ntables && $sent == $ntables;
	my $out = `unshare -rm sh -c 'mount --bind "\$1" /etc/ssl/certs/ca-certificates.crt && exec "\$2" "\$3" "\$4" "\$5" "\$6" 32' sh '$pki/ca.crt' '$floor' 'https://localhost:$edge->{port}{h2}' '$API_KEY' $ntables $sent`;
	die "curl_floor failed: $out" unless $out =~ /answered (\d+) cpu_ms (\S+)/;
	my ($answered, $floor_ms) = ($1, $2);
	my $mine_us = ($cpu1 - $cpu0) / 1000 / $sent;
	my $floor_us = $floor_ms * 1000 / $answered;
	push @cpu, [ $mine_us / $floor_us, $mine_us, $floor_us, $sent ];
}
@cpu = sort { $a->[0] <=> $b->[0] } @cpu;
my $m = $cpu[ $#cpu / 2 ];
diag(sprintf("CPU per request, HTTPS + HTTP/2 through nginx, checkpoint_due over %d tables "
	  . "(median of %d): lancelsm %.1f us, libcurl alone %.1f us: %.2f x (each run: %s)",
	$ntables, $reps, $m->[1], $m->[2], $m->[0],
	join(', ', map { sprintf('%.2f x of %d requests', $_->[0], $_->[3]) } @cpu)));
ok(1, 'every call succeeded');
done_testing();
