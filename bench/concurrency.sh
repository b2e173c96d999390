#!/usr/bin/env bash
# bench/concurrency.sh: bench/results.md goal 6 (concurrency).  pgbench, 64
# sessions (BENCH_CLIENTS) for 60 s (BENCH_SECONDS) against table "conc"
# (4 buckets, a writer at 400 rows/s), two custom scripts: lancelsm_stats
# (weight 9) and lancelsm_checkpoint (weight 1), statement_timeout 120 s,
# emulator pool 8.  Prints
# errors (aborted clients, failed transactions), throughput, and p50/p99
# latency per script from pgbench's per-transaction log.
# Run as root: bash bench/concurrency.sh   (bench/run.sh runs every bench)
source "$(dirname "$0")/lib.sh"
if [ -z "${BENCH_INNER:-}" ]; then outer_run "$bench/concurrency.sh"; exit; fi

clients=${BENCH_CLIENTS:-64}
secs=${BENCH_SECONDS:-60}
out=$BENCH_WORK/conc
mkdir -p "$out"
setup_server
ctl POST reset >/dev/null
ctl POST pool '{"size": 8}' >/dev/null
# the stats script asks for generation rows, the checkpoint's polls do not:
# that tells a checkpoint's own requests apart in the emulator's log
echo "SELECT count(*) FROM lancelsm_stats('lance', 'conc', true);" >"$out/stats.sql"
echo "SELECT lancelsm_checkpoint('lance', 'conc');" >"$out/checkpoint.sql"
rc=0
(cd "$out" && PGOPTIONS='-c statement_timeout=120s' timeout $((secs + 120)) \
	pgbench -n -c "$clients" -j 4 -T "$secs" --log --log-prefix="$out/tx" \
	-f "$out/stats.sql@9" -f "$out/checkpoint.sql@1" >"$out/pgbench.out" 2>"$out/pgbench.err") || rc=$?
counts=$(ctl GET 'counts?table=conc')
ctl GET 'log?table=conc' >"$out/log.json"
report "== concurrency (goal 6) — $(date -u +%F\ %H:%M)Z, $(nproc) CPUs" \
	"pgbench: $clients clients, $secs s, scripts stats@9 + checkpoint@1 on a 4-bucket table under writes, pool 8 (exit $rc)"
report "  $(grep -E '^number of (transactions actually processed|failed)' "$out/pgbench.out" | tr '\n' ';')" \
	"  $(grep -E '^tps' "$out/pgbench.out" | head -1)" \
	"  errors: $(grep -c -E 'ERROR|aborted' "$out/pgbench.err" || true) error lines; $(grep -E 'ERROR' "$out/pgbench.err" | sed 's/.*ERROR: *//' | sort | uniq -c | sort -rn | head -3 | tr '\n' ';')" \
	"  emulator requests: $counts" \
	"  max checkpoint requests in any 1 s from one session (one cached connection each; stats-script calls excluded): $(python3 -c '
import collections, json, sys
by = collections.defaultdict(list)
for r in json.load(sys.stdin)["requests"]:
    if "true" not in json.dumps(r.get("body")):
        by[r["conn"]].append(r["time"])
best = 0
for t in by.values():
    t.sort(); j = 0
    for i in range(len(t)):
        while t[j] <= t[i] - 1.0: j += 1
        best = max(best, i - j + 1)
print(best)' <"$out/log.json") (goal <= 20)"
python3 - "$out" <<'PY' | tee -a "$BENCH_WORK/results.txt"
import glob, statistics, sys
lat = {0: [], 1: []}
for f in glob.glob(sys.argv[1] + "/tx*"):
    for line in open(f):
        p = line.split()
        if len(p) >= 6 and p[2] != "failed" and p[2] != "skipped":
            lat[int(p[3])].append(int(p[2]) / 1000)
for k, name in ((0, "stats"), (1, "checkpoint")):
    v = sorted(lat[k])
    if v:
        p99 = v[min(len(v) - 1, int(len(v) * 0.99))]
        print(f"  {name}: {len(v)} done, p50 {statistics.median(v):.1f} ms, p99 {p99:.1f} ms, max {v[-1]:.1f} ms")
    else:
        print(f"  {name}: none done")
PY
