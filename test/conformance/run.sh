#!/bin/sh
# SDK conformance: install the pinned official Node SDK into an ignored
# folder, start the emulator, run conformance.js against it, stop it.
# Exits non-zero on any failure.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$here"

if [ ! -d node_modules/@lancedb/lancedb ]; then
    npm i --prefix "$here" -E --no-save --no-audit --no-fund @lancedb/lancedb@0.39.0
fi

tmp=$(mktemp -d)
portfile="$tmp/port"
python3 "$root/emulator/lsm_emulator.py" --port 0 --port-file "$portfile" \
    --api-key k --pass-ms 300 --pool 4 --seal-rows 200 --replay-ms 200 \
    2>"$tmp/emulator.log" &
emu=$!
cleanup() {
    kill "$emu" 2>/dev/null || true
    wait "$emu" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

i=0
while [ ! -s "$portfile" ]; do
    i=$((i + 1))
    if [ "$i" -gt 50 ]; then
        echo "emulator did not start" >&2
        cat "$tmp/emulator.log" >&2
        exit 1
    fi
    sleep 0.1
done

status=0
EMU_PORT=$(cat "$portfile") EMU_KEY=k timeout 120 node conformance.js || status=$?
if [ "$status" -ne 0 ] && [ -n "${CONFORMANCE_VERBOSE:-}" ]; then
    cat "$tmp/emulator.log" >&2
fi
exit "$status"
