#!/usr/bin/env bash
# bench/decode.sh: bench/results.md goal 5 (decode).  lancelsm_stats on a table
# of BENCH_BUCKETS buckets (default 10,000) × BENCH_GENS L0 generations each
# (default 10: 100,000 generations), created through the control API.
# Prints the body size, the server's own time for the request (emulator
# log), lancelsm_stats elapsed (and minus the server time), and the backend's
# peak RSS growth (/proc/<pid>/status VmHWM before and after) against the
# body size (goal: <= 0.5 s, <= 4x the body).  The timed calls are answered
# with the body canned (queued fault), so the server's time is small.
# Run as root: bash bench/decode.sh   (bench/run.sh runs every bench)
source "$(dirname "$0")/lib.sh"
if [ -z "${BENCH_INNER:-}" ]; then outer_run "$bench/decode.sh"; exit; fi

buckets=${BENCH_BUCKETS:-10000}
gens=${BENCH_GENS:-10}
out=$BENCH_WORK/decode
mkdir -p "$out"
setup_server
ctl POST reset >/dev/null
t0=$(date +%s.%N)
ctl POST tables "{\"name\": \"big\", \"buckets\": $buckets}" >/dev/null
ctl POST tables/big/generations "{\"count\": $gens, \"rows\": 1}" >/dev/null
made=$(python3 -c "import time; print('%.1f' % (time.time() - $t0))")
# the body lancelsm will read, fetched once with curl
curl -sS --max-time 120 -o "$out/body.json" -X POST -H "x-api-key: $BENCH_KEY" \
	-H 'content-type: application/json' -d '{"include_generation_rows": false}' \
	"$EMU/v1/table/big/get_lsm_stats/"
body=$(stat -c %s "$out/body.json")
ngen=$(python3 -c 'import json,sys; print(sum(len(b["generations"]) for b in json.load(sys.stdin)["lsm_stats"]["buckets"]))' <"$out/body.json")
ctl POST log/reset >/dev/null
# the two timed calls get that body canned (a queued fault with "body"), so
# the emulator only sends bytes and the elapsed time is mostly lancelsm's
python3 -c 'import json,sys; print(json.dumps({"table": "big", "route": "get_lsm_stats", "status": 200, "count": 2, "body": open(sys.argv[1]).read()}))' \
	"$out/body.json" >"$out/fault.json"
curl -sS --max-time 60 -o /dev/null -X POST -H 'content-type: application/json' --data-binary @"$out/fault.json" "$EMU/_emulator/faults"

cat >"$out/decode.sql" <<SQL
SET statement_timeout = '120s';
SELECT pg_backend_pid() AS pid \gset
\setenv BENCH_PID :pid
\! python3 $bench/util.py hwm \$BENCH_PID > $out/hwm0; python3 $bench/util.py cpu \$BENCH_PID > $out/cpu0
\timing on
SELECT count(*) AS buckets, sum(l0_generations) AS generations FROM lancelsm_stats('lance', 'big');
\timing off
\! python3 $bench/util.py hwm \$BENCH_PID > $out/hwm1; python3 $bench/util.py cpu \$BENCH_PID > $out/cpu1
\timing on
SELECT count(*) AS buckets, sum(l0_generations) AS generations FROM lancelsm_stats('lance', 'big');
\timing off
\! python3 $bench/util.py hwm \$BENCH_PID > $out/hwm2; python3 $bench/util.py cpu \$BENCH_PID > $out/cpu2
SQL
rc=0
psqlq -At -f "$out/decode.sql" >"$out/decode.out" 2>"$out/decode.err" || rc=$?
mapfile -t ms < <(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$out/decode.out")
report "== stats decode (goal 5) — $(date -u +%F\ %H:%M)Z, $(nproc) CPUs" \
	"table: $buckets buckets x $gens L0 generations = $ngen generations (made in $made s); body $body bytes ($(python3 -c "print('%.1f' % ($body / 1048576))") MiB)"
if [ "$rc" != 0 ] || [ "${#ms[@]}" -lt 2 ]; then
	report "lancelsm FAILED (psql exit $rc): $(grep -v '^\s*$' "$out/decode.err" | head -3 | tr '\n' ' ')"
	exit 0
fi
rows=$(grep '|' "$out/decode.out" | head -1)
server_ms=$(ctl GET 'log?table=big&route=get_lsm_stats' | python3 -c 'import json,sys; print(" ".join(str(r["ms"]) for r in json.load(sys.stdin)["requests"]))')
read -r h0 _ <"$out/hwm0"; read -r h1 _ <"$out/hwm1"; read -r h2 _ <"$out/hwm2"
s1=${server_ms%% *}; s2=${server_ms##* }
report "lancelsm_stats rows:           $rows (buckets|generations)" \
	"elapsed (1st, 2nd call):       ${ms[0]} ms, ${ms[1]} ms; the server's own time: $server_ms ms" \
	"elapsed minus server time:     $(python3 -c "print('%.0f ms, %.0f ms' % (${ms[0]} - $s1, ${ms[1]} - $s2))") (goal <= 500 ms)" \
	"backend VmHWM:                 $h0 kB before, $h1 kB after the 1st call, $h2 kB after the 2nd" \
	"backend CPU (1st, 2nd call):   $(read -r _ c0 <"$out/cpu0"; read -r _ c1 <"$out/cpu1"; read -r _ c2 <"$out/cpu2"; python3 -c "print('%.0f ms, %.0f ms' % (($c1 - $c0) / 1e6, ($c2 - $c1) / 1e6))") (schedstat: less noisy than elapsed on a loaded machine)" \
	"peak growth / body size:       $(python3 -c "print('%.2f' % (($h1 - $h0) * 1024 / $body))")x (goal <= 4x)"
