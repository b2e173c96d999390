#!/usr/bin/env bash
# The demo command (README.md): the loop a DBA runs, on a fresh Debian 12
# machine, as root.  It installs what it needs (scripts/deps.sh demo);
# builds lancelsm in a temporary copy of the tree, so that no build output
# is left in the clone, and installs it under that temporary directory,
# not over PostgreSQL's own files (Debian's extension_destdir and
# dynamic_library_path point the cluster at it: scripts/lab.sh, the test
# lab's fixture); starts the emulator with
# two tables under write load, "events" with an LSM write path and
# "analytics$clicks" without one yet; then, in a throwaway cluster with
# shared_preload_libraries = 'lancelsm,pg_cron', runs scripts/demo.sql: a
# server, user mappings for the caller and for the job's role, the write
# spec, two declared tables with thresholds, a due job that pg_cron runs
# every minute (it waits for that run, at most 90 s), and the views and
# history it leaves.  Removes everything it made on exit, its temporary
# directory included; the packages it installed stay.  About two minutes
# (128 s on a loaded 2-core machine with the packages already installed),
# up to one of them waiting for pg_cron's next minute.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
key=lsm-demo-key-51d0
[ "$(id -u)" = 0 ] || { echo "scripts/demo.sh: run as root" >&2; exit 1; }
start=$SECONDS
say() { echo "== [$((SECONDS - start)) s] $*"; }

work=$(mktemp -d /tmp/lancelsm-demo.XXXXXX)
chmod 755 "$work"
. "$here/scripts/lab.sh"
export PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
cleanup() {
	lab_stop "$work" "$PG_CONFIG"
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "What the demo needs (PostgreSQL 15, pg_cron, build tools): installing what is missing, upgrading nothing"
"$here/scripts/deps.sh" demo

say "Building lancelsm in $work/src, installed under $work/dest"
# the tree without build outputs (scripts/source-tar.sh)
lab_build "$work" "$PG_CONFIG"

say "Starting the LanceDB LSM emulator with two tables under write load"
lab_emulator "$work" --api-key "$key" --pass-ms 300 --seal-rows 500 \
	--prefix-max 8 --pool 4 --max-lifetime 900   # ends itself should this script be killed
port=$lab_emulator_port
emu() { curl -sS --max-time 10 -X POST "http://127.0.0.1:$port$1" -d "$2" >/dev/null; }
# "events": 4 buckets with an LSM write path, writers at 400 rows/s
emu /_emulator/tables '{"name": "events", "buckets": 4, "lsm": true,
	"rows_per_second": 400, "primary_key": "id", "indexes": ["vec_idx"]}'
# "analytics$clicks": no LSM write path yet; its writers start once it is on
emu /_emulator/tables '{"name": "analytics$clicks", "buckets": 1, "lsm": false,
	"rows_per_second": 150, "primary_key": "id", "indexes": ["text_idx"]}'

# The cluster, as the postgres user: lancelsm and pg_cron preloaded,
# pg_cron's jobs in background workers (no libpq login), lancelsm found
# under $work/dest (lab_conf).
cp "$here/scripts/demo.sql" "$work/demo.sql"
chown -R postgres: "$work"
say "A throwaway cluster with shared_preload_libraries = 'lancelsm,pg_cron'"
lab_run "$work" "$PG_CONFIG" "shared_preload_libraries = 'lancelsm,pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 32" "cd '$work' && LANCELSM_EMULATOR_PORT=$port LANCELSM_EMULATOR_KEY=$key \
	psql -X -q -v ON_ERROR_STOP=1 -d postgres -f demo.sql"
say "Done; removing the emulator and $work"
