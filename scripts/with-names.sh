#!/usr/bin/env bash
# scripts/with-names.sh ROOT CMD [ARG...]
#	Runs CMD, as root, in a mount namespace of its own where the test
#	names below resolve through getaddrinfo, as a LanceDB Cloud host
#	does (libcurl resolves localhost and IP literals by itself, so a test
#	that only says 127.0.0.1 never takes that path).  ROOT is "/" on the
#	host, a chroot's directory otherwise: inside the namespace only,
#	ROOT/etc/hosts is a private copy of itself with the test names added.
#	Nothing on disk changes (a cached chroot stays as it was built); the
#	copies are removed when CMD ends.  Exits with CMD's status.
#
#	Each file of the resolver's configuration that is replaced has a
#	function names_FILE, which prints the private version of ROOT/etc/FILE
#	from the path of the original, and is listed in names_files.  Another
#	file (say a resolv.conf naming a DNS server on 127.0.0.x) is one more
#	function and one more word in that list.
set -euo pipefail

# the test names, under .test, the TLD RFC 6761 reserves for testing
# (t/021_by_name.pl reaches the emulator at emulator.lancelsm.test)
names_hosts_entries="127.0.0.1	emulator.lancelsm.test"
names_files="hosts"

# names_hosts ORIGINAL: the hosts file, with the test names
names_hosts() {
	cat "$1"
	printf '%s\n' "# added for lancelsm's tests (scripts/with-names.sh)" \
		"$names_hosts_entries"
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
tmp=$(mktemp -d /tmp/lancelsm-names.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
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
"$@"
