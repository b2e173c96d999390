#!/usr/bin/env bash
# bench/polls.sh: stats polls per pass at the server's speed, one table,
# 1 bucket, 3 L0 generations, 3 scripted passes of 300 ms (900 ms):
#  * first: BENCH_REPS runs (default 5), each the first checkpoint of a
#    table of its own (nothing learnt before);
#  * again: one checkpoint of a table, then BENCH_REPS more of the same
#    table, what the earlier ones learnt kept (the bench preloads the
#    library, so the pass durations learnt are kept between checkpoints);
#  * the official Node SDK's checkpointLsm() on the same 3 x 300 ms,
#    BENCH_SDK_REPS runs (default 2; BENCH_NO_SDK=1 leaves it out).
# Elapsed is measured in the backend (clock_timestamp() at the end of the
# checkpoint's statement).  Per run: elapsed / 900 ms, stats polls per
# pass (the watermark read excluded), the most requests in any 1 s, and
# where each stats read fell relative to the pass boundaries (the
# emulator's request and pass logs; bench/polls.py says how to read it).
# Run as root: bash bench/polls.sh   (bench/run.sh runs every bench)
source "$(dirname "$0")/lib.sh"
if [ -z "${BENCH_INNER:-}" ]; then outer_run "$bench/polls.sh"; exit; fi

reps=${BENCH_REPS:-5}
sdk_reps=${BENCH_SDK_REPS:-2}
out=$BENCH_WORK/polls
mkdir -p "$out"
setup_server

# run_sql CASE TABLE I: the SQL of run I of CASE on TABLE: recreate the
# table (3 generations, 3 passes of 300 ms), reset the logs, checkpoint,
# keep the counts and logs
run_sql() {
	local case=$1 table=$2 i=$3 label=ms
	[ "$case" = warmup ] && label=warmup
	echo "\\! curl -sS -o /dev/null -X POST $EMU/_emulator/tables -d '{\"name\": \"$table\", \"buckets\": 1}' && curl -sS -o /dev/null -X POST $EMU/_emulator/tables/$table/generations -d '{\"count\": 3, \"rows\": 10}' && curl -sS -o /dev/null -X POST $EMU/_emulator/tables/$table/pass_script -d '{\"pass_ms\": [300, 300, 300]}' && curl -sS -o /dev/null -X POST $EMU/_emulator/log/reset"
	echo "WITH c AS MATERIALIZED (SELECT lancelsm_checkpoint('lance', '$table') AS r) SELECT '$label', round(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000, 1) FROM c;"
	echo "\\! curl -sS $EMU/_emulator/counts?table=$table > $out/$case-$i.counts; curl -sS '$EMU/_emulator/log?table=$table' > $out/$case-$i.log; curl -sS '$EMU/_emulator/passes?table=$table' > $out/$case-$i.passes"
}

# measure CASE: run $out/CASE.sql, print its runs and summary
measure() {
	local case=$1
	psqlq -At -F ' ' -f "$out/$case.sql" >"$out/$case.out" 2>"$out/$case.err" ||
		report "$case: psql failed: $(head -3 "$out/$case.err" | tr '\n' ' ')"
	mapfile -t ms < <(sed -n 's/^ms \([0-9.]*\)$/\1/p' "$out/$case.out")
	python3 "$bench/polls.py" "$case" "$out" "${#ms[@]}" 900 "${ms[@]}" | tee -a "$BENCH_WORK/results.txt"
}

report "== polls per pass (3 passes x 300 ms) — $(date -u +%F\ %H:%M)Z, $(nproc) CPUs"
stamp=$(date +%s%N)
{
	echo "SET statement_timeout = '60s';"
	for i in $(seq 1 "$reps"); do run_sql first "polls_first_${stamp}_$i" "$i"; done
} >"$out/first.sql"
measure first
report "  goal: <= 2.5 polls per pass, elapsed <= 1.10 x 900 + 30 ms = 1020 ms"
{
	echo "SET statement_timeout = '60s';"
	run_sql warmup "polls_again_$stamp" 1
	for i in $(seq 1 "$reps"); do run_sql again "polls_again_$stamp" "$i"; done
} >"$out/again.sql"
measure again
report "  goal: <= 1.5 polls per pass, elapsed <= 1.03 x 900 + 30 ms = 957 ms"

if [ "${BENCH_NO_SDK:-0}" != 1 ] && [ -d "$bench/node_modules/@lancedb/lancedb" ]; then
	# the SDK resets the emulator before each run: the table must be one
	# of the command line's (conv), whose passes are the default 300 ms
	NODE_PATH=$bench/node_modules timeout $((sdk_reps * 70 + 30)) node "$bench/sdk_checkpoint.js" \
		"$BENCH_PORT" "$BENCH_KEY" conv "$sdk_reps" >"$out/sdk.jsonl" || true
	python3 - "$out/sdk.jsonl" <<'PY' | tee -a "$BENCH_WORK/results.txt"
import json, statistics, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if not r:
    print("SDK checkpointLsm(): no run finished")
else:
    ms = [x["ms"] for x in r]
    ppp = [(x["stats"] - 1) / max(x["passes"], 1) for x in r]
    print(f"SDK checkpointLsm(): {len(r)} runs; elapsed median {statistics.median(ms):.0f} ms "
          f"= {statistics.median(ms) / 900:.2f} x; stats polls per pass median {statistics.median(ppp):.2f}; "
          f"max req in 1 s {max(x['maxrate'] for x in r)}")
PY
fi
