#!/usr/bin/env bash
# bench/thousand.sh: 1,000 tables in one call (bench/results.md goal 9).
# BENCH_TABLES tables (default 1000), 1 bucket and 1 L0 generation each,
# the emulator with BENCH_PERMITS compaction permits (50) and BENCH_PASS_MS
# passes (300 ms), so the server's own minimum is tables / 50 x 300 ms (6 s
# for 1,000).
#  * the emulator alone: get_lsm_stats requests per second from 32
#    keep-alive clients (bench/util.py rate), idle and while the 1,000
#    passes queue, so that its own speed is known not to bound the rest;
#  * lancelsm_checkpoint(server, text[]) over all of them, then
#    lancelsm_checkpoint_all() over the same tables declared: elapsed
#    inside the backend / the server's minimum, the backend's CPU
#    (utime+stime of /proc/PID/stat) and memory (VmRSS growth, VmHWM),
#    requests and connections (emulator counts), rows not ok, and the
#    history rows that say ok with 1 pass.
# BENCH_RTT_MS (bench/lib.sh): the round trip the emulator adds to every
# route request, e.g. BENCH_TABLES=10000 BENCH_RTT_MS=50 (default 0).
# Run as root: bash bench/thousand.sh   (bench/run.sh runs every bench)
# thousand.sh watch|unwatch PREFIX (from psql's \! in measure below):
# start / stop sampling the private (RssAnon) and shared (RssShmem) memory
# of the backend whose pid is in PREFIX.pid, peaks into PREFIX.rss; with
# BENCH_PERF=1 also perf record -g of it into PREFIX.perf.data.
if [ "${1:-}" = watch ] || [ "${1:-}" = unwatch ]; then
	p=$2 util="$(dirname "$0")/util.py"
	if [ "$1" = watch ]; then
		rm -f "$p.ready" "$p.stop" "$p.rss"
		(python3 "$util" peak "$(cat "$p.pid")" "$p.stop" "$p.ready" >"$p.rss.tmp" &&
			mv "$p.rss.tmp" "$p.rss") </dev/null >/dev/null 2>&1 &
		if [ "${BENCH_PERF:-0}" = 1 ]; then
			perf record -q -F 499 -g -p "$(cat "$p.pid")" -o "$p.perf.data" </dev/null >/dev/null 2>&1 &
			echo $! >"$p.perfpid"
		fi
		for _ in $(seq 1000); do [ -e "$p.ready" ] && exit 0; sleep 0.01; done
		echo "thousand.sh: memory sampler did not start" >&2; exit 1
	fi
	touch "$p.stop"
	if [ -s "$p.perfpid" ]; then
		kill -INT "$(cat "$p.perfpid")" 2>/dev/null || true
		for _ in $(seq 3000); do kill -0 "$(cat "$p.perfpid")" 2>/dev/null || break; sleep 0.01; done
	fi
	for _ in $(seq 3000); do [ -s "$p.rss" ] && exit 0; sleep 0.01; done
	echo "thousand.sh: memory sampler did not stop" >&2; exit 1
fi
source "$(dirname "$0")/lib.sh"
if [ -z "${BENCH_INNER:-}" ]; then BENCH_NO_SDK=1 outer_run "$bench/thousand.sh"; exit; fi

n=${BENCH_TABLES:-1000}
permits=${BENCH_PERMITS:-50} pass_ms=${BENCH_PASS_MS:-300}
out=$BENCH_WORK/thousand
mkdir -p "$out"
setup_server
floor_ms=$(( (n + permits - 1) / permits * pass_ms ))

# prepare: every table afresh with one L0 generation, pool of 50, log reset
prepare() {
	python3 "$bench/util.py" tables "$EMU" "$n" "$permits"
	ctl POST config "{\"pass_ms\": $pass_ms}" >/dev/null
}

# measure LABEL SQL: run SQL (it returns the number of rows not ok) in one
# backend, with CPU and memory read before and after
measure() {
	local label=$1 sql=$2
	cat >"$out/$label.sql" <<SQL
SET statement_timeout = '600s';
SELECT pg_backend_pid() \\g $out/$label.pid
SELECT lancelsm_checkpoint('lance', ARRAY[]::text[]);
\\! python3 $bench/util.py cpu \$(cat $out/$label.pid) > $out/$label.cpu0; python3 $bench/util.py hwm \$(cat $out/$label.pid) > $out/$label.mem0
\\! bash $bench/thousand.sh watch $out/$label
WITH c AS MATERIALIZED ($sql) SELECT 'result', (SELECT count(*) FROM c WHERE NOT ok), round(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000);
\\! python3 $bench/util.py cpu \$(cat $out/$label.pid) > $out/$label.cpu1; python3 $bench/util.py hwm \$(cat $out/$label.pid) > $out/$label.mem1
\\! bash $bench/thousand.sh unwatch $out/$label
SELECT 'history', count(*) FILTER (WHERE ok AND passes = 1), count(*) FROM lancelsm_checkpoint_history WHERE table_name LIKE 'k%';
SELECT 'skipped', (SELECT progress_skipped FROM lancelsm_info);
SQL
	# (psql does not expand variables in \!: the pid goes through a file)
	psqlq -At -F ' ' -f "$out/$label.sql" >"$out/$label.out" 2>"$out/$label.err" ||
		report "$label: psql failed: $(head -3 "$out/$label.err" | tr '\n' ' ')"
	ctl GET counts >"$out/$label.counts"
	# every request and every pass (kept with BENCH_KEEP=1)
	ctl GET log >"$out/$label.log.json"
	ctl GET passes >"$out/$label.passes.json"
	report "  $label, passes noticed: $(python3 "$bench/util.py" noticed "$out/$label.log.json" "$out/$label.passes.json")"
	python3 - "$label" "$out" "$floor_ms" "$n" <<'PY' | tee -a "$BENCH_WORK/results.txt"
import json, sys
label, out, floor_ms, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rows = {l.split()[0]: l.split()[1:] for l in open(f"{out}/{label}.out") if l.strip()}
notok, ms = rows["result"]
c0, c1 = (int(open(f"{out}/{label}.cpu{i}").read().split()[0]) for i in (0, 1))
(h0, r0), (h1, r1) = (map(int, open(f"{out}/{label}.mem{i}").read().split()) for i in (0, 1))
a0, a1, s0, s1, _ = map(int, open(f"{out}/{label}.rss").read().split())
counts = json.load(open(f"{out}/{label}.counts"))
hist = rows.get("history", ["?", "?"])
print(f"{label}: {ms} ms = {float(ms) / floor_ms:.2f} x the server's minimum ({floor_ms} ms; goal <= 1.5); "
      f"rows not ok {notok}; backend CPU {(c1 - c0) / 1000:.0f} ms (goal <= 2000); "
      f"RSS {r0 / 1024:.1f} -> {r1 / 1024:.1f} MB (+{(r1 - r0) / 1024:.1f}), peak (VmHWM) {h1 / 1024:.1f} MB "
      f"(+{(h1 - r0) / 1024:.1f} over the RSS before); private peak +{(a1 - a0) / 1024:.1f} MB (RssAnon {a0 / 1024:.1f} -> peak {a1 / 1024:.1f}; goal <= 40), RssShmem +{(s1 - s0) / 1024:.1f} MB (peak {s1 / 1024:.1f}), CPU per table {(c1 - c0) / 1000 / n:.3f} ms; requests {counts['total']} "
      f"(flush {counts['flush_lsm']}, compact {counts['compact_lsm']}, stats {counts['get_lsm_stats']}), "
      f"connections {counts['connections']}; history: {hist[0]} of {hist[1]} rows ok with 1 pass; "
      f"progress entries skipped so far {rows.get('skipped', ['?'])[0]}")
PY
}

report "== $n tables in one call (goal 9) — $(date -u +%F\ %H:%M)Z, $(nproc) CPUs" \
	"scenario: $n tables, 1 bucket and 1 L0 generation each, --pass-ms $pass_ms, pool $permits: server minimum $floor_ms ms; round trip ${BENCH_RTT_MS:-0} ms (the emulator's --rtt-ms, bench/lib.sh)"
prepare
report "emulator alone, get_lsm_stats from 32 keep-alive clients: $(python3 "$bench/util.py" rate "$EMU" "$BENCH_KEY" 32 3 "$n") req/s idle"
python3 "$bench/util.py" compact_all "$EMU" "$BENCH_KEY" "$n"
report "  and $(python3 "$bench/util.py" rate "$EMU" "$BENCH_KEY" 32 3 "$n") req/s while $n passes queue for $permits permits"
prepare
arr="ARRAY[$(seq 1 "$n" | sed "s/.*/'k&'/" | paste -sd,)]"
measure array "SELECT * FROM lancelsm_checkpoint('lance', $arr)"
psqlq -c "DELETE FROM lancelsm_table" -o /dev/null
seq 1 "$n" | sed "s/.*/SELECT lancelsm_add_table('lance', 'k&', validate => false);/" | psqlq -o /dev/null
prepare
measure all "SELECT * FROM lancelsm_checkpoint_all()"

# the reference for the CPU: the array call's requests sent by the leanest
# libcurl client (bench/curl_floor.c), on the same 32 connections
cc -O2 -o "$out/curl_floor" "$bench/curl_floor.c" -lcurl
sent=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["total"])' "$out/array.counts")
read -r _ _ _ answered _ floor_cpu _ floor_us <<<"$("$out/curl_floor" "$EMU" "$BENCH_KEY" "$n" "$sent" 32)"
python3 - "$out" "$floor_cpu" "$answered" "$n" <<'PY' | tee -a "$BENCH_WORK/results.txt"
import sys
out, floor_cpu, answered, n = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
per = floor_cpu * 1000 / answered
print(f"libcurl alone (bench/curl_floor.c): {answered} requests, CPU {floor_cpu:.0f} ms = {per:.1f} us per request")
for label in ("array", "all"):
    c0, c1 = (int(open(f"{out}/{label}.cpu{i}").read().split()[0]) for i in (0, 1))
    import json
    sent = json.load(open(f"{out}/{label}.counts"))["total"]
    mine = (c1 - c0) / sent
    print(f"  {label}: {mine:.1f} us per request = {mine / per:.2f} x libcurl alone "
          f"({sent / n:.2f} requests per table; libcurl alone for them: {per * sent / 1000:.0f} ms)")
PY
