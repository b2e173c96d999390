#!/usr/bin/env bash
# The demo command (README.md): on a fresh Debian 12 machine, as root,
# installs what it needs, builds and installs lancelsm (from a copy of the
# tree: the clone is left as it is, without build outputs that a later
# build for another PostgreSQL major could link), starts the emulator
# with a table under write load but without the LSM write path, and in a
# throwaway cluster turns the path on with lancelsm_set_write_spec, shows
# the spec and the L0 that builds up, checkpoints, and shows it drained.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
key=lsm-demo-key-51d0
[ "$(id -u)" = 0 ] || { echo "scripts/demo.sh: run as root" >&2; exit 1; }
"$here/scripts/deps.sh"

work=$(mktemp -d /tmp/lancelsm-demo.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work/tree"; [ -f "$work/emulator.pid" ] && kill "$(cat "$work/emulator.pid")" 2>/dev/null; wait 2>/dev/null' EXIT
mkdir "$work/tree"
"$here/scripts/source-tar.sh" | tar -C "$work/tree" -xf -
make -C "$work/tree" -s && make -C "$work/tree" -s install
"$here/scripts/emulator.sh" "$work" --api-key "$key" --pass-ms 300 --seal-rows 200
port=$(cat "$work/emulator.port")
# "events": writers at 400 rows/s, an unenforced primary key "id", two
# indexes, and no LSM write path yet (they write once it is on)
curl -sS -X POST "http://127.0.0.1:$port/_emulator/tables" -d '{"name": "events",
	"buckets": 1, "lsm": false, "rows_per_second": 400, "primary_key": "id",
	"indexes": ["vec_idx", "text_idx"]}' >/dev/null
cp "$here/scripts/demo.sql" "$work/demo.sql"
chown -R postgres: "$work"
su postgres -c "cd '$work' && LANCELSM_EMULATOR_PORT=$port LANCELSM_EMULATOR_KEY=$key pg_virtualenv -v 15 psql -X -q -v ON_ERROR_STOP=1 -f demo.sql"
