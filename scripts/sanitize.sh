#!/usr/bin/env bash
# The sanitizer run: builds lancelsm with
# AddressSanitizer + UndefinedBehaviorSanitizer and runs the whole
# pg_regress + TAP suite against that build; fails if a sanitizer reports
# anything.  As root on Debian 12, after scripts/deps.sh.

#
# The sanitized build is installed with DESTDIR into a scratch directory,
# never over the system's lancelsm.so, and the servers find it through
# Debian's extension_destdir setting: the throwaway cluster of
# scripts/lab.sh and TAP's PostgreSQL::Test::Cluster nodes alike, through
# TEMP_CONFIG.  So the normal build stays installed for every other suite
# and for anyone else using this machine's PostgreSQL at the same time.
#
# The server binaries are not instrumented, so the ASan and UBSan runtimes
# are preloaded into the postgres processes: through the environment pg_ctl
# passes on (lab_server_env for the throwaway cluster, prove's for TAP).
# If a server started without them, loading the sanitized library would
# abort ("ASan runtime does not come first"), so the suite cannot pass
# silently without the sanitizers; the run also checks /proc/<backend>/maps.  Leak detection is off: postgres intentionally
# leaks at exit (test/unit/Makefile's `make valgrind` checks the decoder for
# leaks instead).  Any asan.* / ubsan.* report file fails the run.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
key=lsm-test-key-2f9c41
[ "$(id -u)" = 0 ] || { echo "scripts/sanitize.sh: run as root" >&2; exit 1; }
command -v pg_config >/dev/null || { echo "scripts/sanitize.sh: run scripts/deps.sh first" >&2; exit 1; }
. "$here/scripts/lab.sh"

asan_so=$(gcc -print-file-name=libasan.so)
ubsan_so=$(gcc -print-file-name=libubsan.so)
for so in "$asan_so" "$ubsan_so"; do
	[ -e "$so" ] || { echo "scripts/sanitize.sh: $so not found (gcc's sanitizer runtimes)" >&2; exit 1; }
done
asan_so=$(readlink -f "$asan_so")
ubsan_so=$(readlink -f "$ubsan_so")

work=$(mktemp -d /tmp/lancelsm-sanitize.XXXXXX)
chmod 755 "$work"

# The early-init shim.  On Debian 12 (glibc 2.36; gcc 12's and clang 14's
# runtimes alike) uninstrumented postgres and psql with libasan preloaded
# hang, even `postgres -V` and so pg_ctl start: a library constructor that
# runs before libasan's (libgpg-error's for postgres, libp11-kit's for
# psql) calls bindtextdomain() or newlocale(); their malloc() initializes
# ASan lazily while glibc's _nl_state_lock / __libc_setlocale_lock is
# write-held, ASan's init calls dlsym() -> dlerror() -> dcgettext(), which
# takes that lock again, and the lock is left corrupted: the next user
# waits forever.  The shim, preloaded after the runtimes, wraps
# bindtextdomain, textdomain, setlocale and newlocale: the first of them
# to run allocates before calling glibc, so ASan initializes outside the
# lock.  It is not instrumented and changes nothing else.
cat >"$work/asan_early_init.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <locale.h>
#include <stdlib.h>

char	   *bindtextdomain(const char *domainname, const char *dirname);
char	   *textdomain(const char *domainname);

/* asan_early_init: allocate once, so that ASan initializes here, outside
 * any glibc lock */
static void
asan_early_init(void)
{
	static int	done;
	void	   *volatile p;

	if (done)
		return;
	done = 1;
	p = malloc(1);
	free(p);
}

/* FORWARD: a wrapper that initializes ASan, then calls glibc's function */
#define FORWARD(ret, name, params, args) \
ret name params \
{ \
	static ret (*real) params; \
	asan_early_init(); \
	if (real == NULL) \
		real = (ret (*) params) dlsym(RTLD_NEXT, #name); \
	return real args; \
}

FORWARD(char *, bindtextdomain, (const char *d, const char *dir), (d, dir))
FORWARD(char *, textdomain, (const char *d), (d))
FORWARD(char *, setlocale, (int c, const char *l), (c, l))
FORWARD(locale_t, newlocale, (int m, const char *l, locale_t b), (m, l, b))
EOF
gcc -O0 -shared -fPIC -o "$work/asan_early_init.so" "$work/asan_early_init.c" -ldl || exit 1
preload="$asan_so:$ubsan_so:$work/asan_early_init.so"
# TAP runs psql under prove's environment: postgres and psql must both
# start (and exit) with the preload.
for prog in postgres psql; do
	if ! timeout -s KILL 10 env LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 \
		"$(pg_config --bindir)/$prog" -V >/dev/null 2>&1; then
		echo "scripts/sanitize.sh: $prog does not start with the sanitizer runtimes preloaded" >&2
		echo "  (LD_PRELOAD=$preload); no sanitizer run possible, see the comment above" >&2
		exit 2
	fi
done

cleanup() {
	lab_stop "$work" pg_config
	wait 2>/dev/null
}
trap cleanup EXIT

tar -C "$here" --exclude=node_modules --exclude=.git --exclude='fuzz/corpus-run' -cf - . |
	(mkdir "$work/tree" && tar -C "$work/tree" -xf -)
mkdir "$work/logs" "$work/dest"

san_cflags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
echo "sanitize: building with $san_cflags"
make -C "$work/tree" -s clean >/dev/null &&
	make -C "$work/tree" -s PG_CFLAGS="$san_cflags" PG_LDFLAGS="-fsanitize=address,undefined" &&
	make -C "$work/tree" -s install DESTDIR="$work/dest" >/dev/null ||
	{ echo "sanitize: build failed" >&2; exit 1; }
libdir=$(pg_config --pkglibdir)
so="$work/dest$libdir/lancelsm.so"
needed=$(ldd "$so")
if ! grep -q libasan <<<"$needed" || ! grep -q libubsan <<<"$needed"; then
	echo "sanitize: $so is not linked with the sanitizer runtimes" >&2
	exit 1
fi
chown -R postgres: "$work"

"$here/scripts/regress-emulator.sh" "$work" "$key" || exit 1
port=$(cat "$work/emulator.port")

# quarantine_size_mb=16: freed chunks larger than the quarantine go back
# to the system at once.  With ASan's default (256 MB) a freed 64 MB
# response buffer stays resident, and the TAP tests that assert memory
# returns to its level after a capped 64 MB body (t/call_hostile_answers.pl) would
# measure ASan, not lancelsm; small chunks are still quarantined
asan_opts="detect_leaks=0:abort_on_error=1:quarantine_size_mb=16:log_path=$work/logs/asan"
ubsan_opts="print_stacktrace=1:halt_on_error=1:log_path=$work/logs/ubsan"

# the throwaway cluster's postmaster gets the sanitizers' variables
lab_server_env="LD_PRELOAD='$preload' ASAN_OPTIONS='$asan_opts' UBSAN_OPTIONS='$ubsan_opts'"
# TAP nodes (PostgreSQL::Test::Cluster appends TEMP_CONFIG to
# postgresql.conf) and the throwaway cluster load the library from here
# (dynamic_library_path too, so that a bare LOAD 'lancelsm' finds the same
# file that CREATE EXTENSION's $libdir/lancelsm found: two copies of the
# library in one backend would redefine its settings)
printf "extension_destdir = '%s'\ndynamic_library_path = '%s:\$libdir'\n" \
	"$work/dest" "$work/dest$libdir" >"$work/temp.conf"
chown postgres: "$work/temp.conf"
lab_conf=$(cat "$work/temp.conf")

# in the throwaway cluster, as postgres: first check that a backend really
# loads the sanitized library with both runtimes, then pg_regress (in
# that cluster) and TAP (its own nodes; the runtimes reach
# them through prove's environment)
cat >"$work/inner.sh" <<EOF
set -e
maps=\$(psql -X -q -v ON_ERROR_STOP=1 -At <<'SQL'
CREATE EXTENSION lancelsm;
SELECT string_agg(DISTINCT regexp_replace(l, '^.* ', ''), ' ')
  FROM regexp_split_to_table(pg_read_file('/proc/self/maps'), E'\\\\n') AS l
 WHERE l ~ '(lancelsm|libasan|libubsan)';
DROP EXTENSION lancelsm;
SQL
)
echo "sanitize: a backend has loaded: \$maps"
for want in '$work/dest$libdir/lancelsm.so' libasan libubsan; do
	case "\$maps" in
	*"\$want"*) ;;
	*) echo "sanitize: \$want is not loaded in the backend" >&2; exit 1;;
	esac
done
make installcheck PROVE="env LANCELSM_UNDER_ASAN=1 LD_PRELOAD=$preload ASAN_OPTIONS=$asan_opts UBSAN_OPTIONS=$ubsan_opts prove"
EOF
chown postgres: "$work/inner.sh"

installcheck() {
	lab_run "$work" pg_config "" "cd '$work/tree' && LANCELSM_EMULATOR_PORT=$port \
		LANCELSM_EMULATOR_KEY=$key TEMP_CONFIG='$work/temp.conf' bash '$work/inner.sh'"
	local rc=$?
	[ $rc = 0 ] || cat "$work/tree/regression.diffs" 2>/dev/null | head -300
	return $rc
}

rc=0
installcheck || rc=1
reports=$(find "$work/logs" -type f \( -name 'asan.*' -o -name 'ubsan.*' \) | sort)
if [ -n "$reports" ]; then
	rc=1
	for f in $reports; do
		echo "=== sanitizer report $f"
		head -80 "$f"
	done
fi
if [ $rc = 0 ]; then
	echo "sanitize: pg_regress and TAP passed under ASan + UBSan, no sanitizer report"
else
	echo "sanitize: FAILED (sanitizer reports: $(echo "$reports" | grep -c . || true); logs in $work/logs)"
fi
exit $rc
