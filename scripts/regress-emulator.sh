#!/usr/bin/env bash
# Starts the LSM route emulator as the pg_regress suite (sql/, expected/)
# expects it: table "events" with 2 buckets, "analytics$events" with 1,
# compaction passes of 100 ms.  Usage: scripts/regress-emulator.sh DIR KEY
# (KEY: the API key it accepts).  Writes DIR/emulator.port and
# DIR/emulator.pid like scripts/emulator.sh; the caller stops it.
# scripts/test.sh, scripts/sanitize.sh and debian/tests/installcheck use it.
set -euo pipefail
[ $# = 2 ] || { echo "usage: scripts/regress-emulator.sh DIR KEY" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
exec "$here/scripts/emulator.sh" "$1" --api-key "$2" --table events:2 \
	--table 'analytics$events:1' --pass-ms 100
