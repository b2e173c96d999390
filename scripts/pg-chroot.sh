#!/usr/bin/env bash
# scripts/pg-chroot.sh N
#	Makes sure a Debian chroot with PostgreSQL N (17, 18 or 19) and
#	everything lancelsm needs to build, test and package is ready, and
#	prints its path.  PostgreSQL 15 has no chroot: it is the host's own.
#
#	The chroot lives at $LANCELSM_CHROOT_CACHE/chroot-N (default
#	/var/cache/lancelsm/chroot-N).  When it is missing it is unpacked from
#	chroot-N.tar.zst beside it, or, when that is missing too, built with
#	mmdebstrap and then packed to chroot-N.tar.zst for the next machine
#	or run.  /proc is mounted inside (pg_ctl needs it).  Idempotent; a lock
#	per version makes a second caller wait for the first instead of
#	building the same chroot twice.  As root.  The packages come from the
#	archive of this machine's apt sources (scripts/debian-archive.sh;
#	LANCELSM_DEBIAN_MIRROR overrides).
#
#	Suites: 17 from trixie, 18 from sid, 19 (a release candidate) from
#	experimental on top of sid.  The archive's sid Release file may be
#	expired, hence Check-Valid-Until "false" for sid.  Inside a chroot
#	that carries two majors /usr/bin/pg_config reports the newest: always
#	build with PG_CONFIG=/usr/lib/postgresql/N/bin/pg_config.
set -euo pipefail

usage() { echo "usage: scripts/pg-chroot.sh {17|18|19}" >&2; exit 2; }
[ $# = 1 ] || usage
v=$1
[ "$(id -u)" = 0 ] || { echo "scripts/pg-chroot.sh: run as root (mmdebstrap, chroot, mount)" >&2; exit 1; }

# the archive of this machine's apt sources (LANCELSM_DEBIAN_MIRROR
# overrides); not part of the recipe: a chroot made from another mirror
# of the same archive is the same chroot
mirror=$("$(dirname "$0")/debian-archive.sh")
# what every chroot carries: the server and its headers, what the tests
# use (TAP's IPC::Run, the emulator's python3, the TLS tests' openssl,
# curl) and what a Debian package build uses
common=postgresql-common,postgresql-server-dev-all,build-essential,debhelper,dpkg-dev,fakeroot,libcurl4-openssl-dev,libjansson-dev,pkg-config,libipc-run-perl,python3,openssl,curl,ca-certificates,make,gcc
experimental=""
case $v in
	17) suite=trixie; packages="$common,postgresql-17,postgresql-server-dev-17,postgresql-17-cron" ;;
	18) suite=sid; packages="$common,postgresql-18,postgresql-server-dev-18,postgresql-18-cron" ;;
	# no postgresql-19-cron exists: the pg_cron test is skipped on 19
	19) suite=sid; packages="$common"; experimental="postgresql-19 postgresql-server-dev-19" ;;
	*) usage ;;
esac

cache=${LANCELSM_CHROOT_CACHE:-/var/cache/lancelsm}
dir=$cache/chroot-$v
tarball=$cache/chroot-$v.tar.zst
mkdir -p "$cache"

exec 9>"$cache/chroot-$v.lock"
flock 9

# build_chroot DEST: a fresh chroot at DEST with mmdebstrap
build_chroot() {
	local dest=$1 sources
	sources=("deb $mirror $suite main")
	local opts=(--variant=apt --include="$packages" --aptopt='Acquire::Retries "3"')
	[ "$suite" = sid ] && opts+=(--aptopt='Acquire::Check-Valid-Until "false"')
	if [ -n "$experimental" ]; then
		sources+=("deb $mirror experimental main")
		opts+=(--customize-hook="DEBIAN_FRONTEND=noninteractive chroot \"\$1\" apt-get install -y -qq --no-install-recommends -t experimental $experimental >/dev/null")
	fi
	# the server packages create a cluster "main" that nothing here uses:
	# drop it, so each test cluster is the only one of its chroot
	opts+=(--customize-hook='chroot "$1" sh -c "pg_lsclusters -h | while read ver name rest; do pg_dropcluster \$ver \$name; done"')
	echo "pg-chroot: building PostgreSQL $v from $suite${experimental:+ + experimental} with mmdebstrap" >&2
	mmdebstrap --quiet "${opts[@]}" "$suite" "$dest" "${sources[@]}" >&2
	chroot "$dest" test -x "/usr/lib/postgresql/$v/bin/pg_config"
}

# what the chroot was made from; a chroot or tarball of another recipe
# (packages added here since) is made again
stamp="PostgreSQL $v: $suite $packages${experimental:+ experimental $experimental}"
recipe_is_current() {
	[ -f "$1/.lancelsm-chroot" ] && [ "$(cat "$1/.lancelsm-chroot")" = "$stamp" ]
}
# discard DIR: a chroot tree, unmounting its /proc first
discard() {
	if mountpoint -q "$1/proc" 2>/dev/null; then umount "$1/proc"; fi
	rm -rf --one-file-system "$1"
}

if ! recipe_is_current "$dir"; then
	# also what an interrupted earlier attempt left
	discard "$dir"
	discard "$dir.new"
	if [ -f "$tarball" ]; then
		echo "pg-chroot: unpacking $tarball" >&2
		mkdir "$dir.new"
		tar --zstd -C "$dir.new" -xpf "$tarball"
		if ! recipe_is_current "$dir.new"; then
			echo "pg-chroot: $tarball has another recipe: building anew" >&2
			discard "$dir.new"
			rm -f "$tarball"
		fi
	fi
	if [ ! -d "$dir.new" ]; then
		build_chroot "$dir.new"
		echo "$stamp" >"$dir.new/.lancelsm-chroot"
		echo "pg-chroot: packing $tarball" >&2
		tar -I "zstd -T0" -C "$dir.new" --one-file-system -cpf "$tarball.new" . &&
			mv "$tarball.new" "$tarball"
	fi
	mv "$dir.new" "$dir"
fi

# what a booted system would provide: /proc (pg_ctl), a /dev/shm every
# user may create POSIX shared memory in, the server's socket directory
mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
chmod 1777 "$dir/dev/shm"
chroot "$dir" install -d -m 2775 -o postgres -g postgres /run/postgresql
echo "$dir"
