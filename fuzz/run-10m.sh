#!/usr/bin/env bash
# fuzz/run-10m.sh: the ten-million-execution fuzz proof of one target
# (TARGET=decode by default; see fuzz/Makefile).  Runs `make fuzz` (libFuzzer,
# RUNS=10000000 executions by default) with its output in
# fuzz/fuzz-TARGET-10m.log
# and prints (and keeps in fuzz/fuzz-TARGET-10m.log.summary) the figures
# fuzz/RESULTS.md records: date, executions, crashes,
# corpus size, elapsed time.  Takes 30-90 min; run it in the background:
#   TARGET=error nohup fuzz/run-10m.sh >/dev/null 2>&1 &
# Exit status: that of the fuzzer (non-zero on a crash, leak or timeout;
# the input is left as fuzz/crash-* etc.).
set -uo pipefail

# --summary LOG START SECONDS STATUS: the figures of a finished run's log
if [ "${1:-}" = --summary ]; then
	log=$2
	done_line=$(grep -E '^Done [0-9]+ runs' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	echo "started:    $3"
	echo "elapsed:    $4 s"
	echo "status:     $5"
	echo "executions: $(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' <<<"$done_line")${done_line:+ }(${done_line:-not finished; last status: $last})"
	echo "crashes:    $(grep -cE '^==[0-9]+==ERROR|^SUMMARY: (Address|Undefined|libFuzzer)|deadly signal' "$log")"
	echo "corpus:     $(sed -n 's/.*corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last") (entries/size, from the last status line)"
	exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
target=${TARGET:-decode}
log=${FUZZ_LOG:-$here/fuzz-$target-10m.log}
runs=${RUNS:-10000000}
start=$(date -u +%FT%TZ)
t0=$(date +%s)
nice -n 10 make -C "$here" fuzz TARGET="$target" RUNS="$runs" >"$log" 2>&1
rc=$?
t1=$(date +%s)
"$here/run-10m.sh" --summary "$log" "$start" $((t1 - t0)) "$rc" | tee "$log.summary"
exit $rc
