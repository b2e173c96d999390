#!/usr/bin/env bash
# scripts/with-names.sh ROOT CMD [ARG...]
#	Runs CMD, as root, in a mount namespace of its own where host names
#	resolve through getaddrinfo and a DNS server, as a LanceDB Cloud host
#	does (libcurl resolves localhost and IP literals by itself, so a test
#	that only says 127.0.0.1 never takes that path).  ROOT is "/" on the
#	host, a chroot's directory otherwise: inside the namespace only,
#	ROOT/etc/hosts is a private copy of itself with the test names added,
#	and ROOT/etc/resolv.conf names the DNS server below alone (options
#	timeout:1 attempts:1).  Nothing on disk changes (a cached chroot stays
#	as it was built); the copies are removed when CMD ends.  Exits with
#	CMD's status.
#
#	For CMD's duration (and at most LANCELSM_NAMES_LIFETIME seconds,
#	default 3600), with chroots sharing the host's network:
#	 - Debian's dnsmasq on a free loopback address 127.0.0.N:53 (from
#	   127.0.0.153 up), no upstream (--no-resolv) and no cache, answering
#	   the zones lancelsm.test and api.lancedb.com from a hosts directory
#	   that a test rewrites to move a name (dnsmasq rereads it); any other
#	   name of those zones is NXDOMAIN (--local: never forwarded, and an
#	   AAAA query for an A-only name gets an empty answer, not REFUSED),
#	   every name elsewhere is REFUSED; it keeps up to 4096 queries
#	   forwarded at once (150 by default: t/net_lookup_bound.pl leaves
#	   more than that unanswered at the silent server);
#	 - scripts/with-names-servers.py's faulty DNS servers behind two
#	   subdomains: silent.lancelsm.test (never answered) and
#	   servfail.lancelsm.test (SERVFAIL), and its TCP relay from
#	   127.0.0.N:443 (the port a LanceDB Cloud URL implies, which a test,
#	   unprivileged, cannot listen on) to the 127.0.0.1 port a test writes.
#	CMD's environment (kept through su and chroot) tells the tests, as
#	paths seen from ROOT: LANCELSM_TEST_DNS (dnsmasq's address),
#	LANCELSM_TEST_DNS_HOSTSDIR (the hosts directory, writable by
#	postgres), LANCELSM_TEST_DNS_FAULTS_LOG (one line per query the faulty
#	servers got), LANCELSM_TEST_HTTPS_RELAY (the relay's file, which holds
#	its target port, writable by postgres).
#
#	Each file of the resolver's configuration that is replaced has a
#	function names_FILE, which prints the private version of ROOT/etc/FILE
#	from the path of the original, and is listed in names_files.
set -euo pipefail

# the test names, under .test, the TLD RFC 6761 reserves for testing
# (t/net_by_name.pl reaches the emulator at emulator.lancelsm.test)
names_hosts_entries="127.0.0.1	emulator.lancelsm.test"
names_files="hosts resolv.conf"

# names_hosts ORIGINAL: the hosts file, with the test names
names_hosts() {
	cat "$1"
	printf '%s\n' "# added for lancelsm's tests (scripts/with-names.sh)" \
		"$names_hosts_entries"
}

# names_resolv.conf ORIGINAL: the tests' DNS server alone ($names_dns)
names_resolv.conf() {
	printf 'nameserver %s\noptions timeout:1 attempts:1\n' "$names_dns"
}

if [ "${1:-}" != --in-namespace ]; then
	[ $# -ge 2 ] || { echo "usage: scripts/with-names.sh ROOT CMD [ARG...]" >&2; exit 2; }
	[ "$(id -u)" = 0 ] || { echo "scripts/with-names.sh: run as root" >&2; exit 1; }
	# private propagation: the bind mounts below never reach the host
	exec unshare --mount --propagation private -- \
		bash "${BASH_SOURCE[0]}" --in-namespace "$@"
fi
shift
root=${1%/}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lifetime=${LANCELSM_NAMES_LIFETIME:-3600}
dnsmasq=$(command -v dnsmasq || echo /usr/sbin/dnsmasq)
[ -x "$dnsmasq" ] || { echo "scripts/with-names.sh: dnsmasq is not installed (scripts/deps.sh)" >&2; exit 1; }
# postgres as ROOT knows it (a chroot's uid may differ from the host's)
pg_owner=$(awk -F: '$1 == "postgres" { print $3 ":" $4 }' "$root/etc/passwd")
[ -n "$pg_owner" ] || { echo "scripts/with-names.sh: $root/etc/passwd has no postgres user" >&2; exit 1; }

# under ROOT: the tests, inside it, write the hosts directory
tmp=$(mktemp -d "$root/tmp/lancelsm-names.XXXXXX")
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
chmod 755 "$tmp"
mkdir "$tmp/hostsdir"
touch "$tmp/faults.log" "$tmp/https-target"
chmod 644 "$tmp/faults.log" "$tmp/https-target"
chown "$pg_owner" "$tmp/hostsdir" "$tmp/https-target"

# the faulty servers first: dnsmasq forwards to their ports
timeout -k 5 "$lifetime" python3 "$here/with-names-servers.py" dns-faults \
	--port-file "$tmp/faults.ports" --log "$tmp/faults.log" --lifetime "$lifetime" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/faults.ports" ] && break; sleep 0.1; done
silent=$(awk '$1 == "silent" { print $2 }' "$tmp/faults.ports" 2>/dev/null)
servfail=$(awk '$1 == "servfail" { print $2 }' "$tmp/faults.ports" 2>/dev/null)
[ -n "$silent" ] && [ -n "$servfail" ] ||
	{ echo "scripts/with-names.sh: the faulty DNS servers did not start" >&2; exit 1; }

# start_dnsmasq ADDR: dnsmasq on ADDR:53 once it has its sockets (true),
# or false when it exits first (the address is taken, e.g. by another
# run) or has not started in 10 s
start_dnsmasq() {
	local addr=$1 log=$tmp/dnsmasq-$1.log pid
	timeout -k 5 "$lifetime" "$dnsmasq" --keep-in-foreground -C /dev/null \
		--no-resolv --no-hosts --no-poll --bind-interfaces --dns-forward-max=4096 \
		--listen-address="$addr" --port=53 --cache-size=0 \
		--hostsdir="$tmp/hostsdir" \
		--local=/lancelsm.test/ --local=/api.lancedb.com/ \
		--server=/silent.lancelsm.test/127.0.0.1#"$silent" \
		--server=/servfail.lancelsm.test/127.0.0.1#"$servfail" \
		--log-queries --log-facility="$log" 2>>"$log" &
	pid=$!
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 1
		if grep -q 'started, version' "$log" 2>/dev/null; then
			pids+=("$pid")
			return 0
		fi
		sleep 0.1
	done
	kill "$pid" 2>/dev/null
	return 1
}
names_dns=
for n in $(seq 153 199); do
	if start_dnsmasq "127.0.0.$n"; then
		names_dns=127.0.0.$n
		break
	fi
done
[ -n "$names_dns" ] || { echo "scripts/with-names.sh: dnsmasq could not start on 127.0.0.153-199:53" >&2; exit 1; }

# the relay, on the same address
timeout -k 5 "$lifetime" python3 "$here/with-names-servers.py" relay \
	--listen "$names_dns:443" --target-file "$tmp/https-target" --lifetime "$lifetime" &
pids+=($!)
for _ in $(seq 100); do
	(exec 3<>"/dev/tcp/$names_dns/443") 2>/dev/null && break
	sleep 0.1
done

for file in $names_files; do
	target=$root/etc/$file
	# a symbolic link would be followed to the host's own file
	if [ ! -f "$target" ] || [ -L "$target" ]; then
		echo "scripts/with-names.sh: $target is not a regular file" >&2
		exit 1
	fi
	"names_$file" "$target" >"$tmp/$file"
	chmod 644 "$tmp/$file"
	mount --bind "$tmp/$file" "$target"
done

# a name of the zone resolves in ROOT, through the namespace's files
echo "127.0.0.1 ready.lancelsm.test" >"$tmp/hostsdir/ready"
chmod 644 "$tmp/hostsdir/ready"
for _ in $(seq 100); do
	${root:+chroot "$root"} getent hosts ready.lancelsm.test >/dev/null 2>&1 && break
	sleep 0.1
done
${root:+chroot "$root"} getent hosts ready.lancelsm.test >/dev/null 2>&1 ||
	{ echo "scripts/with-names.sh: ready.lancelsm.test does not resolve through $names_dns" >&2; exit 1; }
rm -f "$tmp/hostsdir/ready"

export LANCELSM_TEST_DNS=$names_dns
export LANCELSM_TEST_DNS_HOSTSDIR=${tmp#"$root"}/hostsdir
export LANCELSM_TEST_DNS_FAULTS_LOG=${tmp#"$root"}/faults.log
export LANCELSM_TEST_HTTPS_RELAY=${tmp#"$root"}/https-target
"$@"
