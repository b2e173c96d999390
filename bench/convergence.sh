#!/usr/bin/env bash
# bench/convergence.sh: bench/results.md goals 1 (convergence), 2 (lightness).
# Scenario: 1 bucket, 3 L0 generations, --pass-ms 300, pool 2.
#  * lancelsm_checkpoint, BENCH_REPS runs (default 5) in one session, median;
#  * the official Node SDK's checkpointLsm(), BENCH_SDK_REPS runs (default 2);
#  * stats polls per pass and the max requests in any 1 s window, per side;
#  * a long stall (pool saturated 12 s, lancelsm.poll_interval_max = 1 s):
#    the poll gaps must settle at the maximum interval.
# Run as root: bash bench/convergence.sh   (bench/run.sh runs every bench)
source "$(dirname "$0")/lib.sh"
if [ -z "${BENCH_INNER:-}" ]; then outer_run "$bench/convergence.sh"; exit; fi

reps=${BENCH_REPS:-5}
sdk_reps=${BENCH_SDK_REPS:-2}
pass_ms=300 ngen=3
out=$BENCH_WORK/conv
mkdir -p "$out"
setup_server

# --- lancelsm: one session, reset + 3 generations before each run (via \!)
{
	echo "SET statement_timeout = '60s';"
	for i in $(seq 1 "$reps"); do
		echo "\\! curl -sS -o /dev/null -X POST $EMU/_emulator/reset && curl -sS -o /dev/null -X POST $EMU/_emulator/tables/conv/generations -d '{\"count\": $ngen, \"rows\": 10}'"
		echo "\\timing on"
		echo "SELECT lancelsm_checkpoint('lance', 'conv');"
		echo "\\timing off"
		echo "\\! curl -sS $EMU/_emulator/counts?table=conv > $out/lsm-$i.counts; curl -sS $EMU/_emulator/tables/conv > $out/lsm-$i.state; curl -sS '$EMU/_emulator/log?table=conv' > $out/lsm-$i.log"
	done
} >"$out/lsm.sql"
lsm_rc=0
psqlq -At -f "$out/lsm.sql" >"$out/lsm.out" 2>"$out/lsm.err" || lsm_rc=$?
mapfile -t lsm_ms < <(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$out/lsm.out")
[ "$lsm_rc" = 0 ] || echo "lancelsm FAILED (psql exit $lsm_rc) after ${#lsm_ms[@]} runs: $(grep -v '^\s*$' "$out/lsm.err" | head -3 | tr '\n' ' ')" >>"$out/detail.txt"
polls=() rates=() compacts=()
for i in $(seq 1 "${#lsm_ms[@]}"); do
	passes=$(pyutil get passes_completed <"$out/lsm-$i.state")
	l0=$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["buckets"][0]["generations"]))' <"$out/lsm-$i.state")
	stats=$(pyutil get get_lsm_stats <"$out/lsm-$i.counts")
	compact=$(pyutil get compact_lsm <"$out/lsm-$i.counts")
	flush=$(pyutil get flush_lsm <"$out/lsm-$i.counts")
	rate=$(pyutil maxrate <"$out/lsm-$i.log")
	# stats polls per pass: every stats request except the watermark read
	ppp=$(python3 -c "print(f'{($stats - 1) / max($passes, 1):.2f}')")
	polls+=("$ppp") rates+=("$rate") compacts+=("$compact")
	echo "lancelsm run $i: ${lsm_ms[$((i-1))]} ms; flush $flush, compact $compact, stats $stats; passes $passes, L0 left $l0; stats polls/pass $ppp; max req in 1 s: $rate; stats gaps ms: $(pyutil gaps get_lsm_stats <"$out/lsm-$i.log")" >>"$out/detail.txt"
done

# --- the SDK, same emulator, same scenario
node_path=$bench/node_modules
NODE_PATH=$node_path timeout $((sdk_reps * 70 + 30)) node "$bench/sdk_checkpoint.js" "$BENCH_PORT" "$BENCH_KEY" conv "$sdk_reps" >"$out/sdk.jsonl"
mapfile -t sdk_ms < <(python3 -c 'import json,sys; [print(json.loads(l)["ms"]) for l in sys.stdin if l.strip()]' <"$out/sdk.jsonl")
sdk_polls=$(python3 -c 'import json,sys,statistics; r=[json.loads(l) for l in sys.stdin if l.strip()]; print("%.2f" % statistics.median([(x["stats"]-1)/max(x["passes"],1) for x in r]))' <"$out/sdk.jsonl")
sdk_rate=$(python3 -c 'import json,sys; print(max(json.loads(l)["maxrate"] for l in sys.stdin if l.strip()))' <"$out/sdk.jsonl")
sed 's/^/sdk run: /' "$out/sdk.jsonl" >>"$out/detail.txt"

# --- a long stall: the pool is saturated for 12 s, the checkpoint waits
ctl POST reset >/dev/null
ctl POST tables/stall/generations '{"count": 1, "rows": 10}' >/dev/null
ctl POST pool '{"saturated": true}' >/dev/null
t0=$(date +%s.%N)
psqlq -At -c "SET statement_timeout = '40s'" -c "SET lancelsm.poll_interval_max = '1s'" \
	-c "SELECT lancelsm_checkpoint('lance', 'stall')" >"$out/stall.out" 2>&1 &
stall_pid=$!
sleep 12
ctl POST pool '{"saturated": false}' >/dev/null
stall_rc=0; wait "$stall_pid" || stall_rc=$?
stall_s=$(python3 -c "import time; print(f'{time.time() - $t0:.1f}')")
ctl GET 'log?table=stall' >"$out/stall.log"
stall_gaps=$(pyutil gaps get_lsm_stats <"$out/stall.log")
stall_rate=$(pyutil maxrate <"$out/stall.log")
stall_polls=$(ctl GET 'counts?table=stall' | pyutil get get_lsm_stats)

# --- report
lsm_med=$(pyutil median "${lsm_ms[@]}")
[ "${#lsm_ms[@]}" -gt 0 ] || { lsm_med=nan; polls=(nan); }
sdk_med=$(pyutil median "${sdk_ms[@]}")
server=$((ngen * pass_ms))
goal=$(python3 -c "print(1.25 * $server + 100)")
report "== convergence (goal 1) and lightness (goal 2) — $(date -u +%F\ %H:%M)Z, $(nproc) CPUs" \
	"scenario: 1 bucket, $ngen L0 generations, --pass-ms $pass_ms, pool 2, one pass per generation" \
	"server pass time total:        $server ms" \
	"lancelsm_checkpoint elapsed:   median $lsm_med ms of ${#lsm_ms[@]}/$reps runs (${lsm_ms[*]})" \
	"goal 1.25 x pass time + 100:   $goal ms -> lancelsm / goal = $(python3 -c "print('%.2f' % (float('$lsm_med') / $goal))") (<= 1.00 meets it)" \
	"SDK checkpointLsm() elapsed:   median $sdk_med ms of $sdk_reps runs (${sdk_ms[*]})" \
	"speedup SDK / lancelsm:        $(python3 -c "print('%.1f' % (float('$sdk_med') / float('$lsm_med')))")x (goal >= 10x)" \
	"stats polls per pass:          lancelsm $(pyutil median "${polls[@]}") (median; runs: ${polls[*]}), SDK $sdk_polls (goal <= 4; the watermark read excluded)" \
	"compact calls per run:         lancelsm ${compacts[*]} (3 passes)" \
	"max requests in any 1 s:       lancelsm ${rates[*]} (goal <= 20), SDK $sdk_rate" \
	"long stall (pool saturated 12 s, poll_interval_max 1 s): exit $stall_rc, ${stall_s} s, $stall_polls stats polls, max $stall_rate req in 1 s" \
	"  stats gaps ms: $stall_gaps"
[ "$stall_rc" = 0 ] || report "  stall output: $(tr '\n' ' ' <"$out/stall.out")"
sed 's/^/  /' "$out/detail.txt" | tee -a "$BENCH_WORK/results.txt"
