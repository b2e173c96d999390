#!/usr/bin/env bash
# The demo command (README.md): on a fresh Debian 12 machine, as root,
# installs what it needs, builds and installs lancelsm, starts the emulator
# with a 4-bucket table under write load, and in a throwaway cluster shows
# the L0 before a checkpoint, the checkpoint, and the L0 drained after it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
key=lsm-demo-key-51d0
[ "$(id -u)" = 0 ] || { echo "scripts/demo.sh: run as root" >&2; exit 1; }
"$here/scripts/deps.sh"
make -C "$here" -s && make -C "$here" -s install

work=$(mktemp -d /tmp/lancelsm-demo.XXXXXX)
chmod 755 "$work"
trap '[ -f "$work/emulator.pid" ] && kill "$(cat "$work/emulator.pid")" 2>/dev/null; wait 2>/dev/null' EXIT
"$here/scripts/emulator.sh" "$work" --api-key "$key" --table events:4:400 --pass-ms 300
port=$(cat "$work/emulator.port")
# some L0 to drain: three sealed generations in every bucket
curl -sS -X POST "http://127.0.0.1:$port/_emulator/tables/events/generations" \
	-d '{"count": 3, "rows": 250}' >/dev/null
cp "$here/scripts/demo.sql" "$work/demo.sql"
chown -R postgres: "$work"
su postgres -c "cd '$work' && LANCELSM_EMULATOR_PORT=$port LANCELSM_EMULATOR_KEY=$key pg_virtualenv -v 15 psql -X -q -v ON_ERROR_STOP=1 -f demo.sql"
