#!/usr/bin/env bash
# bench/due.sh: checkpoint when due.  20 declared tables, 2 hot (2 buckets,
# an emulator writer of 100 rows/s each) and 18 quiet (1 bucket, a trickle
# of 0.5 rows/s), over 10 simulated minutes.  Time is compressed: one
# minute is one tick of BENCH_DUE_TICK_S real seconds (default 5), the
# writers run in real time all along, and the job runs once per tick:
#  * "all": SELECT lancelsm_checkpoint_all()  (every table, drained)
#  * "due": SELECT lancelsm_checkpoint_due()  (only past a threshold)
# A tick starts on its schedule or, when the previous call ran past it, at
# once (as pg_cron starts a late run).  Thresholds (used by "due" only):
# hot tables max_l0_generations 4, max_wal_lag 50 (~2.5 s of writes);
# quiet tables max_memtable_rows 1000, max_checkpoint_age 5 ticks
# (5 simulated minutes, i.e. 5 x BENCH_DUE_TICK_S real seconds: the age is
# measured on the real clock).  Reported for each: requests sent (all
# routes, all tables), L0 generations created (seals, by flush or
# auto-seal), the largest L0 seen on each hot table (polled every 100 ms),
# and the ratios all / due.
#
# Then "many": lancelsm_checkpoint_due() once over BENCH_TABLES declared
# tables (default 10,000; emulator tables k1..kN of 1 bucket and 1 L0
# generation, BENCH_PERMITS compaction permits, 50), BENCH_DUE_HOT of them
# due (default 100, every N/HOT-th) and the others quiet
# (max_l0_generations 1).  Of the due tables, the odd ones have
# max_l0_generations 0 (action: one compaction trigger) and the even ones
# max_checkpoint_age 1 second, overdue by the time the call runs (action:
# a trigger-only checkpoint, which claims a progress entry, up to 32 per
# call, and writes the history).
# Reported: stats reads per quiet table (min, max; goal exactly 1), the
# due tables' requests by route, rows not ok, elapsed inside the backend
# against what the emulator needs for the same requests at its own rate
# (bench/util.py rate, 32 keep-alive clients, measured in the same run;
# goal <= 1.2 x), backend CPU, and the peak growth of the backend's
# private memory (RssAnon, sampled every 10 ms; goal <= 40 MB) with the
# shared memory it touched (RssShmem) beside it, the progress entries the
# call skipped and the history rows, and the shared memory lancelsm
# allocated (pg_shmem_allocations) with the settings that size it.
# Then, with BENCH_DUE_HISTORY=1 (off by default: it takes minutes at
# 10,000 tables), lancelsm_checkpoint_all() once over the
# same declared tables with passes of 20 ms, for progress and history at
# that scale: the progress entries the call skipped (goal: all but 32),
# the history rows (goal: min(tables, lancelsm.max_history_entries)) and
# the shared memory the backend touched (RssShmem).  BENCH_PG_OPTS=
# "lancelsm.max_history_entries=10000" sizes the history for all.
# Then "plan" (not in the default: it takes about 20 minutes at 60 runs):
# lancelsm_checkpoint_due() with lancelsm.due_plan off (every table read,
# as 1.4 did) and on (a table read only when its planned read is due),
# one mode after the other in the same bench run, over
# BENCH_DUE_PLAN_TABLES declared tables (100,000) for BENCH_DUE_PLAN_RUNS
# runs of a simulated minute each (60), in BENCH_SLICES slices (4) at
# BENCH_RTT_MS (default here 50 ms), pool BENCH_PERMITS (50): 98,900
# quiet tables (q1..: no writes), BENCH_DUE_PLAN_HOT hot ones (h1..,
# 1,000: each its own steady rate, 0.25 to 4 L0 generations a minute) and
# BENCH_DUE_PLAN_TURNING turning ones (w1.., 100: quiet until a run drawn
# at random, then 1 to 4 generations a minute), every table 1 bucket and
# max_l0_generations 8, max_read_interval the setting's default.  The
# draw is seeded (BENCH_SEED, else a new one, reported) and the same for
# both modes (bench/due_plan.py).
# Simulated minutes, honestly: the emulator's writers run on a manual
# clock (POST /_emulator/writers), which the bench advances by 60 s before
# each run (POST /_emulator/advance: what they would have written in that
# minute, in 1 s ticks); runs start on a schedule of their own, each 2 s
# after the previous one's passes drained, and just before run k every
# timestamp that lancelsm keeps in its tables (every timestamptz column
# of the relations lancelsm_*: added_at, last_checkpoint_at, the plan's
# next_read_at and plan_read_at, ...) is moved by (start of run k - start
# of run k-1) - 60 s, so that lancelsm, planning on now(), sees its runs
# start exactly a minute apart.  Nothing in the C code knows it is
# benched.  A run's own time is not compressed (a stamp written 5 s into
# a run is 55 s old at the next), as it would not be at a real minute.
# "off" costs a read per declared table per run: BENCH_DUE_PLAN_OFF_RUNS
# (default all) of its runs are made with every table declared; after
# them the quiet tables are undeclared, and "off" goes on over the hot and
# turning tables only (their decisions in "off" depend on their own reads
# alone), so that their actions are compared over every run.
# Reported: requests per run (off over its full runs, on over all),
# stats reads per quiet table per run, per hot table the runs between
# off's action and on's and the largest L0 seen at action on / off, per
# turning table how much later on acts than off against the
# max_read_interval, and BENCH_DUE_PLAN_ONE_RUNS more runs "on" (2) in
# one backend without slices (their time, at the same round trip).
# BENCH_DUE_SCENARIOS="ticks many" (default) picks the scenarios;
# BENCH_DUE_PERF=1 profiles the backend during the call (perf record -g)
# and prints the symbols with the most self time.
# Run as root: bash bench/due.sh   (bench/run.sh runs every bench)
source "$(dirname "$0")/lib.sh"
if [ -z "${BENCH_INNER:-}" ]; then BENCH_NO_SDK=1 outer_run "$bench/due.sh"; exit; fi

ticks=${BENCH_DUE_TICKS:-10}
tick_s=${BENCH_DUE_TICK_S:-5}
hot=(hot1 hot2)
quiet=($(seq -f 'quiet%g' 1 18))
out=$BENCH_WORK/due
mkdir -p "$out"
setup_server

prepare() { # fresh emulator tables (writers start now) and declarations
	ctl POST reset >/dev/null
	for t in "${hot[@]}"; do
		ctl POST tables "{\"name\": \"$t\", \"buckets\": 2, \"rows_per_second\": 100}" >/dev/null
	done
	for t in "${quiet[@]}"; do
		ctl POST tables "{\"name\": \"$t\", \"buckets\": 1, \"rows_per_second\": 0.5}" >/dev/null
	done
	{
		echo "DELETE FROM lancelsm_table;"
		for t in "${hot[@]}"; do
			echo "SELECT lancelsm_add_table('lance', '$t', max_l0_generations => 4, max_wal_lag => 50, validate => false);"
		done
		for t in "${quiet[@]}"; do
			echo "SELECT lancelsm_add_table('lance', '$t', max_memtable_rows => 1000, max_checkpoint_age => '$((5 * tick_s)) seconds', validate => false);"
		done
	} | psqlq -o /dev/null
}

# strategy NAME FUNCTION: run the job once per tick; prints the figures
# "requests generations l0max-hot1 l0max-hot2 not-ok seconds"
strategy() {
	local name=$1 fn=$2 start t0 notok=0
	local stop=$out/$name.stop
	prepare
	ctl POST log/reset >/dev/null
	rm -f "$stop"
	pyutil l0max "$EMU" "$stop" "${hot[@]}" >"$out/$name.l0max" &
	local sampler=$!
	start=$(date +%s.%N)
	for k in $(seq 1 "$ticks"); do
		t0=$(python3 -c "import time; print(max(0.0, $start + $k * $tick_s - time.time()))")
		sleep "$t0"
		notok=$((notok + $(psqlq -At -c "SET statement_timeout = '60s'" \
			-c "SELECT count(*) FILTER (WHERE NOT ok) FROM $fn()" | tail -1)))
	done
	touch "$stop"
	wait "$sampler"
	ctl GET log >"$out/$name.log.json"
	echo "$(ctl GET counts | pyutil get total) $(pyutil generations "$EMU" "${hot[@]}" "${quiet[@]}") $(awk '{printf "%s ", $2}' "$out/$name.l0max")$notok $(python3 -c "import time; print('%.0f' % (time.time() - $start))")"
}

ratio() { python3 -c "print('%.1f' % ($1 / $2) if $2 else 'inf')"; }

# many: the scenario "many" above; prints its result lines
many() {
	local n=${BENCH_TABLES:-10000} hotn=${BENCH_DUE_HOT:-100} permits=${BENCH_PERMITS:-50}
	local step=$((n / hotn)) rate
	report "== checkpoint_due over $n declared tables — $(date -u +%F\ %H:%M)Z, $(nproc) CPUs" \
		"scenario: $n tables of 1 bucket and 1 L0 generation, $hotn due (half max_l0_generations 0: compact, half max_checkpoint_age 1 s: checkpoint) and $((n - hotn)) quiet (max_l0_generations 1), pool $permits"
	pyutil tables "$EMU" "$n" "$permits"
	{
		echo "DELETE FROM lancelsm_table;"
		for i in $(seq 1 "$n"); do
			if ((i % step != 0)); then
				echo "SELECT lancelsm_add_table('lance', 'k$i', max_l0_generations => 1, validate => false);"
			elif ((i / step % 2)); then
				echo "SELECT lancelsm_add_table('lance', 'k$i', max_l0_generations => 0, validate => false);"
			else
				echo "SELECT lancelsm_add_table('lance', 'k$i', max_l0_generations => 1, max_checkpoint_age => '1 second', validate => false);"
			fi
		done
	} | psqlq -o /dev/null
	rate=$(pyutil rate "$EMU" "$BENCH_KEY" 32 3 "$n")
	ctl POST log/reset >/dev/null
	rm -f "$out/many.stop" "$out/many.ready"
	cat >"$out/many.sql" <<SQL
SET statement_timeout = '600s';
SELECT pg_backend_pid() \\g $out/many.pid
SELECT lancelsm_checkpoint('lance', ARRAY[]::text[]);
SELECT lancelsm_checkpoint_history_reset();
SELECT 'skipped0', (SELECT progress_skipped FROM lancelsm_info);
\\! python3 $bench/util.py peak \$(cat $out/many.pid) $out/many.stop $out/many.ready > $out/many.peak & while [ ! -e $out/many.ready ]; do sleep 0.01; done
\\! python3 $bench/util.py cpu \$(cat $out/many.pid) > $out/many.cpu0; if [ "${BENCH_DUE_PERF:-0}" = 1 ]; then perf record -q -g -p \$(cat $out/many.pid) -o $out/many.perf.data 2>/dev/null & echo \$! > $out/many.perfpid; sleep 0.5; fi
WITH c AS MATERIALIZED (SELECT * FROM lancelsm_checkpoint_due()) SELECT 'result', count(*) FILTER (WHERE NOT ok), count(*) FILTER (WHERE due), count(*) FILTER (WHERE action <> 'none'), round(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000) FROM c;
\\! python3 $bench/util.py cpu \$(cat $out/many.pid) > $out/many.cpu1; touch $out/many.stop; [ ! -e $out/many.perfpid ] || kill -INT \$(cat $out/many.perfpid)
SELECT 'skipped', (SELECT progress_skipped FROM lancelsm_info);
SELECT 'history', count(*) FROM lancelsm_checkpoint_history;
SELECT 'shmem', name, allocated_size FROM pg_shmem_allocations WHERE name LIKE 'lancelsm%' ORDER BY name COLLATE "C";
SELECT 'setting', name, setting FROM pg_settings WHERE name IN ('lancelsm.max_progress_entries', 'lancelsm.max_history_entries') ORDER BY name COLLATE "C";
SQL
	psqlq -At -F ' ' -f "$out/many.sql" >"$out/many.out" 2>"$out/many.err" ||
		report "many: psql failed: $(head -3 "$out/many.err" | tr '\n' ' ')"
	touch "$out/many.stop"
	for _ in $(seq 1 200); do [ -s "$out/many.peak" ] && break; sleep 0.05; done
	ctl GET log >"$out/many.log.json"
	if [ -e "$out/many.perfpid" ]; then
		while kill -0 "$(cat "$out/many.perfpid")" 2>/dev/null; do sleep 0.1; done
		report "  perf (BENCH_DUE_PERF=1), self time by symbol:"
		perf report -q -i "$out/many.perf.data" --no-children --stdio -g none --percent-limit 2 2>/dev/null |
			grep -v '^$' | head -25 | tee -a "$BENCH_WORK/results.txt"
	fi
	python3 - "$out" "$n" "$step" "$rate" <<'PY' | tee -a "$BENCH_WORK/results.txt"
import collections, json, sys
out, n, step, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
lines = [l.split() for l in open(f"{out}/many.out") if l.strip()]
rows = {l[0]: l[1:] for l in lines}
shmem = ", ".join(f"{' '.join(l[1:-1])} {int(l[-1])} B" for l in lines if l[0] == "shmem")
settings = ", ".join(f"{l[1]} {l[2]}" for l in lines if l[0] == "setting")
notok, due, acted, ms = rows["result"]
reqs = json.load(open(f"{out}/many.log.json"))["requests"]
hot = {f"k{i}" for i in range(step, n + 1, step)}
quiet = collections.Counter({f"k{i}": 0 for i in range(1, n + 1) if f"k{i}" not in hot})
routes = collections.Counter()
for r in reqs:
    if r["table"] in hot:
        routes[r["route"]] += 1
    elif r["table"] in quiet and r["route"] == "get_lsm_stats":
        quiet[r["table"]] += 1
c0, c1 = (int(open(f"{out}/many.cpu{i}").read().split()[0]) for i in (0, 1))
a0, a1, s0, s1, samples = map(int, open(f"{out}/many.peak").read().split())
need_ms = len(reqs) / rate * 1000
print(f"checkpoint_due: {ms} ms = {float(ms) / need_ms:.2f} x what the emulator needs for its {len(reqs)} requests "
      f"at its own {rate:.0f} req/s ({need_ms:.0f} ms; goal <= 1.2); rows not ok {notok}, due {due}, acted on {acted}")
print(f"  stats reads per quiet table: min {min(quiet.values())} max {max(quiet.values())} (goal exactly 1); "
      f"due tables' requests: {', '.join(f'{k} {v}' for k, v in sorted(routes.items()))}")
print(f"  backend CPU {(c1 - c0) / 1000:.0f} ms; private memory (RssAnon) {a0 / 1024:.1f} MB, peak +{(a1 - a0) / 1024:.1f} MB "
      f"(goal <= 40); shared memory touched (RssShmem) {s0 / 1024:.1f} -> peak {s1 / 1024:.1f} MB; {samples} samples")
print(f"  progress entries the call skipped {int(rows['skipped'][0]) - int(rows['skipped0'][0])}, history rows {rows['history'][0]}; "
      f"requests on {len({r['conn'] for r in reqs})} connections over {(max(r['time'] for r in reqs) - min(r['time'] for r in reqs)) * 1000:.0f} ms")
print(f"  lancelsm shared memory: {shmem} ({settings})")
PY
}

# many_history: checkpoint_all over the tables "many" declared (see above)
many_history() {
	local n=${BENCH_TABLES:-10000}
	ctl POST config '{"pass_ms": 20}' >/dev/null
	rm -f "$out/hist.stop" "$out/hist.ready"
	cat >"$out/hist.sql" <<SQL
SET statement_timeout = '600s';
SELECT pg_backend_pid() \\g $out/hist.pid
SELECT lancelsm_checkpoint_history_reset();
SELECT 'skipped0', (SELECT progress_skipped FROM lancelsm_info);
\\! python3 $bench/util.py peak \$(cat $out/hist.pid) $out/hist.stop $out/hist.ready > $out/hist.peak & while [ ! -e $out/hist.ready ]; do sleep 0.01; done
WITH c AS MATERIALIZED (SELECT * FROM lancelsm_checkpoint_all()) SELECT 'result', count(*) FILTER (WHERE NOT ok), round(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000) FROM c;
\\! touch $out/hist.stop
SELECT 'skipped', (SELECT progress_skipped FROM lancelsm_info);
SELECT 'history', count(*), count(*) FILTER (WHERE ok) FROM lancelsm_checkpoint_history;
SELECT 'max', current_setting('lancelsm.max_history_entries');
SQL
	psqlq -At -F ' ' -f "$out/hist.sql" >"$out/hist.out" 2>"$out/hist.err" ||
		report "history: psql failed: $(head -3 "$out/hist.err" | tr '\n' ' ')"
	touch "$out/hist.stop"
	for _ in $(seq 1 200); do [ -s "$out/hist.peak" ] && break; sleep 0.05; done
	python3 - "$out" "$n" <<'PY' | tee -a "$BENCH_WORK/results.txt"
import sys
out, n = sys.argv[1], int(sys.argv[2])
rows = {l.split()[0]: l.split()[1:] for l in open(f"{out}/hist.out") if l.strip()}
a0, a1, s0, s1, samples = map(int, open(f"{out}/hist.peak").read().split())
skipped = int(rows["skipped"][0]) - int(rows["skipped0"][0])
print(f"checkpoint_all over the same {n} tables (20 ms passes): {rows['result'][1]} ms, rows not ok {rows['result'][0]}; "
      f"progress entries skipped {skipped} (all but {n - skipped}); history rows {rows['history'][0]} ({rows['history'][1]} ok) "
      f"with lancelsm.max_history_entries {rows['max'][0]}; RssShmem {s0 / 1024:.1f} -> peak {s1 / 1024:.1f} MB, "
      f"RssAnon peak +{(a1 - a0) / 1024:.1f} MB")
PY
}

# plan_run MODE RUN SLICES: one simulated minute's due run in SLICES
# backends at once (see "plan" above), lancelsm.due_plan off for MODE off,
# else on; its rows into $out/MODE.rRUN.sI.out
plan_run() {
	local mode=$1 k=$2 slices=$3 start i pids=() setting=on
	[ "$mode" != off ] || setting=off
	python3 "$bench/due_plan.py" turn "$EMU" "$out/plan.json" "$k"
	ctl POST advance '{"seconds": 60, "tick_ms": 1000}' >/dev/null
	start=$(python3 -c 'import time; print("%.3f" % (time.time() + 2))')
	[ -z "$plan_prev" ] || psqlq -o /dev/null -v delta="$(python3 -c "print('%.3f seconds' % ($start - $plan_prev - 60))")" \
		-f "$out/plan.shift.sql"
	plan_prev=$start
	echo "$start" >"$out/$mode.r$k.start"
	python3 -c "import time; time.sleep(max(0.0, $start - time.time()))"
	for i in $(seq 0 $((slices - 1))); do
		psqlq -At -F '|' -c "SET lancelsm.due_plan = $setting" -c "SET statement_timeout = '1200s'" -c "
WITH c AS MATERIALIZED (SELECT * FROM lancelsm_checkpoint_due(slice => $i, slices => $slices))
SELECT 'act', table_name, action, coalesce(reason, '') FROM c WHERE action <> 'none'
UNION ALL
SELECT 'sum', count(*)::text, count(*) FILTER (WHERE NOT ok)::text,
       count(*) FILTER (WHERE reason LIKE 'not read:%')::text || '|' || extract(epoch FROM statement_timestamp())
       || '|' || extract(epoch FROM clock_timestamp()) FROM c" >"$out/$mode.r$k.s$i.out" 2>"$out/$mode.r$k.s$i.err" &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || report "plan $mode run $k slice $i: psql failed: $(head -3 "$out/$mode.r$k.s$i.err" | tr '\n' ' ')"
	done
	drained
	# what the run history counted for the run's due calls (the emulator's
	# log is the reference)
	psqlq -At -F ' ' -c "SELECT sum(reads_sent), sum(reads_skipped) FROM lancelsm_run_history
		WHERE action = 'reads' AND finished_at >= to_timestamp($start)" >"$out/$mode.r$k.hist" 2>/dev/null || true
	python3 "$bench/due_plan.py" tally "$EMU" "$out" "$mode" "$k"
}

# plan_mode MODE: every declared table new, the emulator's hot and turning
# tables too, then the runs of MODE (off: its quiet tables undeclared
# after BENCH_DUE_PLAN_OFF_RUNS runs)
plan_mode() {
	local mode=$1 k
	python3 "$bench/due_plan.py" renew "$EMU" "$out/plan.json"
	psqlq -o /dev/null <<SQL
DELETE FROM lancelsm_table;
INSERT INTO lancelsm_table (server, table_name, max_l0_generations)
  SELECT 'lance', p || i, $plan_limit
    FROM (VALUES ('q', $plan_quiet), ('h', $plan_hot), ('w', $plan_turning)) v(p, c), generate_series(1, c) i;
VACUUM ANALYZE lancelsm_table;
SQL
	plan_prev=
	for k in $(seq 1 "$plan_runs"); do
		if [ "$mode" = off ] && [ "$k" = $((plan_off_runs + 1)) ]; then
			psqlq -o /dev/null -c "DELETE FROM lancelsm_table WHERE table_name LIKE 'q%'"
		fi
		plan_run "$mode" "$k" "${BENCH_SLICES:-4}"
	done
}

# plan: the scenario "plan" (see the head of the file)
plan() {
	local n=${BENCH_DUE_PLAN_TABLES:-100000} seed=${BENCH_SEED:-$RANDOM} rtt=${BENCH_RTT_MS:-0} bound t0
	plan_hot=${BENCH_DUE_PLAN_HOT:-1000} plan_turning=${BENCH_DUE_PLAN_TURNING:-100} plan_limit=8
	plan_runs=${BENCH_DUE_PLAN_RUNS:-60}
	plan_off_runs=${BENCH_DUE_PLAN_OFF_RUNS:-$plan_runs}
	plan_quiet=$((n - plan_hot - plan_turning))
	[ "$rtt" != 0 ] || rtt=50
	t0=$(date +%s)
	python3 "$bench/due_plan.py" setup "$EMU" "$out/plan.json" "$n" "$plan_hot" "$plan_turning" "$plan_runs" \
		"$seed" "${BENCH_PERMITS:-50}"
	ctl POST config "{\"rtt_ms\": $rtt}" >/dev/null
	# the UPDATE that moves lancelsm's stamps back (see "plan" above)
	psqlq -At >"$out/plan.shift.sql" <<'SQL'
SELECT format('UPDATE %s SET %s;', c.oid::regclass,
              string_agg(format('%1$I = %1$I + :''delta''::interval', a.attname), ', '))
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
 WHERE c.relkind = 'r' AND c.relname LIKE 'lancelsm%' AND c.relnamespace = 'public'::regnamespace
   AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid = 'timestamptz'::regtype
 GROUP BY c.oid;
SQL
	bound=$(psqlq -At -c "SELECT round(extract(epoch FROM current_setting('lancelsm.max_read_interval')::interval) / 60, 1)")
	report "== due runs planned (lancelsm.due_plan off and on) — $(date -u +%F\ %H:%M)Z, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" \
		"scenario: $n declared tables, $plan_quiet quiet, $plan_hot hot, $plan_turning turning (seed $seed), max_l0_generations $plan_limit, $plan_runs runs of a simulated minute in ${BENCH_SLICES:-4} slices at $rtt ms, pool ${BENCH_PERMITS:-50}, max_read_interval $bound min; off: every table declared for $plan_off_runs runs, then the hot and turning ones; stamps moved by: $(tr '\n' ' ' <"$out/plan.shift.sql")" \
		"  setup: $(($(date +%s) - t0)) s"
	for mode in off on; do
		t0=$(date +%s)
		plan_mode "$mode"
		report "  $mode: $plan_runs runs in $(($(date +%s) - t0)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
	done
	# more runs "on", in one backend
	for k in $(seq $((plan_runs + 1)) $((plan_runs + ${BENCH_DUE_PLAN_ONE_RUNS:-2}))); do
		plan_run one "$k" 1
	done
	python3 "$bench/due_plan.py" report "$out" "$out/plan.json" "$plan_limit" "$bound" "$plan_off_runs" |
		tee -a "$BENCH_WORK/results.txt"
	report "  per hot table (rate, actions and largest L0 at action in each mode): bench/results/latest-due-plan-tables.txt"
	cp "$out/plan_tables.txt" "$BENCH_WORK/plan_tables.txt"
}

# tick_runs: the scenario "ticks" (see the head of the file)
tick_runs() {
	report "== checkpoint when due — $(date -u +%F\ %H:%M)Z, $(nproc) CPUs" \
		"scenario: 2 hot tables (2 buckets, 100 rows/s) + 18 quiet (1 bucket, 0.5 rows/s), $ticks ticks of ${tick_s} s (1 tick = 1 simulated minute), --pass-ms 300, pool 2"
	read -r a_req a_gen a_h1 a_h2 a_bad a_s <<<"$(strategy all lancelsm_checkpoint_all)"
	read -r d_req d_gen d_h1 d_h2 d_bad d_s <<<"$(strategy due lancelsm_checkpoint_due)"
	actions=$(python3 - "$out/due.log.json" <<'PY'
import collections, json, sys
reqs = json.load(open(sys.argv[1]))["requests"]
c = collections.Counter((r["table"].rstrip("0123456789"), r["route"]) for r in reqs)
print(", ".join(f"{t} {r} {n}" for (t, r), n in sorted(c.items())))
PY
	)
	report "checkpoint_all every tick: requests $a_req, L0 generations created $a_gen, largest L0 hot1 $a_h1 / hot2 $a_h2, rows not ok $a_bad, ${a_s} s" \
		"checkpoint_due every tick: requests $d_req, L0 generations created $d_gen, largest L0 hot1 $d_h1 / hot2 $d_h2, rows not ok $d_bad, ${d_s} s" \
		"  due's requests by table kind and route: $actions" \
		"ratios all / due: requests $(ratio "$a_req" "$d_req")x, L0 generations $(ratio "$a_gen" "$d_gen")x, largest L0 hot1 $(ratio "$a_h1" "$d_h1")x, hot2 $(ratio "$a_h2" "$d_h2")x"
}

scenarios=${BENCH_DUE_SCENARIOS:-ticks many}
[[ " $scenarios " != *" ticks "* ]] || tick_runs
if [[ " $scenarios " == *" many "* ]]; then
	many
	[ "${BENCH_DUE_HISTORY:-0}" = 0 ] || many_history
fi
[[ " $scenarios " != *" plan "* ]] || plan
