#!/bin/sh
# scripts/live-smoke.sh end to end against an emulator of its own, as a
# user with an account would run it against LanceDB: called by run.sh with
# the libpq variables naming a PostgreSQL where lancelsm can be created.
# Table "live_events": 2 buckets, 2 L0 generations and 30 memtable rows
# each.  Asserts the exit status, every line of the protocol fingerprint
# (the emulator's answers are known), the exact number of flushes (one by
# the fingerprint, one by lancelsm_flush, one by the checkpoint), that no
# object outlives the rolled-back transaction and that the API key never
# appears in the output; then, with the emulator keeping compacted
# generations listed, that the fingerprint alone says so.  Prints the
# output.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
key=sk_live_smoke_4f1c8e2a9b7d
tmp=$(mktemp -d /tmp/lancelsm-live-smoke.XXXXXX)
cleanup() {
    [ -f "$tmp/emulator.pid" ] && kill "$(cat "$tmp/emulator.pid")" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

"$root/scripts/emulator.sh" "$tmp" --api-key "$key" --table live_events:2 \
    --pass-ms 200 --max-lifetime 300 --quiet
port=$(cat "$tmp/emulator.port")
ctl() {
    curl -sS -f -X POST -H 'content-type: application/json' -d "$2" \
        "http://127.0.0.1:$port/_emulator/$1" >/dev/null
}
ctl tables/live_events/generations '{"count": 2, "rows": 10}'
ctl tables/live_events/write '{"rows": 60}'

status=0
LANCELSM_LIVE_DATABASE=mydb LANCELSM_LIVE_API_KEY=$key LANCELSM_LIVE_TABLE=live_events \
    LANCELSM_LIVE_HOST_OVERRIDE="http://127.0.0.1:$port" LANCELSM_LIVE_TIMEOUT=60s \
    LANCELSM_LIVE_FINGERPRINT_WAIT=30 \
    bash "$root/scripts/live-smoke.sh" >"$tmp/out" 2>&1 || status=$?
cat "$tmp/out"

fail=0
check() {
    if ! grep -qxF -- "$1" "$tmp/out"; then
        echo "live smoke check: missing line: $1" >&2
        fail=1
    fi
}
[ "$status" -eq 0 ] || { echo "live smoke check: exit status $status" >&2; fail=1; }
check '== protocol fingerprint (paste this block back)'
check 'flush: status 202, body 0 bytes'
check 'watermark read right after the flush: shows the sealed generation (2 of 2 buckets)'
check 'compact: status 202, body 0 bytes'
check 'compact with nothing left to compact: status 429, body 65 bytes, code 6'
check 'bucket status spellings: "Active"'
check 'stats key spelling: buckets/generations'
check 'unrecognized members: none'
check '== end of fingerprint'
check '== live smoke test passed'
grep -qx 'compacted generations: leave generations when their pass ends ([0-9]* left, [0-9]* passes seen ending)' "$tmp/out" ||
    { echo "live smoke check: no compacted-generations line" >&2; fail=1; }
grep -qx 'optional memtables: present in [1-9][0-9]*, absent in 0, null in 0 bucket answers' "$tmp/out" ||
    { echo "live smoke check: no memtables line" >&2; fail=1; }
grep -qx 'optional generation rows (asked for): present in [1-9][0-9]*, absent in 0 generations' "$tmp/out" ||
    { echo "live smoke check: no rows line" >&2; fail=1; }
if grep -qF "$key" "$tmp/out"; then
    echo "live smoke check: the API key was printed" >&2
    fail=1
fi
flushes=$(curl -sS "http://127.0.0.1:$port/_emulator/counts?table=live_events" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["flush_lsm"])')
[ "$flushes" = 3 ] || { echo "live smoke check: $flushes flushes, expected 3" >&2; fail=1; }
# a server that keeps compacted generations listed (the emulator's
# keep_compacted): the fingerprint alone, 4 s of passes
ctl behaviour '{"keep_compacted": true}'
ctl tables/live_events/generations '{"count": 1, "rows": 10}'
LANCELSM_LIVE_DATABASE=mydb LANCELSM_LIVE_API_KEY=$key LANCELSM_LIVE_TABLE=live_events \
    LANCELSM_LIVE_HOST_OVERRIDE="http://127.0.0.1:$port" LANCELSM_LIVE_FINGERPRINT_WAIT=4 \
    python3 "$root/scripts/live-fingerprint.py" >"$tmp/kept" 2>&1 || fail=1
grep -q '^compacted generations: stay listed' "$tmp/kept" &&
    grep -qx 'compact with nothing left to compact: not observed (L0 not empty after 4 s)' "$tmp/kept" ||
    { echo "live smoke check: kept-listed generations not reported" >&2; cat "$tmp/kept" >&2; fail=1; }
left=$("${PSQL:-psql}" -X -At -c "SELECT count(*) FROM pg_catalog.pg_foreign_server WHERE srvname = 'lancelsm_live_smoke'")
[ "$left" = 0 ] || { echo "live smoke check: the server outlived the transaction" >&2; fail=1; }
[ "$fail" -eq 0 ] && echo "live smoke check: ok"
exit "$fail"
