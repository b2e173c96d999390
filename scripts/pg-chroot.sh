#!/usr/bin/env bash
# scripts/pg-chroot.sh N
#	Makes sure a Debian chroot with PostgreSQL N (16, 17, 18 or 19) and
#	everything lancelsm needs to build, test and package is ready, and
#	prints its path.  PostgreSQL 15 has no chroot: it is the host's own.
#
#	The chroot lives at $LANCELSM_CHROOT_CACHE/chroot-N (default
#	/var/cache/lancelsm/chroot-N).  When it is missing it is unpacked from
#	chroot-N.tar.zst beside it, or, when that is missing too, built with
#	mmdebstrap and then packed to chroot-N.tar.zst for the next machine
#	or run.  /proc is mounted inside (pg_ctl needs it; the caller unmounts
#	it when done, as scripts/test.sh does at exit).  Idempotent; a lock
#	per version makes a second caller wait for the first instead of
#	building the same chroot twice.  As root.  The packages come from the
#	archive of this machine's apt sources (scripts/debian-archive.sh;
#	LANCELSM_DEBIAN_MIRROR overrides).
#
#	Suites: 16 on bookworm, compiled from the source tarball named by
#	LANCELSM_PG16_SOURCE (no Debian suite carries 16); 17 from trixie, 18
#	from sid, 19 (a release candidate) from experimental on top of sid,
#	with 18 beside it for the pg_upgrade test.  The archive's sid Release
#	file may be expired, hence Check-Valid-Until "false" for sid.  Inside
#	a chroot that carries two majors /usr/bin/pg_config reports the
#	newest: always build with PG_CONFIG=/usr/lib/postgresql/N/bin/pg_config.
#
#	16 is laid out as Debian lays out its packages (binaries and libraries
#	under /usr/lib/postgresql/16, data under /usr/share/postgresql/16), so
#	that postgresql-common's pg_virtualenv -v 16 and pg_upgradecluster
#	work unchanged; it is built --without-icu --enable-tap-tests, and the
#	recipe records the tarball's sha256: another source is another chroot.
#
#	pg_cron: where Debian has no package for N (16 and 19), pg_cron is
#	built inside the chroot from the tarball named by
#	LANCELSM_PG_CRON_SOURCE, with N's PGXS, after the chroot is ready (not
#	part of the cached tarball: a new pg_cron source rebuilds pg_cron
#	alone, in seconds).  Without the variable pg_cron is left out there.
#	Relative tarball paths are taken from the repository's top directory.
set -euo pipefail

usage() { echo "usage: scripts/pg-chroot.sh {16|17|18|19}" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# = 1 ] || usage
v=$1
[ "$(id -u)" = 0 ] || { echo "scripts/pg-chroot.sh: run as root (mmdebstrap, chroot, mount)" >&2; exit 1; }

# the archive of this machine's apt sources (LANCELSM_DEBIAN_MIRROR
# overrides); not part of the recipe: a chroot made from another mirror
# of the same archive is the same chroot
mirror=$("$here/scripts/debian-archive.sh")
# what every chroot carries: the server and its headers, what the tests
# use (TAP's IPC::Run, the emulator's python3, the TLS tests' openssl,
# curl) and what a Debian package build uses
common=postgresql-common,postgresql-server-dev-all,build-essential,debhelper,dpkg-dev,fakeroot,libcurl4-openssl-dev,libjansson-dev,pkg-config,libipc-run-perl,python3,openssl,curl,ca-certificates,make,gcc
# what PostgreSQL 16's build needs beside them: its toolchain of
# bookworm, the parser generators a tarball without generated files
# needs, and the libraries of the configure line below
pg16_build=bison,flex,libreadline-dev,zlib1g-dev,libssl-dev,libxml2-dev,perl,xz-utils
pg16_configure="--prefix=/usr/lib/postgresql/16 --datadir=/usr/share/postgresql/16 --without-icu --enable-tap-tests --with-openssl"
# abspath PATH: PATH, taken from the repository's top when relative
abspath() { case $1 in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; }
experimental="" source16="" source16_sha=""
case $v in
	16)
		suite=bookworm
		packages="$common,$pg16_build"
		[ -n "${LANCELSM_PG16_SOURCE:-}" ] || {
			echo "scripts/pg-chroot.sh: PostgreSQL 16 is built from source: set LANCELSM_PG16_SOURCE to its tarball" >&2
			exit 1
		}
		source16=$(abspath "$LANCELSM_PG16_SOURCE")
		[ -f "$source16" ] || { echo "scripts/pg-chroot.sh: $source16: no such file" >&2; exit 1; }
		source16_sha=$(sha256sum "$source16" | cut -d' ' -f1)
		;;
	17) suite=trixie; packages="$common,postgresql-17,postgresql-server-dev-17,postgresql-17-cron" ;;
	18) suite=sid; packages="$common,postgresql-18,postgresql-server-dev-18,postgresql-18-cron" ;;
	# no postgresql-19-cron exists: pg_cron is built from its source;
	# 18 beside 19 for the pg_upgrade test (test/pg_upgrade/run.sh)
	19) suite=sid; packages="$common,postgresql-18,postgresql-server-dev-18"; experimental="postgresql-19 postgresql-server-dev-19" ;;
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
	[ -z "$source16" ] || build_pg16 "$dest"
	chroot "$dest" test -x "/usr/lib/postgresql/$v/bin/pg_config"
}

# build_pg16 DEST: PostgreSQL 16 compiled from $source16 and installed in
# the chroot at DEST (its build tree removed afterwards)
build_pg16() {
	local dest=$1 jobs
	jobs=$(nproc)
	echo "pg-chroot: compiling PostgreSQL 16 from $source16 (sha256 $source16_sha)" >&2
	rm -rf "$dest/tmp/pg16"
	mkdir "$dest/tmp/pg16"
	tar -C "$dest/tmp/pg16" --strip-components=1 -xf "$source16"
	chroot "$dest" sh -c "cd /tmp/pg16 && ./configure --quiet $pg16_configure >/dev/null &&
		make -s -j$jobs >/dev/null && make -s install >/dev/null" >&2
	rm -rf "$dest/tmp/pg16"
}

# pg_cron_layer DIR: pg_cron built from LANCELSM_PG_CRON_SOURCE and
# installed in the chroot at DIR, for the majors Debian has no pg_cron
# package of; again only when the source changed (its sha256 is kept
# beside the installed library)
pg_cron_layer() {
	local dir=$1 src sha marker
	case $v in 16 | 19) ;; *) return 0 ;; esac
	[ -n "${LANCELSM_PG_CRON_SOURCE:-}" ] || return 0
	src=$(abspath "$LANCELSM_PG_CRON_SOURCE")
	[ -f "$src" ] || { echo "scripts/pg-chroot.sh: $src: no such file" >&2; return 1; }
	sha=$(sha256sum "$src" | cut -d' ' -f1)
	marker=$dir/usr/lib/postgresql/$v/lib/.lancelsm-pg-cron
	[ -f "$marker" ] && [ "$(cat "$marker")" = "$sha" ] && return 0
	echo "pg-chroot: building pg_cron for PostgreSQL $v from $src" >&2
	rm -rf "$dir/tmp/pg_cron"
	mkdir "$dir/tmp/pg_cron"
	tar -C "$dir/tmp/pg_cron" --strip-components=1 -xf "$src"
	chroot "$dir" sh -c "cd /tmp/pg_cron && make -s PG_CONFIG=/usr/lib/postgresql/$v/bin/pg_config >/dev/null &&
		make -s install PG_CONFIG=/usr/lib/postgresql/$v/bin/pg_config >/dev/null" >&2
	rm -rf "$dir/tmp/pg_cron"
	echo "$sha" >"$marker"
}

# what the chroot was made from; a chroot or tarball of another recipe
# (packages added here since) is made again
stamp="PostgreSQL $v: $suite $packages${experimental:+ experimental $experimental}${source16:+ source $source16_sha configure $pg16_configure}"
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
pg_cron_layer "$dir"
mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
chmod 1777 "$dir/dev/shm"
chroot "$dir" install -d -m 2775 -o postgres -g postgres /run/postgresql
echo "$dir"
