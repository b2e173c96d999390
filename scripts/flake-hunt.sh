#!/usr/bin/env bash
# scripts/flake-hunt.sh [-n N] VERSION [t/SUBJECT_TOPIC.pl ...]
#	A developer's tool to find flaky TAP tests: builds and installs
#	lancelsm for PostgreSQL VERSION (15 on the host, 16 to 19 in the
#	chroot of scripts/pg-chroot.sh), then runs each TAP file (default:
#	every t/*.pl) N times in a row (default 5) while a busy loop per CPU
#	core keeps every core loaded.  Prints one line per run, then per file
#	the runs and failures, and the logs of the failed runs (kept in the
#	directory it prints).  Exits 1 when a run failed.
#
#	The load: one busy-looping process per core (nproc), started before
#	the first run and stopped when the script ends, each bounded by
#	`timeout` (LANCELSM_FLAKE_LOAD_MAX_S, default 14400 s) should the
#	script itself be killed.  pg_cron's tests run (LANCELSM_REQUIRE_PG_CRON)
#	where pg_cron is installed; the edge and proxy tests
#	(LANCELSM_REQUIRE_NETWORK) on the host.  LANCELSM_PG16_SOURCE and
#	LANCELSM_PG_CRON_SOURCE are passed to scripts/pg-chroot.sh as by
#	scripts/test.sh.
#
#	As root, after scripts/deps.sh.  It installs into the version's
#	PostgreSQL: wrap it in the install lock where others share the
#	machine, e.g.
#	  flock /tmp/lancelsm-install.lock bash scripts/flake-hunt.sh 15
set -uo pipefail
# The whole script is one block, read before it runs: a hunt lasts an
# hour, and bash reads a script as it goes, so an edit of this file (or a
# checkout) during a hunt would otherwise end it with a syntax error.
{
here=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: scripts/flake-hunt.sh [-n N] VERSION [t/FILE.pl ...]" >&2; exit 2; }
runs=5
while getopts n: opt; do
	case $opt in
		n) runs=$OPTARG ;;
		*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
v=$1
shift
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage
[ "$(id -u)" = 0 ] || { echo "scripts/flake-hunt.sh: run as root" >&2; exit 1; }
if [ $# -gt 0 ]; then files=("$@"); else files=($(cd "$here" && ls t/*.pl)); fi

for var in LANCELSM_PG16_SOURCE LANCELSM_PG_CRON_SOURCE; do
	case ${!var:-} in
		"" | /*) ;;
		*) export "$var=$here/${!var}" ;;
	esac
done

# the version's environment: $vroot the chroot ("" on the host), $vtree
# a copy of the tree there, owned by postgres
if [ "$v" = 15 ]; then
	vroot=""
else
	vroot=$("$here/scripts/pg-chroot.sh" "$v") || exit 1
fi
in_version() {
	if [ -z "$vroot" ]; then bash -c "$1"; else chroot "$vroot" bash -c "$1"; fi
}
vtree=$(in_version "mktemp -d /tmp/lancelsm-flakes.XXXXXX") || exit 1
logs=$(mktemp -d /tmp/lancelsm-flake-logs.XXXXXX)
chmod 755 "$vroot$vtree"
"$here/scripts/source-tar.sh" | tar -C "$vroot$vtree" -xf -
pg_config=/usr/lib/postgresql/$v/bin/pg_config
make="make -C '$vtree' -s PG_CONFIG=$pg_config"
in_version "chown -R postgres: '$vtree' && $make clean && $make PG_CFLAGS=-Werror >/dev/null && $make install >/dev/null" || exit 1

env=""
[ -e "$vroot$(in_version "$pg_config --pkglibdir")/pg_cron.so" ] && env="LANCELSM_REQUIRE_PG_CRON=1"
[ -z "$vroot" ] && env="$env LANCELSM_REQUIRE_NETWORK=1"

load=()
cleanup() {
	[ ${#load[@]} = 0 ] || kill "${load[@]}" 2>/dev/null
	wait 2>/dev/null
	# $vtree is mktemp's answer, never empty; $vroot is "" on the host
	rm -rf "$vroot$vtree"
}
trap cleanup EXIT
for _ in $(seq "$(nproc)"); do
	timeout "${LANCELSM_FLAKE_LOAD_MAX_S:-14400}" sh -c 'while :; do :; done' &
	load+=($!)
done
echo "flake-hunt: PostgreSQL $v, ${#files[@]} TAP file(s) x $runs under ${#load[@]} busy loop(s); logs in $logs"

declare -A failures
total_failed=0
start=$SECONDS
for f in "${files[@]}"; do
	failures[$f]=0
	for i in $(seq "$runs"); do
		log="$logs/$(basename "$f" .pl).$i.log"
		t0=$SECONDS
		in_version "su postgres -c $(printf %q "cd '$vtree' && $env make installcheck REGRESS= PROVE_TESTS='$f' PROVE_FLAGS=-v PG_CONFIG=$pg_config")" >"$log" 2>&1
		rc=$?
		if [ $rc = 0 ]; then
			echo "flake-hunt: $f run $i: ok ($((SECONDS - t0)) s)"
			rm -f "$log"
		else
			echo "flake-hunt: $f run $i: FAILED ($((SECONDS - t0)) s): $log"
			grep -E '^(not ok|# +(Failed|got|expected))' "$log" | head -20 | sed 's/^/    /'
			failures[$f]=$((failures[$f] + 1))
			total_failed=$((total_failed + 1))
		fi
	done
done

echo "flake-hunt: PostgreSQL $v, $((SECONDS - start)) s:"
for f in "${files[@]}"; do
	echo "  $f: $runs runs, ${failures[$f]} failed"
done
[ "$total_failed" = 0 ]
exit
}
