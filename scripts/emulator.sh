#!/usr/bin/env bash
# Starts the LSM route emulator in the background for scripts/test.sh and
# scripts/demo.sh.  Usage: scripts/emulator.sh DIR [emulator flags...]
# Writes DIR/emulator.port and DIR/emulator.pid; waits until it listens.
set -euo pipefail
dir=$1; shift
here=$(cd "$(dirname "$0")/.." && pwd)
rm -f "$dir/emulator.port"
python3 "$here/emulator/lsm_emulator.py" --port 0 --port-file "$dir/emulator.port" \
	"$@" 2>"$dir/emulator.log" &
echo $! >"$dir/emulator.pid"
for _ in $(seq 1 100); do
	[ -s "$dir/emulator.port" ] && exit 0
	sleep 0.05
done
echo "scripts/emulator.sh: the emulator did not start; its log:" >&2
cat "$dir/emulator.log" >&2
exit 1
