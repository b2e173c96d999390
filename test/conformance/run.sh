#!/usr/bin/env bash
# SDK conformance: install the pinned official Node SDK into an ignored
# folder, start the emulator, and run against it
#   1. conformance.js: the emulator itself checked against the SDK;
#   2. differential.js: lancelsm checked against the SDK, on the same
#      answers: the stats decoder (stats_bodies.js) and the checkpoint
#      loop (one table per side and variant);
#   3. live-smoke.sh end to end, fingerprint included (live_smoke_check.sh).
# Steps 2 and 3 need a PostgreSQL with lancelsm: a copy of this tree is
# built and installed into a scratch DESTDIR that a throwaway cluster
# (scripts/lab.sh: Unix socket only) reads through Debian's
# extension_destdir, so the
# system's lancelsm is never touched; PG_CONFIG picks the PostgreSQL
# (default: the host's 15).  About two minutes in all.
# Runs as root (cluster commands as postgres) or as postgres.  Exits
# non-zero on any failure or any disagreement not listed as an exception.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
bindir=$("$pg_config" --bindir)
cd "$here"
. "$root/scripts/lab.sh"

if [ ! -d node_modules/@lancedb/lancedb ]; then
    npm i --prefix "$here" -E --no-save --no-audit --no-fund @lancedb/lancedb@0.39.0
fi

tmp=$(mktemp -d /tmp/lancelsm-conformance.XXXXXX)
chmod 755 "$tmp"
[ "$(id -u)" = 0 ] && chown postgres: "$tmp"

cleanup() {
    lab_stop "$tmp" "$pg_config"
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

lab_emulator "$tmp" --api-key k --pass-ms 300 --pool 4 --seal-rows 200 \
    --replay-ms 200 --max-lifetime 600
export EMU_PORT=$lab_emulator_port EMU_KEY=k

status=0
timeout 120 node conformance.js || status=$?

# lancelsm in a scratch DESTDIR, a cluster reading it
lab_build "$tmp" "$pg_config"
lab_cluster "$tmp" "$pg_config"
lab_env "$tmp"
export PSQL="$bindir/psql"
"$PSQL" -X -q -v ON_ERROR_STOP=1 -f "$here/differential.sql" \
    -v emu_url="http://127.0.0.1:$EMU_PORT" -v emu_key="$EMU_KEY" >/dev/null || exit 1

timeout 150 node differential.js || status=$?
timeout 120 sh "$here/live_smoke_check.sh" || status=$?

if [ "$status" -ne 0 ] && [ -n "${CONFORMANCE_VERBOSE:-}" ]; then
    cat "$tmp/emulator.log" "$tmp/server.log" >&2
fi
exit "$status"
