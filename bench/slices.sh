#!/usr/bin/env bash
# bench/slices.sh: lancelsm_checkpoint_due(slice => i, slices => n) in n
# backends at once over a large declared set, at a network's round trip.
# BENCH_SLICES_TABLES declared tables (default 100,000; emulator tables
# k1..kN of 1 bucket and 1 L0 generation, BENCH_PERMITS compaction
# permits, 50), BENCH_SLICES_DUE of them due (default 1,000, every
# N/DUE-th; the odd ones max_l0_generations 0: one compaction trigger, the
# even ones max_checkpoint_age 1 second: a trigger-only checkpoint) and
# the others quiet (max_l0_generations 1), run as BENCH_SLICES (default 4)
# slices, one psql session each, started together.  For each round trip
# of BENCH_RTTS (default "$BENCH_RTT_MS", else 50; e.g. "0 20 50"), set
# in the emulator itself (config rtt_ms):
#  * the emulator's own rate at that round trip: get_lsm_stats requests/s
#    from slices x 32 keep-alive clients (the connections the slices' pools
#    hold, 32 each), measured just before the run;
#  * the run's time (first call's start to last call's end) / the time
#    the emulator needs for the run's requests at that rate (goal <= 1.2);
#  * stats reads per quiet table (min, max; goal exactly 1), rows per
#    slice and whether every table came back in exactly one slice, rows
#    not ok, due tables acted on;
#  * each backend's private peak (RssAnon growth, sampled every 10 ms as
#    bench/thousand.sh does; goal <= 40 MB) and its CPU.
# Before the second and later round trips the due tables are made due
# again (one more L0 generation; the age ones are due by themselves)
# once the previous run's compaction passes have drained.
# Run as root: bash bench/slices.sh   (bench/run.sh runs every bench)
source "$(dirname "$0")/lib.sh"
if [ -z "${BENCH_INNER:-}" ]; then BENCH_NO_SDK=1 outer_run "$bench/slices.sh"; exit; fi

n=${BENCH_SLICES_TABLES:-100000} hotn=${BENCH_SLICES_DUE:-1000}
slices=${BENCH_SLICES:-4} permits=${BENCH_PERMITS:-50}
rtts=${BENCH_RTTS:-${BENCH_RTT_MS:-50}}
step=$((n / hotn))
out=$BENCH_WORK/slices
mkdir -p "$out"
setup_server

report "== checkpoint_due in $slices slices over $n declared tables — $(date -u +%F\ %H:%M)Z, $(nproc) CPUs" \
	"scenario: $n tables of 1 bucket and 1 L0 generation, $hotn due (half compact, half checkpoint by age) and $((n - hotn)) quiet, $slices slices in parallel, pool $permits, round trips: $rtts ms"
t0=$(date +%s)
pyutil tables "$EMU" "$n" "$permits"
psqlq -o /dev/null <<SQL
DELETE FROM lancelsm_table;
INSERT INTO lancelsm_table (server, table_name, max_l0_generations, max_checkpoint_age)
  SELECT 'lance', 'k' || i,
         CASE WHEN i % $step <> 0 THEN 1 WHEN i / $step % 2 = 1 THEN 0 ELSE 1 END,
         CASE WHEN i % $step = 0 AND i / $step % 2 = 0 THEN interval '1 second' END
    FROM generate_series(1, $n) i;
SQL
report "  setup: $(($(date +%s) - t0)) s for the emulator's tables and the declarations"
hot=$(seq "$step" "$step" "$n" | awk -v s="$step" '($1 / s) % 2 == 1 {printf "k%d ", $1}')

# one_slice I RTT: the psql script of slice I, waiting for $out/start
one_slice() {
	local i=$1 p=$out/r$2.s$1
	cat >"$p.sql" <<SQL
SET statement_timeout = '1200s';
SELECT pg_backend_pid() \\g $p.pid
SELECT lancelsm_checkpoint('lance', ARRAY[]::text[]);
\\! python3 $bench/util.py cpu \$(cat $p.pid) > $p.cpu0; bash $bench/thousand.sh watch $p; touch $p.ready; while [ ! -e $out/start ]; do sleep 0.005; done
WITH c AS MATERIALIZED (SELECT * FROM lancelsm_checkpoint_due(slice => $i, slices => $slices))
SELECT 'result', count(*), count(*) FILTER (WHERE NOT ok), count(*) FILTER (WHERE due), count(*) FILTER (WHERE action <> 'none'),
       extract(epoch FROM statement_timestamp()), extract(epoch FROM clock_timestamp()) FROM c;
\\! python3 $bench/util.py cpu \$(cat $p.pid) > $p.cpu1; bash $bench/thousand.sh unwatch $p
SQL
	psqlq -At -F ' ' -f "$p.sql" >"$p.out" 2>"$p.err" ||
		report "slice $i: psql failed: $(head -3 "$p.err" | tr '\n' ' ')"
}

first=1
for rtt in $rtts; do
	if [ "$first" = 0 ]; then
		drained
		# shellcheck disable=SC2086
		pyutil generation "$EMU" $hot
	fi
	first=0
	ctl POST config "{\"rtt_ms\": $rtt}" >/dev/null
	rate=$(pyutil rate "$EMU" "$BENCH_KEY" $((slices * 32)) 5 "$n")
	ctl POST log/reset >/dev/null
	rm -f "$out/start"
	pids=()
	for i in $(seq 0 $((slices - 1))); do
		one_slice "$i" "$rtt" &
		pids+=($!)
	done
	for i in $(seq 0 $((slices - 1))); do
		for _ in $(seq 60000); do [ -e "$out/r$rtt.s$i.ready" ] && break; sleep 0.01; done
	done
	touch "$out/start"
	wait "${pids[@]}"
	ctl GET counts/tables >"$out/r$rtt.counts.json"
	python3 - "$out" "$rtt" "$n" "$step" "$slices" "$rate" <<'PY' | tee -a "$BENCH_WORK/results.txt"
import json, sys
out, rtt, n, step, slices, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
counts = json.load(open(f"{out}/r{rtt}.counts.json"))["tables"]
hot = {f"k{i}" for i in range(step, n + 1, step)}
quiet = [counts.get(f"k{i}", {}).get("get_lsm_stats", 0) for i in range(1, n + 1) if f"k{i}" not in hot]
sent = sum(sum(v for r, v in c.items()) for c in counts.values())
need_ms = sent / rate * 1000
res, lines = [], []
for i in range(slices):
    p = f"{out}/r{rtt}.s{i}"
    rows = {l.split()[0]: l.split()[1:] for l in open(f"{p}.out") if l.strip()}
    r = rows["result"]
    c0, c1 = (int(open(f"{p}.cpu{k}").read().split()[0]) for k in (0, 1))
    a0, a1, _, _, samples = map(int, open(f"{p}.rss").read().split())
    res.append((int(r[0]), int(r[1]), int(r[2]), int(r[3]), float(r[4]), float(r[5])))
    lines.append(f"slice {i}: {r[0]} rows, {float(r[5]) - float(r[4]):.1f} s, CPU {(c1 - c0) / 1000:.0f} ms, "
                 f"private peak +{(a1 - a0) / 1024:.1f} MB ({samples} samples)")
run_ms = (max(r[5] for r in res) - min(r[4] for r in res)) * 1000
print(f"rtt {rtt} ms: {slices} slices in {run_ms:.0f} ms = {run_ms / need_ms:.2f} x what the emulator needs for their "
      f"{sent} requests at its own {rate:.0f} req/s from {slices * 32} clients ({need_ms:.0f} ms; goal <= 1.2)")
print(f"  rows {sum(r[0] for r in res)} of {n} declared (all of them: {sum(r[0] for r in res) == n}), "
      f"not ok {sum(r[1] for r in res)}, due {sum(r[2] for r in res)}, acted on {sum(r[3] for r in res)}; "
      f"stats reads per quiet table: min {min(quiet)} max {max(quiet)} (goal exactly 1)")
print("  " + "; ".join(lines) + " (goal <= 40 MB each)")
PY
done
