#!/usr/bin/env bash
# Starts the LSM route emulator as the pg_regress suite (sql/, expected/)
# expects it: table "events" with 2 buckets, "analytics$events" with 1,
# compaction passes of 100 ms.  Usage:
#	scripts/regress-emulator.sh DIR KEY [emulator flags...]
# (KEY: the API key it accepts; flags such as --max-lifetime SECONDS go to
# emulator/lsm_emulator.py).  Writes DIR/emulator.port and DIR/emulator.pid
# like scripts/emulator.sh; the caller stops it.  sql/setup.sql starts one
# this way when LANCELSM_EMULATOR_PORT is not set; scripts/test.sh,
# scripts/sanitize.sh and debian/tests/installcheck start one themselves
# and pass it in LANCELSM_EMULATOR_PORT and LANCELSM_EMULATOR_KEY.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/regress-emulator.sh DIR KEY [flags...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$1 key=$2
shift 2
exec "$here/scripts/emulator.sh" "$dir" --api-key "$key" --table events:2 \
	--table 'analytics$events:1' --pass-ms 100 "$@"
