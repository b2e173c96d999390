#!/bin/sh
# SDK conformance: install the pinned official Node SDK into an ignored
# folder, start the emulator, and run against it
#   1. conformance.js: the emulator itself checked against the SDK;
#   2. differential.js: lancelsm checked against the SDK, on the same
#      answers: the stats decoder (stats_bodies.js) and the checkpoint
#      loop (one table per side and variant);
#   3. live-smoke.sh end to end, fingerprint included (live_smoke_check.sh).
# Steps 2 and 3 need a PostgreSQL with lancelsm: a copy of this tree is
# built and installed into a scratch DESTDIR that a throwaway cluster
# (Unix socket only) reads through Debian's extension_destdir, so the
# system's lancelsm is never touched; PG_CONFIG picks the PostgreSQL
# (default: the host's 15).  About two minutes in all.
# Runs as root (cluster commands as postgres) or as postgres.  Exits
# non-zero on any failure or any disagreement not listed as an exception.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
bindir=$("$pg_config" --bindir)
pgport=54331
cd "$here"

if [ ! -d node_modules/@lancedb/lancedb ]; then
    npm i --prefix "$here" -E --no-save --no-audit --no-fund @lancedb/lancedb@0.39.0
fi

tmp=$(mktemp -d /tmp/lancelsm-conformance.XXXXXX)
chmod 755 "$tmp"
[ "$(id -u)" = 0 ] && chown postgres: "$tmp"

# as_postgres CMD: a shell command as the postgres user
as_postgres() {
    if [ "$(id -u)" = 0 ]; then su postgres -c "$1"; else sh -c "$1"; fi
}

emu=
cleanup() {
    as_postgres "'$bindir/pg_ctl' -D '$tmp/data' -m immediate stop" >/dev/null 2>&1 || true
    [ -n "$emu" ] && kill "$emu" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

python3 "$root/emulator/lsm_emulator.py" --port 0 --port-file "$tmp/port" \
    --api-key k --pass-ms 300 --pool 4 --seal-rows 200 --replay-ms 200 \
    --max-lifetime 600 2>"$tmp/emulator.log" &
emu=$!

i=0
while [ ! -s "$tmp/port" ]; do
    i=$((i + 1))
    if [ "$i" -gt 50 ]; then
        echo "emulator did not start" >&2
        cat "$tmp/emulator.log" >&2
        exit 1
    fi
    sleep 0.1
done
export EMU_PORT="$(cat "$tmp/port")" EMU_KEY=k

status=0
timeout 120 node conformance.js || status=$?

# lancelsm in a scratch DESTDIR, a cluster reading it
tree=$tmp/tree
mkdir "$tree"
tar -C "$root" --exclude=node_modules --exclude=.git -cf - . | tar -C "$tree" -xf -
if ! { make -C "$tree" -s PG_CONFIG="$pg_config" clean >"$tmp/build.log" 2>&1 &&
    make -C "$tree" -s -j2 PG_CONFIG="$pg_config" >>"$tmp/build.log" 2>&1 &&
    make -C "$tree" -s PG_CONFIG="$pg_config" install DESTDIR="$tmp/dest" >>"$tmp/build.log" 2>&1; }; then
    cat "$tmp/build.log" >&2
    exit 1
fi
as_postgres "'$bindir/initdb' -D '$tmp/data' -A trust --no-sync >'$tmp/initdb.log' 2>&1" ||
    { cat "$tmp/initdb.log" >&2; exit 1; }
cat >>"$tmp/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$tmp'
port = $pgport
fsync = off
max_connections = 40
extension_destdir = '$tmp/dest'
dynamic_library_path = '$tmp/dest$("$pg_config" --pkglibdir):\$libdir'
EOF
as_postgres "'$bindir/pg_ctl' -D '$tmp/data' -l '$tmp/server.log' -w -t 60 start >/dev/null" ||
    { cat "$tmp/server.log" >&2; exit 1; }
export PGHOST="$tmp" PGPORT="$pgport" PGUSER=postgres PGDATABASE=postgres
export PSQL="$bindir/psql"
"$PSQL" -X -q -v ON_ERROR_STOP=1 -f "$here/differential.sql" \
    -v emu_url="http://127.0.0.1:$EMU_PORT" -v emu_key="$EMU_KEY" >/dev/null || exit 1

timeout 150 node differential.js || status=$?
timeout 120 sh "$here/live_smoke_check.sh" || status=$?

if [ "$status" -ne 0 ] && [ -n "${CONFORMANCE_VERBOSE:-}" ]; then
    cat "$tmp/emulator.log" "$tmp/server.log" >&2
fi
exit "$status"
