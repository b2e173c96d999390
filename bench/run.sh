#!/usr/bin/env bash
# bench/run.sh: every bench side by side in ONE run — one emulator
# (--pass-ms 300 --pool 2), one throwaway cluster, the pinned official Node
# SDK (installed into bench/node_modules).  Prints ratios, asserts nothing
# (these machines are noisy).  The figures are also kept in
# bench/results/latest-run.txt.
#   bash bench/run.sh                      # as root, after scripts/demo.sh
#   BENCH_REPS=5 BENCH_SDK_REPS=2          # runs per side (defaults)
#   BENCH_SO=/path/lancelsm.so             # bench that build, not the installed one
#   BENCH_RTT_MS=20 (or 50)                # every request answered that much later
#                                          # (the emulator's --rtt-ms): run once per
#                                          # round trip, 0 / 20 / 50, for the figures
source "$(dirname "$0")/lib.sh"
if [ -z "${BENCH_INNER:-}" ]; then outer_run "$bench/run.sh"; exit; fi

lib=${BENCH_SO:-$(pg_config --pkglibdir)/lancelsm.so}
report "lancelsm bench — $(date -u +%FT%TZ), round trip ${BENCH_RTT_MS:-0} ms, library $lib (sha256 $(sha256sum "$lib" | cut -c1-12), built $(date -u -r "$lib" +%FT%TZ)), tree $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
for s in convergence floor polls thousand many reuse decode concurrency due herd slices; do
	bash "$bench/$s.sh" || report "== $s: the script failed (exit $?)"
done
