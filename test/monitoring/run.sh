#!/usr/bin/env bash
# test/monitoring/run.sh: the monitoring files of contrib/ against the real
# programs.  Debian's postgres_exporter runs contrib/postgres_exporter's
# queries against a throwaway PostgreSQL 15 cluster with lancelsm
# preloaded; Debian's Prometheus scrapes it every second and evaluates a
# copy of contrib/prometheus/lancelsm-rules.yaml whose every "for:" is 0s.
# Asserted through Prometheus's HTTP API:
#   - the metrics of both tables, with their exact label sets and values
#     (L0, buckets, errors, the last checkpoints' outcomes, the SQLSTATE
#     of the failing one, the durable outcomes of lancelsm_status: the due
#     run's successful stats read of orders is its last action, so both
#     are ok there; lancelsm_info's maxima and the counters in use);
#   - scrapes send LanceDB nothing: once lancelsm_checkpoint_due() has
#     read both tables' stats, the emulator's request count stays the same
#     over 3 more scrapes while the table metrics keep their exact values
#     (they come from lancelsm_last_stats), and each has a stats age;
#   - LancelsmTableFailing fires for the failing table, and for it alone;
#   - a schema named after the exporter's role, holding empty views named
#     as lancelsm_status and lancelsm_info, changes none of the metrics;
#   - every query of contrib/grafana/lancelsm-dashboard.json (its
#     variable's "$server" as "All", ".*") returns data, and its variable's
#     label_values() finds the server.
#
# The cluster: database "lsm", server "emu" pointing at an emulator of its
# own (scripts/regress-emulator.sh), two declared tables: "events"
# (healthy; 3 L0 generations added to each of its 2 buckets after its
# checkpoint) and "orders" (1 bucket; once checkpointed, then every
# flush_lsm answers 409, as for a table being dropped: its next
# checkpoint fails with 55006, its stats still read).
#
# Needs lancelsm installed in the host's PostgreSQL 15 (PG_CONFIG), or,
# with MONITORING_BUILD=1, builds a copy of this tree and installs it into
# a scratch DESTDIR that the cluster reads through Debian's
# extension_destdir (scripts/lab.sh, as scripts/sqlsmith.sh).  Needs the packages
# prometheus and prometheus-postgres-exporter (scripts/deps.sh), python3
# and curl.  Run as root (the cluster runs as postgres).  Everything
# listens on 127.0.0.1 or a Unix socket in a temporary directory, on ports
# the OS picked; every process is bounded by MONITORING_TIMEOUT seconds
# (default 300) and stopped at the end, and every wait polls for its event
# until that deadline.  Prints each check and the time taken; exit status
# 0 when all pass, 1 otherwise, 2 when a program is missing.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
limit=${MONITORING_TIMEOUT:-300}
pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
bindir=$("$pg_config" --bindir)
key=lsm-monitoring-key-8c2e
exporter=/usr/bin/prometheus-postgres-exporter
start=$SECONDS
deadline=$((SECONDS + limit))

[ "$(id -u)" = 0 ] || { echo "test/monitoring/run.sh: run as root" >&2; exit 1; }
for prog in "$exporter" prometheus curl python3; do
	command -v "$prog" >/dev/null || {
		echo "test/monitoring/run.sh: $prog is missing (scripts/deps.sh installs it)" >&2
		exit 2
	}
done

work=$(mktemp -d /tmp/lancelsm-monitoring.XXXXXX)
chmod 755 "$work"
chown postgres: "$work"
pids=()
. "$here/scripts/lab.sh"
as_postgres() { lab_as_postgres "$1"; }
pgport=$lab_port
cleanup() {
	local pid
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
	lab_stop "$work" "$pg_config"
	wait 2>/dev/null
	# MONITORING_KEEP=1 keeps the logs
	if [ "${MONITORING_KEEP:-0}" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "test/monitoring/run.sh: FAILED: $*"
	for log in exporter.log prometheus.log; do
		echo "--- the end of $log"
		tail -15 "$work/$log" 2>/dev/null
	done
	echo "monitoring test: FAILED ($((SECONDS - start)) s)"
	exit 1
}

# free_port: a loopback port the OS has just handed out and taken back
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# alive: fail at once when the exporter or Prometheus has ended
alive() {
	local pid
	for pid in "${pids[@]}"; do
		kill -0 "$pid" 2>/dev/null || fail "a program ended early (process $pid)"
	done
}

# wait_for WHAT CMD...: run CMD until it succeeds or the deadline passes
wait_for() {
	local what=$1; shift
	until "$@"; do
		[ $SECONDS -lt $deadline ] || fail "timed out waiting for $what"
		alive
		sleep 0.5
	done
}

"$here/scripts/regress-emulator.sh" "$work" "$key" --max-lifetime "$limit" || exit 1
emuport=$(cat "$work/emulator.port")

if [ "${MONITORING_BUILD:-0}" = 1 ]; then
	lab_build "$work" "$pg_config" || exit 1
fi
lab_cluster "$work" "$pg_config" "$lab_lancelsm_conf
max_connections = 20" || exit 1

psql() {
	as_postgres "PGOPTIONS='-c statement_timeout=60s -c client_min_messages=error' '$bindir/psql' -X -q -At -v ON_ERROR_STOP=1 -h '$work' -p $pgport -U postgres -d ${2:-lsm} -c $(printf %q "$1")"
}
emu() {
	curl -sS -f -m 10 -X POST -H 'Content-Type: application/json' \
		"http://127.0.0.1:$emuport/_emulator/$1" -d "$2" >/dev/null
}
# emu_requests: every request the emulator has answered since it started
emu_requests() {
	curl -sS -f -m 10 "http://127.0.0.1:$emuport/_emulator/counts" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["total"])'
}

psql 'CREATE DATABASE lsm' postgres || exit 1
emu tables '{"name": "orders", "buckets": 1}' || fail "the emulator refused table orders"
psql "
CREATE EXTENSION lancelsm;
CREATE SERVER emu FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$emuport');
CREATE USER MAPPING FOR PUBLIC SERVER emu OPTIONS (api_key '$key');
SELECT lancelsm_add_table('emu', 'events', validate => false);
SELECT lancelsm_add_table('emu', 'orders', validate => false);
" >/dev/null || fail "setting up database lsm"

# check NAME GOT WANT: one line per check, fail at the first difference
check() {
	if [ "$2" = "$3" ]; then
		echo "ok: $1"
	else
		fail "$1: got
$2
want
$3"
	fi
}

# both tables checkpointed (so that both enter the history), then every
# flush of orders refused, and its next checkpoint fails
got=$(psql "SELECT table_name || ' ' || ok FROM lancelsm_checkpoint_all() ORDER BY table_name COLLATE \"C\"")
check "first checkpoints" "$got" "events true
orders true"
emu faults '{"table": "orders", "route": "flush_lsm", "status": 409, "count": -1,
	"json": {"code": 5, "error": "table orders is being dropped"}}' || fail "queueing the fault"
got=$(psql "SELECT table_name || ' ' || ok || ' ' || coalesce(sqlstate, '-')
	FROM lancelsm_checkpoint_all() ORDER BY table_name COLLATE \"C\"")
check "second checkpoints" "$got" "events true -
orders false 55006"
emu tables/events/generations '{"count": 3}' || fail "adding generations to events"
# the due job reads both tables' stats (neither has a threshold: no
# action); the exporter reads what it read, and sends nothing
got=$(psql "SELECT string_agg(table_name || ' ' || ok || ' ' || coalesce(action, '-'), ', '
	ORDER BY table_name COLLATE \"C\") FROM lancelsm_checkpoint_due()")
check "the due run reads the stats" "$got" "events true none, orders true none"
requests_before=$(emu_requests) || fail "reading the emulator's request count"

# a schema named after the exporter's role, first on its search_path
# ("$user"), with empty views named as lancelsm's: the queries name
# lancelsm's schema, so the metrics below still come from lancelsm
psql "
CREATE SCHEMA postgres;
CREATE VIEW postgres.lancelsm_status AS SELECT * FROM public.lancelsm_status WHERE false;
CREATE VIEW postgres.lancelsm_info AS SELECT * FROM public.lancelsm_info WHERE false;
" >/dev/null || fail "creating the shadowing schema"

# the exporter: this database only, over the Unix socket
export_port=$(free_port)
DATA_SOURCE_NAME="host=$work port=$pgport user=postgres dbname=lsm sslmode=disable" \
	timeout "$limit" "$exporter" --web.listen-address="127.0.0.1:$export_port" \
	--extend.query-path="$here/contrib/postgres_exporter/lancelsm.yaml" \
	--disable-default-metrics --disable-settings-metrics \
	--no-collector.database --no-collector.bgwriter >"$work/exporter.log" 2>&1 &
pids+=($!)

# Prometheus: scrapes and evaluates every second, the rules with "for: 0s"
sed -E 's/^([[:space:]]*for:).*/\1 0s/' "$here/contrib/prometheus/lancelsm-rules.yaml" >"$work/rules.yaml"
[ "$(grep -c 'for: 0s' "$work/rules.yaml")" = "$(grep -c 'for:' "$here/contrib/prometheus/lancelsm-rules.yaml")" ] ||
	fail "rewriting the rules' for: clauses"
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: ['$work/rules.yaml']
scrape_configs:
  - job_name: postgres
    static_configs:
      - targets: ['127.0.0.1:$export_port']
EOF
prom_port=$(free_port)
prom="http://127.0.0.1:$prom_port"
timeout "$limit" prometheus --config.file="$work/prometheus.yml" \
	--web.listen-address="127.0.0.1:$prom_port" --storage.tsdb.path="$work/tsdb" >"$work/prometheus.log" 2>&1 &
pids+=($!)

# query EXPR: an instant query's result, one line per series, sorted:
# the labels as k=v (but __name__, instance, job, and server: the
# exporter's own label, its host and port), then the value
query() {
	curl -sS -f -m 5 -G "$prom/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
		python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "success"
rows = []
for r in d["data"]["result"]:
    labels = ",".join("%s=%s" % kv for kv in sorted(r["metric"].items())
                      if kv[0] not in ("__name__", "instance", "job", "server"))
    rows.append("%s %s" % (labels, r["value"][1]))
print("\n".join(sorted(rows)))'
}

# settles NAME EXPR WANT: poll until EXPR's result is WANT, then check it
settles() {
	local got
	until got=$(query "$2") && [ "$got" = "$3" ]; do
		[ $SECONDS -lt $deadline ] || check "$1" "${got:-}" "$3"
		alive
		sleep 0.5
	done
	check "$1" "$got" "$3"
}

wait_for "Prometheus to answer" curl -s -f -m 2 -o /dev/null "$prom/-/ready"
settles "the exporter is scraped" 'up{job="postgres"}' " 1"

# the metrics, with their labels and values
ev='foreign_server=emu,table_name=events'
or='foreign_server=emu,table_name=orders'
settles "lancelsm_table_l0_generations" lancelsm_table_l0_generations "$ev 6
$or 0"
settles "lancelsm_table_buckets" lancelsm_table_buckets "$ev 2
$or 1"
settles "lancelsm_table_error" lancelsm_table_error "$ev 0
$or 0"
settles "lancelsm_table_lsm_enabled" lancelsm_table_lsm_enabled "$ev 1
$or 1"
settles "lancelsm_checkpoint_last_ok" lancelsm_checkpoint_last_ok "database=lsm,$ev 1
database=lsm,$or 0"
settles "lancelsm_checkpoint_error_failing" lancelsm_checkpoint_error_failing "database=lsm,foreign_server=emu,sqlstate=55006,table_name=orders 1"
settles "lancelsm_progress_running" lancelsm_progress_running "database=lsm,$ev 0
database=lsm,$or 0"
settles "lancelsm_status_last_ok" lancelsm_status_last_ok "$ev 1
$or 1"
settles "a last checkpoint time for each table" 'count(lancelsm_status_last_checkpoint_seconds > 0)' " 2"
settles "lancelsm_info_max_history_entries" lancelsm_info_max_history_entries " 1000"
settles "lancelsm_info_counter_entries" lancelsm_info_counter_entries " 2"
settles "lancelsm_info_max_counter_entries" lancelsm_info_max_counter_entries " 1000"
settles "lancelsm_info_counter_evicted" lancelsm_info_counter_evicted " 0"
settles "lancelsm_info_history_entries" lancelsm_info_history_entries " 2"
settles "a duration for each last checkpoint" 'count(lancelsm_checkpoint_last_elapsed_seconds >= 0)' " 2"
settles "a stats age for each table" 'count(lancelsm_table_stats_age_seconds >= 0)' " 2"

# 3 more scrapes (Prometheus counts them in up's samples): not one
# request reached the emulator since the due run, and the values stay
scrapes=$(query 'count_over_time(up{job="postgres"}[1h])') || fail "counting scrapes"
scrapes=${scrapes# }
settles "3 more scrapes" "count_over_time(up{job=\"postgres\"}[1h]) >= bool $((scrapes + 3))" " 1"
check "no request per scrape" "$(emu_requests)" "$requests_before"
settles "lancelsm_table_l0_generations after the scrapes" lancelsm_table_l0_generations "$ev 6
$or 0"
check "no request per scrape, values read again" "$(emu_requests)" "$requests_before"

# the alerts: TableFailing for orders only, and no other alert at all
alerts() {
	curl -sS -f -m 5 "$prom/api/v1/alerts" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("\n".join(sorted("%s %s %s/%s" % (a["labels"]["alertname"], a["state"],
                   a["labels"].get("foreign_server", "-"), a["labels"].get("table_name", "-"))
                   for a in d["data"]["alerts"])))'
}
until got=$(alerts) && [ "$got" = "LancelsmTableFailing firing emu/orders" ]; do
	[ $SECONDS -lt $deadline ] || break
	alive
	sleep 0.5
done
check "alerts firing" "${got:-}" "LancelsmTableFailing firing emu/orders"

# the dashboard: its variable, then every query of its panels
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("\n".join(v["query"]["query"] for v in d["templating"]["list"]))' \
	"$here/contrib/grafana/lancelsm-dashboard.json")
check "the dashboard's variable" "$got" "label_values(lancelsm_table_l0_generations, foreign_server)"
got=$(curl -sS -f -m 5 -G "$prom/api/v1/label/foreign_server/values" \
	--data-urlencode 'match[]=lancelsm_table_l0_generations' |
	python3 -c 'import json, sys; print(" ".join(json.load(sys.stdin)["data"]))')
check "label_values(lancelsm_table_l0_generations, foreign_server)" "$got" "emu"
exprs=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))
for p in panels(d["panels"]):
    for t in p.get("targets", []):
        print(t["expr"].replace("$server", ".*"))' "$here/contrib/grafana/lancelsm-dashboard.json") ||
	fail "reading the dashboard"
n=0
while IFS= read -r expr; do
	got=$(query "$expr") || fail "dashboard query $expr: Prometheus refused it"
	[ -n "$got" ] || fail "dashboard query $expr: no data"
	echo "ok: dashboard query $expr: $(echo "$got" | wc -l) series"
	n=$((n + 1))
done <<<"$exprs"
[ $n = 9 ] || fail "the dashboard has $n queries, 9 expected"

echo "monitoring test: ok ($((SECONDS - start)) s)"
