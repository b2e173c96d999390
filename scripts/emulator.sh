#!/usr/bin/env bash
# scripts/emulator.sh: the one launcher of the LSM route emulator
# (emulator/lsm_emulator.py) for every test, bench and script; the shell
# fixture (scripts/lab.sh, lab_emulator) and the TAP one (t/LsmTap.pm)
# start it through here.
#
#	scripts/emulator.sh DIR [emulator flags...]
#		starts it in the background on a free port and waits (at most
#		10 s) until it listens; writes DIR/emulator.port and
#		DIR/emulator.pid.  The caller stops it (kill the pid).
#	scripts/emulator.sh --exec DIR [emulator flags...]
#		becomes the emulator (same process id), for a caller that
#		forked and waits for DIR/emulator.port itself.
#
# Its output goes to DIR/emulator.log.  Flags after DIR come after the
# launcher's own (--port 0 --port-file DIR/emulator.port), so that a
# caller's --port wins (a restart on the same port).
set -euo pipefail
mode=background
if [ "${1:-}" = --exec ]; then mode=exec; shift; fi
[ $# -ge 1 ] || { echo "usage: scripts/emulator.sh [--exec] DIR [flags...]" >&2; exit 2; }
dir=$1; shift
here=$(cd "$(dirname "$0")/.." && pwd)
rm -f "$dir/emulator.port"
cmd=(python3 "$here/emulator/lsm_emulator.py" --port 0 --port-file "$dir/emulator.port" "$@")
if [ $mode = exec ]; then
	exec "${cmd[@]}" >>"$dir/emulator.log" 2>&1
fi
"${cmd[@]}" >>"$dir/emulator.log" 2>&1 &
pid=$!
echo $pid >"$dir/emulator.pid"
# an interpreter's start takes seconds on a loaded machine
for _ in $(seq 1 200); do
	[ -s "$dir/emulator.port" ] && exit 0
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
echo "scripts/emulator.sh: the emulator did not start; its log:" >&2
cat "$dir/emulator.log" >&2
kill $pid 2>/dev/null
exit 1
