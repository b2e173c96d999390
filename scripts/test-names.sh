#!/usr/bin/env bash
# test-names.sh ROOT CMD...: run CMD, as root, where host names resolve as
# they do for users: through a DNS server, not only /etc/hosts.  ROOT is the
# directory CMD sees as / ("" for the host, a chroot of scripts/pg-chroot.sh
# otherwise).  For CMD's duration:
#  - Debian's dnsmasq on a free loopback address 127.0.0.N:53 (from
#    127.0.0.153 up), no upstream (--no-resolv), no cache, answering the
#    test zone lancelsm.test and api.lancedb.com from a hosts directory
#    that a test may rewrite (dnsmasq rereads it: a name moves); any other
#    name of those zones is NXDOMAIN (--local: never forwarded, and AAAA
#    queries for an A-only name get an empty answer, not REFUSED); every
#    other name is REFUSED;
#  - scripts/test-names-servers.py's faulty DNS servers behind two
#    subdomains: silent.lancelsm.test (never answered) and
#    servfail.lancelsm.test (SERVFAIL); and its TCP relay from
#    127.0.0.N:443 (the port a LanceDB Cloud URL implies, which a test,
#    unprivileged, cannot listen on) to the 127.0.0.1 port a test writes;
#  - in a private mount namespace (unshare -m), ROOT/etc/resolv.conf
#    (nameserver 127.0.0.N, options timeout:1 attempts:1) and
#    ROOT/etc/hosts (a copy of ROOT's own) are bind-mounted over: nothing
#    is written into ROOT, whose network is the host's.
# CMD's environment (kept through su and chroot) tells the tests, as
# paths seen from ROOT: LANCELSM_TEST_DNS (dnsmasq's address),
# LANCELSM_TEST_DNS_HOSTSDIR (the hosts directory, writable by postgres),
# LANCELSM_TEST_DNS_FAULTS_LOG (one line per query the faulty servers got),
# LANCELSM_TEST_HTTPS_RELAY (the relay's file, which holds its target port).
# Every server stops with CMD, and by itself after LANCELSM_NAMES_LIFETIME
# seconds (default 3600).  Exits with CMD's status.
set -euo pipefail
if [ $# -lt 2 ]; then
	echo "usage: scripts/test-names.sh ROOT CMD..." >&2
	exit 2
fi
if [ -z "${LANCELSM_NAMES_INSIDE:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "scripts/test-names.sh: run as root" >&2; exit 1; }
	exec env LANCELSM_NAMES_INSIDE=1 unshare -m --propagation private -- "$0" "$@"
fi
unset LANCELSM_NAMES_INSIDE
here=$(cd "$(dirname "$0")" && pwd)
root=${1%/}
shift
lifetime=${LANCELSM_NAMES_LIFETIME:-3600}
dnsmasq=$(command -v dnsmasq || echo /usr/sbin/dnsmasq)
[ -x "$dnsmasq" ] || { echo "scripts/test-names.sh: dnsmasq is not installed (scripts/deps.sh)" >&2; exit 1; }

dir=$(mktemp -d "$root/tmp/lancelsm-names.XXXXXX")
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
chmod 755 "$dir"
mkdir "$dir/hostsdir"
# postgres as ROOT knows it (a chroot's uid may differ from the host's)
pg_uid=$(awk -F: '$1 == "postgres" { print $3 ":" $4 }' "$root/etc/passwd")
[ -n "$pg_uid" ] || { echo "scripts/test-names.sh: $root/etc/passwd has no postgres user" >&2; exit 1; }
for f in resolv.conf hosts; do
	# a symbolic link would be followed from the host's /, not ROOT's
	[ -f "$root/etc/$f" ] && [ ! -L "$root/etc/$f" ] ||
		{ echo "scripts/test-names.sh: $root/etc/$f is not a regular file" >&2; exit 1; }
done
chown "$pg_uid" "$dir/hostsdir"
touch "$dir/faults.log" && chmod 644 "$dir/faults.log"

# the faulty servers first: dnsmasq forwards to their ports
timeout -k 5 "$lifetime" python3 "$here/test-names-servers.py" dns-faults --port-file "$dir/faults.ports" \
	--log "$dir/faults.log" --lifetime "$lifetime" &
pids+=($!)
for _ in $(seq 100); do [ -s "$dir/faults.ports" ] && break; sleep 0.1; done
silent=$(awk '$1 == "silent" { print $2 }' "$dir/faults.ports" 2>/dev/null)
servfail=$(awk '$1 == "servfail" { print $2 }' "$dir/faults.ports" 2>/dev/null)
[ -n "$silent" ] && [ -n "$servfail" ] ||
	{ echo "scripts/test-names.sh: the faulty DNS servers did not start" >&2; exit 1; }

# start_dnsmasq ADDR: dnsmasq on ADDR:53 until it answers (true), or false
# when it exits first (the address is taken) or does not answer in 10 s
start_dnsmasq() {
	local addr=$1 pid
	echo "127.0.0.1 ready.lancelsm.test" >"$dir/hostsdir/ready"
	timeout -k 5 "$lifetime" "$dnsmasq" --keep-in-foreground -C /dev/null \
		--no-resolv --no-hosts --no-poll --bind-interfaces \
		--listen-address="$addr" --port=53 --cache-size=0 \
		--hostsdir="$dir/hostsdir" \
		--local=/lancelsm.test/ --local=/api.lancedb.com/ \
		--server=/silent.lancelsm.test/127.0.0.1#"$silent" \
		--server=/servfail.lancelsm.test/127.0.0.1#"$servfail" \
		--log-queries --log-facility="$dir/dnsmasq.log" &
	pid=$!
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 1
		if ${root:+chroot "$root"} getent hosts ready.lancelsm.test >/dev/null 2>&1; then
			pids+=("$pid")
			return 0
		fi
		sleep 0.1
	done
	kill "$pid" 2>/dev/null
	return 1
}

# the namespace's resolv.conf and hosts, over ROOT's
printf 'nameserver %s\noptions timeout:1 attempts:1\n' 127.0.0.153 >"$dir/resolv.conf"
cat "$root/etc/hosts" >"$dir/hosts"
chmod 644 "$dir/resolv.conf" "$dir/hosts"
mount --bind "$dir/resolv.conf" "$root/etc/resolv.conf"
mount --bind "$dir/hosts" "$root/etc/hosts"
addr=
for n in $(seq 153 199); do
	sed -i "s/^nameserver .*/nameserver 127.0.0.$n/" "$dir/resolv.conf"
	if start_dnsmasq "127.0.0.$n"; then
		addr=127.0.0.$n
		break
	fi
done
rm -f "$dir/hostsdir/ready"
[ -n "$addr" ] || { echo "scripts/test-names.sh: dnsmasq could not start on 127.0.0.153-199:53: $(tail -3 "$dir/dnsmasq.log" 2>/dev/null)" >&2; exit 1; }

# the relay on the same address's port 443
touch "$dir/https-target"
chown "$pg_uid" "$dir/https-target"
timeout -k 5 "$lifetime" python3 "$here/test-names-servers.py" relay \
	--listen "$addr:443" --target-file "$dir/https-target" --lifetime "$lifetime" &
pids+=($!)
for _ in $(seq 100); do
	(exec 3<>"/dev/tcp/$addr/443") 2>/dev/null && break
	sleep 0.1
done

export LANCELSM_TEST_DNS=$addr
export LANCELSM_TEST_DNS_HOSTSDIR=${dir#"$root"}/hostsdir
export LANCELSM_TEST_DNS_FAULTS_LOG=${dir#"$root"}/faults.log
export LANCELSM_TEST_HTTPS_RELAY=${dir#"$root"}/https-target
"$@"
