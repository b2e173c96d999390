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
			echo "SELECT lancelsm_add_table('lance', '$t', max_l0_generations => 4, max_wal_lag => 50);"
		done
		for t in "${quiet[@]}"; do
			echo "SELECT lancelsm_add_table('lance', '$t', max_memtable_rows => 1000, max_checkpoint_age => '$((5 * tick_s)) seconds');"
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
