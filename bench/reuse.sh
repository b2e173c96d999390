#!/usr/bin/env bash
# bench/reuse.sh: goals 4 (connection reuse) and 5 (CPU per call).
# 1,000 lancelsm_flush calls in one session (one DO loop) against the
# emulator, after a reset: TCP connections opened (/_emulator/counts
# "connections"), mean wall time per call, and the backend's CPU per call
# (/proc/<pid>/stat utime+stime and /proc/<pid>/schedstat, read before and
# after; the emulator's own time is another process and is not counted).
# Then ALTER SERVER and one more flush, ALTER USER MAPPING and one more: the
# cached connection must be dropped each time (one more connection each).
# Run as root: bash bench/reuse.sh   (bench/run.sh runs every bench)
source "$(dirname "$0")/lib.sh"
if [ -z "${BENCH_INNER:-}" ]; then outer_run "$bench/reuse.sh"; exit; fi

calls=${BENCH_FLUSH_CALLS:-1000}
out=$BENCH_WORK/reuse
mkdir -p "$out"
setup_server
ctl POST reset >/dev/null

cat >"$out/reuse.sql" <<SQL
SET statement_timeout = '300s';
SELECT pg_backend_pid() AS pid \gset
\setenv BENCH_PID :pid
\! python3 $bench/util.py cpu \$BENCH_PID > $out/cpu0
\timing on
DO \$\$ BEGIN FOR i IN 1..$calls LOOP PERFORM lancelsm_flush('lance', 'reuse'); END LOOP; END \$\$;
\timing off
\! python3 $bench/util.py cpu \$BENCH_PID > $out/cpu1
\! curl -sS '$EMU/_emulator/counts?table=reuse' > $out/counts1
ALTER SERVER lance OPTIONS (ADD connect_timeout '10');
SELECT lancelsm_flush('lance', 'reuse');
\! curl -sS '$EMU/_emulator/counts?table=reuse' > $out/counts2
ALTER USER MAPPING FOR CURRENT_USER SERVER lance OPTIONS (SET api_key '$BENCH_KEY');
SELECT lancelsm_flush('lance', 'reuse');
\! curl -sS '$EMU/_emulator/counts?table=reuse' > $out/counts3
SQL
rc=0
psqlq -At -f "$out/reuse.sql" >"$out/reuse.out" 2>"$out/reuse.err" || rc=$?
ms=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$out/reuse.out" | head -1)
report "== connection reuse (goal 4) and CPU per call (goal 5) — $(date -u +%F\ %H:%M)Z, $(nproc) CPUs"
if [ "$rc" != 0 ] || [ -z "$ms" ] || [ ! -s "$out/counts1" ]; then
	report "lancelsm FAILED (psql exit $rc): $(grep -v '^\s*$' "$out/reuse.err" | head -3 | tr '\n' ' ')"
	exit 0
fi
read -r us0 ns0 <"$out/cpu0"
read -r us1 ns1 <"$out/cpu1"
flushes=$(pyutil get flush_lsm <"$out/counts1")
conns=$(pyutil get connections <"$out/counts1")
conns2=$(pyutil get connections <"$out/counts2" 2>/dev/null || echo "?")
conns3=$(pyutil get connections <"$out/counts3" 2>/dev/null || echo "?")
report "$calls lancelsm_flush calls in one session: $flushes flush requests served" \
	"TCP connections opened:        $conns (goal <= 2)" \
	"after ALTER SERVER + 1 flush:  $conns2 connections (the cache must be dropped: expect $((conns + 1)))" \
	"after ALTER USER MAPPING + 1:  $conns3 connections (expect $((conns + 2)))" \
	"wall time:                     $ms ms total, $(python3 -c "print('%.1f' % ($ms * 1000 / $calls))") µs per call (includes the emulator's time)" \
	"backend CPU per call:          $(python3 -c "print('%.1f' % (($ns1 - $ns0) / 1000 / $calls))") µs (schedstat), $(python3 -c "print('%.1f' % (($us1 - $us0) / $calls))") µs (utime+stime, 10 ms ticks) (goal <= 150 µs)"
