#!/usr/bin/env bash
# bench/herd.sh: many sessions on one table.  A 4-bucket table "herd" under
# an emulator writer of 200 rows/s; first one lancelsm_checkpoint alone,
# then BENCH_HERD (16) sessions released at the same moment (each waits on
# a shared advisory lock that one transaction holds until all wait), each calling
# lancelsm_checkpoint(server, ARRAY['herd']).  BENCH_HERD_REPS (3) rounds.
# Reported per round: requests (all routes), stats reads, compact calls,
# flushes (= runs), seconds, for the single checkpoint and the herd; how
# many sessions led and joined; the most requests one session (one
# connection) sent in any second; the ratios herd / single and the goal
# (stats reads <= 2 x single + 16).  With BENCH_PRELOAD=0 the cluster runs
# without shared_preload_libraries: every session checkpoints alone, as
# before herds shared runs (the reference for the figures).
# Run as root: bash bench/herd.sh   (bench/run.sh runs every bench)
source "$(dirname "$0")/lib.sh"
if [ -z "${BENCH_INNER:-}" ]; then BENCH_NO_SDK=1 outer_run "$bench/herd.sh"; exit; fi

n=${BENCH_HERD:-16}
reps=${BENCH_HERD_REPS:-3}
out=$BENCH_WORK/herd
mkdir -p "$out"
setup_server
ctl POST reset >/dev/null
ctl POST tables '{"name": "herd", "buckets": 4, "rows_per_second": 200}' >/dev/null
sleep 1
row="SELECT ok, passes, polls, coalesce(message, '') FROM lancelsm_checkpoint('lance', ARRAY['herd'])"
preload=$(psqlq -Atc "SELECT current_setting('shared_preload_libraries') <> ''")

# figures LABEL SECONDS: "LABEL requests stats compact flushes seconds
# max-requests-per-session-in-1s" from the emulator's counts and log
figures() {
	local counts
	counts=$(ctl GET 'counts?table=herd')
	echo "$1 $(echo "$counts" | pyutil get total) $(echo "$counts" | pyutil get get_lsm_stats)" \
		"$(echo "$counts" | pyutil get compact_lsm) $(echo "$counts" | pyutil get flush_lsm)" \
		"$(printf '%.2f' "$2") $(ctl GET 'log?table=herd' | pyutil maxconn)"
}

report "== herd — $(date -u +%F\ %H:%M)Z, $(nproc) CPUs, preload: $preload" \
	"   $n sessions, 4-bucket table, writer 200 rows/s, emulator passes 300 ms, pool 2" \
	"   columns: requests stats compact flushes seconds max-requests-per-session-in-1s"
for r in $(seq 1 "$reps"); do
	ctl POST log/reset >/dev/null
	t0=$(date +%s.%N)
	psqlq -Atc "$row" >"$out/single.txt"
	single=$(figures single "$(awk "BEGIN { print $(date +%s.%N) - $t0 }")")
	ctl POST log/reset >/dev/null
	# the barrier: one transaction holds the lock until all n sessions
	# wait for it (at most 30 s), and its commit releases them at once
	PGOPTIONS='-c statement_timeout=30s' psqlq -c "DO \$\$BEGIN PERFORM pg_advisory_xact_lock(4242);
		WHILE (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted) < $n
		LOOP PERFORM pg_sleep(0.01); END LOOP; END\$\$" &
	holder=$!
	for _ in $(seq 1 500); do # until it holds the lock (at most 5 s)
		[ "$(psqlq -Atc "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")" = 1 ] && break
		sleep 0.01
	done
	pids=()
	for i in $(seq 1 "$n"); do
		PGOPTIONS='-c statement_timeout=120s' timeout 180 psql -X -At -v ON_ERROR_STOP=1 \
			-c "SELECT pg_advisory_lock_shared(4242) IS NULL" -c "$row" >"$out/session$i.txt" 2>&1 &
		pids+=($!)
	done
	wait "$holder"
	t0=$(date +%s.%N)
	for p in "${pids[@]}"; do wait "$p" || true; done
	herd=$(figures herd "$(awk "BEGIN { print $(date +%s.%N) - $t0 }")")
	led=$(cat "$out"/session*.txt | grep -c '^t|[0-9]*|[1-9]' || true)
	joined=$(cat "$out"/session*.txt | grep -c 'joined the checkpoint' || true)
	notok=$(cat "$out"/session*.txt | grep -vc -e '^t|' -e '^f$' || true)
	report "  round $r: $single" "  round $r: $herd  (led $led, joined $joined, not ok $notok)"
	python3 - "$single" "$herd" <<'PY' | tee -a "$BENCH_WORK/results.txt"
import sys
s, h = sys.argv[1].split()[1:], sys.argv[2].split()[1:]
req, st, co, fl, sec = (float(x) for x in s[:5])
hreq, hst, hco, hfl, hsec = (float(x) for x in h[:5])
print(f"  round ratios herd/single: requests {hreq / req:.2f}x, stats {hst / st:.2f}x "
      f"(goal: {hst:.0f} <= 2 x {st:.0f} + 16 = {2 * st + 16:.0f}: {'met' if hst <= 2 * st + 16 else 'NOT met'}), "
      f"compact {hco / max(co, 1):.2f}x, seconds {hsec / sec:.2f}x")
PY
done
