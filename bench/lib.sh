# bench/lib.sh: shared by the bench/*.sh scripts (sourced, not run).
#
# Each script runs in two stages.  Outer (root): install the pinned SDK into
# bench/node_modules, start the emulator, then re-run itself as postgres
# inside a throwaway cluster (scripts/lab.sh) with BENCH_INNER=1.  Inner:
# create the extension and the server, run the measurements.  bench/run.sh
# does the outer stage once and runs every script's inner stage in it, so all
# figures come from one emulator and one cluster.
set -euo pipefail
bench=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$bench/.." && pwd)
. "$root/scripts/lab.sh"
export BENCH_KEY=${BENCH_KEY:-lsm-bench-key-7c1e}
SDK_VERSION=0.39.0

# emulator tables that must survive /_emulator/reset (command-line tables)
EMULATOR_FLAGS=(--api-key "$BENCH_KEY" --pass-ms 300 --pool 2 --quiet
	--table conv:1 --table reuse:1 --table stall:1 --table conc:4:400)
# BENCH_RTT_MS: the round trip the emulator adds to every route request
# (--rtt-ms, kept across /_emulator/reset), so that every bench measures
# at a cloud's distance; 0 (default): loopback's
EMULATOR_FLAGS+=(--rtt-ms "${BENCH_RTT_MS:-0}")

sdk_install() {
	if [ ! -d "$bench/node_modules/@lancedb/lancedb" ]; then
		echo "bench: installing @lancedb/lancedb@$SDK_VERSION into bench/node_modules" >&2
		(cd "$bench" && timeout 600 npm i --prefix "$bench" -E --no-save --no-audit --no-fund \
			"@lancedb/lancedb@$SDK_VERSION" >/dev/null)
	fi
}

# outer_run SCRIPT: as root, start the emulator and a throwaway cluster and
# run SCRIPT inside it as postgres with BENCH_INNER=1.
outer_run() {
	local script=$1
	[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
	[ -f "$(pg_config --pkglibdir)/lancelsm.so" ] || [ -n "${BENCH_SO:-}" ] ||
		{ echo "bench: lancelsm is not installed; run scripts/demo.sh first" >&2; exit 1; }
	# BENCH_NO_SDK=1: the script compares nothing with the SDK
	[ "${BENCH_NO_SDK:-0}" = 1 ] || sdk_install
	work=$(mktemp -d /tmp/lancelsm-bench.XXXXXX)
	chmod 755 "$work"
	# BENCH_KEEP=1 keeps $work (per-run counts, logs, SQL) for a look later
	trap 'lab_stop "$work" pg_config; wait 2>/dev/null || true
		if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench: kept $work" >&2; else rm -rf "$work"; fi' EXIT
	lab_emulator "$work" "${EMULATOR_FLAGS[@]}"
	chown -R postgres: "$work"
	local rc=0 settings="max_connections = 100"
	# BENCH_PRELOAD=1 (default) loads the library at server start, so a
	# build that defines PGC_POSTMASTER settings (shared memory) also works
	[ "${BENCH_PRELOAD:-1}" = 1 ] && settings+=$'\n'"shared_preload_libraries = '${BENCH_SO:-lancelsm}'"
	# a BENCH_SO build is found by name too: its background workers name
	# their library "lancelsm", as an installed one's do
	[ -z "${BENCH_SO:-}" ] || settings+=$'\n'"dynamic_library_path = '$(dirname "$BENCH_SO"):\$libdir'"
	# BENCH_PG_OPTS="name=value ...": more server settings (server start
	# ones included, e.g. lancelsm.max_history_entries=10000)
	for o in ${BENCH_PG_OPTS:-}; do settings+=$'\n'"${o%%=*} = '${o#*=}'"; done
	# su without --login keeps the environment: every exported BENCH_*
	# knob reaches the inner stage as it is
	lab_run "$work" pg_config "$settings" "cd '$work' && BENCH_INNER=1 BENCH_WORK='$work' \
		BENCH_PORT=$lab_emulator_port timeout ${BENCH_TIMEOUT:-1200} bash '$script'" || rc=$?
	mkdir -p "$bench/results"
	[ -f "$work/results.txt" ] && cp "$work/results.txt" "$bench/results/latest-$(basename "$script" .sh).txt"
	# bench/due.sh's scenario "plan": its per-table figures
	[ -f "$work/plan_tables.txt" ] && cp "$work/plan_tables.txt" "$bench/results/latest-due-plan-tables.txt"
	return $rc
}

# --- inner-stage helpers (as postgres, in the throwaway cluster) ---
EMU="http://127.0.0.1:${BENCH_PORT:-0}"
ctl() { # ctl METHOD PATH [JSON]
	curl -sS --max-time 60 -X "$1" "$EMU/_emulator/$2" ${3:+-H 'content-type: application/json' -d "$3"}
}
# drained: wait (at most 10 min) until no compaction pass runs or waits
drained() {
	for _ in $(seq 6000); do
		[ "$(ctl GET pool | python3 -c 'import json, sys; p = json.load(sys.stdin); print(p["in_use"] + p["waiting"])')" = 0 ] && return
		sleep 0.1
	done
}
psqlq() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
pyutil() { python3 "$bench/util.py" "$@"; }

# BENCH_SO=/path/to/lancelsm.so (readable by postgres) benches that build
# instead of the installed one: its tree's sql/lancelsm--1.0.sql and the
# update scripts after it are run with MODULE_PATHNAME replaced (and
# pg_extension_config_dump left out), no CREATE EXTENSION (nothing is
# installed).
setup_server() {
	if [ -n "${BENCH_SO:-}" ]; then
		if ! psqlq -Atc "SELECT 1 FROM pg_foreign_data_wrapper WHERE fdwname = 'lancelsm'" | grep -q 1; then
			local sqldir v
			sqldir="$(dirname "$BENCH_SO")/sql"
			{
				cat "$sqldir/lancelsm--1.0.sql"
				for v in $(ls "$sqldir" | sed -n 's/^lancelsm--\([0-9.]*\)--[0-9.]*\.sql$/\1/p' | sort -V); do
					cat "$sqldir"/lancelsm--"$v"--*.sql
				done
			} | sed -e '/^\\echo/d' -e '/pg_extension_config_dump/d' -e "s|MODULE_PATHNAME|$BENCH_SO|g" \
				-e 's|@extschema@|public|g' | psqlq
		fi
	else
		psqlq -c "CREATE EXTENSION IF NOT EXISTS lancelsm"
	fi
	psqlq <<SQL
DROP SERVER IF EXISTS lance CASCADE;
CREATE SERVER lance FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$BENCH_PORT');
CREATE USER MAPPING FOR CURRENT_USER SERVER lance OPTIONS (api_key '$BENCH_KEY');
SQL
}

# report LINE...: print and keep in $BENCH_WORK/results.txt
report() { printf '%s\n' "$@" | tee -a "$BENCH_WORK/results.txt"; }
