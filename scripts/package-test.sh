#!/usr/bin/env bash
# scripts/package-test.sh N [CHROOT_DIR]
#	Builds the Debian package postgresql-N-lancelsm from this tree with
#	dpkg-buildpackage -us -uc, checks it with lintian (no errors allowed),
#	installs it with apt-get install ./...deb, runs the autopkgtests of
#	debian/tests against the installed files (create-extension, then
#	installcheck: pg_regress and TAP through pg_buildext installcheck, the
#	emulator of this tree serving 127.0.0.1), purges it and fails if any
#	file it installed is left behind.  Prints the time of each step.
#
#	PostgreSQL 15 is built and tested on this machine (Debian 12); any
#	other version N in a chroot holding postgresql-N and its server-dev
#	package: CHROOT_DIR, or the one scripts/pg-chroot.sh N prepares.
#	lintian always runs here.  As root; installs what it needs with
#	apt-get.  The long steps are bounded (timeout), and the package is
#	purged however the run ends.  The build and test files live in a
#	temporary directory that is removed at the end; set
#	LANCELSM_KEEP_PACKAGES=DIR to keep the built packages in DIR, and
#	LANCELSM_PACKAGE_TAP="t/a.pl t/b.pl" to run only those TAP files in
#	the installcheck.
set -euo pipefail

usage() { echo "usage: scripts/package-test.sh N [CHROOT_DIR]" >&2; exit 2; }
[ $# = 1 ] || [ $# = 2 ] || usage
v=$1
[[ $v =~ ^[0-9]+$ ]] || usage
root=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "scripts/package-test.sh: run as root (apt-get, chroot)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
pkg=postgresql-$v-lancelsm

# with_apt_lock CMD...: CMD once no other package test on this machine
# runs apt-get or dpkg (waiting at most 20 minutes): the test command runs
# the package tests of several versions side by side, and while
# DPkg::Lock::Timeout makes apt-get wait for dpkg's lock, apt-get update
# fails at once on the lock of the package lists, as dpkg does on its own
with_apt_lock() { (flock -w 1200 8 && "$@") 8>/run/lock/lancelsm-package-apt.lock; }
# apt_get ARGS: apt-get that waits for another apt-get instead of failing
apt_get() { with_apt_lock apt-get -q -o DPkg::Lock::Timeout=600 "$@"; }

# in_root CMD...: CMD on the machine that builds and tests version $v
in_root() {
	if [ -n "$root" ]; then chroot "$root" "$@"; else "$@"; fi
}

# step NAME CMD...: CMD, its time recorded; a failure ends the run (set -e)
times=()
current=
step() {
	local name=$1 start=$SECONDS
	shift
	current=$name
	echo "=== package $v: $name"
	"$@"
	times+=("$name $((SECONDS - start)) s")
}

# host_deps: the packaging tools, and for a host build the server, its
# build dependencies and what the tests use (pg_cron for t/cron_*.pl)
host_deps() {
	local packages=(lintian dpkg-dev python3)
	[ -n "$root" ] || packages+=(postgresql-"$v" postgresql-server-dev-"$v"
		postgresql-server-dev-all postgresql-common debhelper fakeroot
		build-essential libcurl4-openssl-dev libjansson-dev pkg-config make
		curl openssl libipc-run-perl postgresql-"$v"-cron)
	apt_get update -qq &&
		apt_get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
}

if [ -z "$root" ] && [ "$v" != 15 ]; then
	root=$("$here/scripts/pg-chroot.sh" "$v")
fi
step "install build tools" host_deps

deb_version=$(sed -n '1s/^lancelsm (\(.*\)).*/\1/p' "$here/debian/changelog")
upstream=${deb_version#*:}
upstream=${upstream%-*}
arch=$(in_root dpkg --print-architecture)
deb=${pkg}_${deb_version#*:}_$arch.deb

work=$(mktemp -d "$root/tmp/lancelsm-package.XXXXXX")
chmod 755 "$work"
inside=${work#"$root"}		# $work as seen from in_root
src=lancelsm-$upstream

cleanup() {
	if in_root dpkg-query -W -f '${db:Status-Status}' "$pkg" 2>/dev/null | grep -qv '^not-installed$'; then
		echo "=== package $v: purging $pkg left installed by a failed run" >&2
		with_apt_lock in_root dpkg --purge "$pkg" >/dev/null || true
	fi
	rm -rf "$work"
}
trap 'rc=$?; cleanup; [ $rc = 0 ] || echo "=== package $v: $current FAILED" >&2' EXIT

# unpack: the tree as lancelsm-X.Y.Z and the orig tarball beside it
unpack() {
	mkdir "$work/$src"
	"$here/scripts/source-tar.sh" | tar -C "$work/$src" -xf -
	tar -C "$work" --exclude="$src/debian" -czf "$work/lancelsm_$upstream.orig.tar.gz" "$src"
}

# build: debian/control for version $v only, then the source and binary packages
build() {
	in_root env PG_SUPPORTED_VERSIONS="$v" sh -c \
		"cd '$inside/$src' && pg_buildext updatecontrol && timeout 1800 dpkg-buildpackage -us -uc" \
		>"$work/build.log" 2>&1 || { tail -60 "$work/build.log"; return 1; }
	grep -E '^dpkg-deb: building package' "$work/build.log"
	[ -f "$work/$deb" ] || { echo "$deb was not built" >&2; return 1; }
}

install_package() {
	(cd "$work" && with_apt_lock in_root sh -c "cd '$inside' && apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0 ./$deb") >/dev/null
	in_root dpkg -L "$pkg" >"$work/files"
	echo "$pkg $(in_root dpkg-query -W -f '${Version}' "$pkg") installed: $(grep -c . "$work/files") paths"
}

# autopkgtest: debian/tests in the built source tree, as autopkgtest runs
# them.  pg_virtualenv's clusters get a port the kernel just handed out as
# free (PGPORT): its own choice, 5432 and up, races with every other
# throwaway cluster on this machine, and a chroot cannot see those.
# LANCELSM_PACKAGE_TAP (default: all) names the TAP files the installcheck
# runs: the test command passes a few, because it has just run every TAP
# file against the same build of the same version; pg_regress always runs
# whole, and proves the packaged files.
autopkgtest() {
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	in_root env PGPORT="$port" ${LANCELSM_PACKAGE_TAP:+PROVE_TESTS="$LANCELSM_PACKAGE_TAP"} sh -c "cd '$inside/$src' &&
		timeout 300 debian/tests/create-extension && timeout 2400 debian/tests/installcheck"
}

# purge: remove the package, then every path it listed must be gone,
# except directories that other packages own too
purge() {
	with_apt_lock in_root dpkg --purge "$pkg" >/dev/null
	local path left=0
	while IFS= read -r path; do
		[ "$path" = /. ] && continue
		[ -e "$root$path" ] || [ -L "$root$path" ] || continue
		if [ -d "$root$path" ] && [ ! -L "$root$path" ] &&
			in_root dpkg-query -S "$path" >/dev/null 2>&1; then
			continue
		fi
		echo "left behind after purge: $path" >&2
		left=$((left + 1))
	done <"$work/files"
	[ $left = 0 ] || return 1
	echo "purged: none of the $(grep -c . "$work/files") paths is left behind"
}

step "unpack source" unpack
step dpkg-buildpackage build
step lintian timeout 600 lintian --fail-on error "$work/lancelsm_${deb_version#*:}_$arch.changes"
step "apt-get install" install_package
step autopkgtest autopkgtest
step purge purge
if [ -n "${LANCELSM_KEEP_PACKAGES:-}" ]; then
	mkdir -p "$LANCELSM_KEEP_PACKAGES"
	cp "$work"/*.deb "$work"/*.dsc "$work"/*.changes "$work"/*.tar.* "$LANCELSM_KEEP_PACKAGES"/
fi
echo "=== package $v: ok (${root:-host}): $(IFS=,; echo "${times[*]}" | sed 's/,/, /g'); total $SECONDS s"
