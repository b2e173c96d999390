#!/usr/bin/env bash
# bench/many.sh: bench/results.md goal 3 (many tables).  BENCH_TABLES tables
# (default 50), 1 bucket and 1 L0 generation each, 300 ms passes, pool size
# = the number of tables (so the server could run every pass at once).
#  * one table alone: lancelsm_checkpoint(server, text);
#  * all of them one after another (what a pg_cron job does today);
#  * all of them in one call of lancelsm_checkpoint(server, text[]) when it
#    exists: elapsed / the single table's (goal <= 1.5), rows not ok,
#    connections opened.
# Run as root: bash bench/many.sh   (bench/run.sh runs every bench)
source "$(dirname "$0")/lib.sh"
if [ -z "${BENCH_INNER:-}" ]; then outer_run "$bench/many.sh"; exit; fi

n=${BENCH_TABLES:-50}
out=$BENCH_WORK/many
mkdir -p "$out"
setup_server
prepare() { # reset, n tables with 1 generation each, pool n
	ctl POST reset >/dev/null
	ctl POST pool "{\"size\": $n}" >/dev/null
	for i in $(seq 1 "$n"); do
		ctl POST tables "{\"name\": \"m$i\", \"buckets\": 1}" >/dev/null
		ctl POST "tables/m$i/generations" '{"count": 1, "rows": 10}' >/dev/null
	done
}
timed() { # timed SQL -> ms (or FAILED)
	local o
	if o=$(psqlq -At -c "SET statement_timeout = '120s'" -c '\timing on' -c "$1" 2>&1); then
		printf '%s\n' "$o" >"$out/last.out"
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$o" | tail -1
	else
		echo "FAILED: $(tr '\n' ' ' <<<"$o" | cut -c1-200)"
	fi
}
report "== many tables (goal 3) — $(date -u +%F\ %H:%M)Z, $(nproc) CPUs" \
	"scenario: $n tables, 1 bucket and 1 L0 generation each, --pass-ms 300, pool $n"
prepare
reps=${BENCH_MANY_REPS:-3}
singles=()
for _ in $(seq 1 "$reps"); do
	prepare
	singles+=("$(timed "SELECT lancelsm_checkpoint('lance', 'm1')")")
done
single=$(pyutil median "${singles[@]}")
report "one table alone:               median $single ms of $reps runs (${singles[*]})"
prepare
seq_ms=$(timed "SELECT count(lancelsm_checkpoint('lance', 'm' || i)) FROM generate_series(1, $n) i")
report "$n tables one after another:   $seq_ms ms (a loop of lancelsm_checkpoint(server, text))"
if psqlq -Atc "SELECT 1 FROM pg_proc WHERE proname = 'lancelsm_checkpoint' AND pronargs = 2 AND proargtypes[1] = 'text[]'::regtype" | grep -q 1; then
	arr="ARRAY[$(seq 1 "$n" | sed "s/.*/'m&'/" | paste -sd,)]"
	multis=() notoks=() connss=() perconn=
	for _ in $(seq 1 "$reps"); do
		prepare
		multis+=("$(timed "SELECT count(*) FILTER (WHERE NOT ok) FROM lancelsm_checkpoint('lance', $arr)")")
		notoks+=("$(grep -E '^[0-9]+$' "$out/last.out" | tail -1)")
		connss+=("$(ctl GET counts | pyutil get connections)")
		perconn+="$(ctl GET log | python3 -c 'import json,sys,collections,statistics; c=collections.Counter(r["conn"] for r in json.load(sys.stdin)["requests"]); v=sorted(c.values()); print("%d/%g/%d" % (v[0], statistics.median(v), v[-1]))') "
	done
	multi=$(pyutil median "${multis[@]}")
	report "$n tables in one call:         median $multi ms of $reps runs (${multis[*]}); / one table = $(python3 -c "print('%.2f' % (float('$multi') / float('$single')))" 2>/dev/null || echo '?') (goal <= 1.5)" \
		"  rows not ok: ${notoks[*]}; connections opened: ${connss[*]} (requests per connection min/median/max: $perconn)"
else
	report "$n tables in one call:          not measured: there is no lancelsm_checkpoint(text, text[]) yet"
fi
