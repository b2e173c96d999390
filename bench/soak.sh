#!/usr/bin/env bash
# bench/soak.sh: the soak.  10,000 mixed lancelsm calls
# (flush, compact, stats, stats ... LIMIT 1, generations, memtables,
# checkpoint of one and of two tables, and BEGIN ... EXCEPTION loops in
# plpgsql) from 8 concurrent sessions (pgbench -c 8 -t 1250 with
# bench/soak.pgbench), while a background injector queues random emulator
# faults (429, 503, 404, 421, hang ended by statement_timeout, malformed
# JSON, truncated JSON, close_mid_body).  Each backend samples its own RSS
# (/proc/self/status) and open file descriptors (/proc/self/fd) after its
# 1st call (warm-up), its 125th (about call 1,000 overall), its 625th and
# its 1,250th (call 10,000); the script prints the figures, whether they
# are flat within 5 %, and how many backends crashed (server log lines
# "terminated by signal").
#
# Benchmark-style, not part of CI: as root, from a clean clone, after
# `bash scripts/demo.sh` installed lancelsm.  It starts and stops its own
# emulator and throwaway cluster (scripts/lab.sh: initdb in a temp
# directory, as postgres)
# and is bounded in time (SOAK_TIMEOUT seconds for pgbench, default 900).
# Exit status: 0 when flat and no crash, 1 otherwise.
set -uo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$bench/.." && pwd)
key=lsm-soak-key-93d2
clients=8
per_client=1250
[ "$(id -u)" = 0 ] || { echo "bench/soak.sh: run as root" >&2; exit 1; }
bindir=$(pg_config --bindir)
for c in "$bindir/initdb" "$bindir/pg_ctl" pgbench psql python3 curl; do
	command -v "$c" >/dev/null || { echo "bench/soak.sh: $c not found; run scripts/demo.sh first" >&2; exit 1; }
done
[ -f "$(pg_config --pkglibdir)/lancelsm.so" ] ||
	{ echo "bench/soak.sh: lancelsm is not installed; run scripts/demo.sh first" >&2; exit 1; }

work=$(mktemp -d /tmp/lancelsm-soak.XXXXXX)
chmod 755 "$work"
. "$root/scripts/lab.sh"
cleanup() {
	touch "$work/stop"
	[ -f "$work/injector.pid" ] && kill "$(cat "$work/injector.pid")" 2>/dev/null
	lab_stop "$work" pg_config
	for p in "$work"/net-*.pid; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null; done
	wait 2>/dev/null
}
trap cleanup EXIT

# the emulator: two tables under write load, fast passes, so that
# checkpoints finish and the L0 keeps changing
lab_emulator "$work" --api-key "$key" --table soak:2:400 \
	--table soak2:1:200 --pass-ms 20 --pool 4 --seal-rows 100 --replay-ms 20 --quiet || exit 1
emu_port=$lab_emulator_port
server_port=$emu_port
# bench/soak_faults.sh: the same soak through the fault proxy
if [ "${SOAK_NETWORK_FAULTS:-0}" = 1 ]; then
	. "$bench/soak_faults.sh"
	soak_faults_start "$work" "$emu_port" || exit 1
	server_port=$soak_server_port
fi

# the throwaway cluster (the installed lancelsm)
lab_cluster "$work" pg_config || exit 1
lab_env "$work"
pgport=$lab_port
psqlq() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
psqlq -d postgres -c "CREATE DATABASE soak" || exit 1
psqlq -d soak <<SQL || exit 1
CREATE EXTENSION lancelsm;
CREATE SERVER lance FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$server_port');
CREATE USER MAPPING FOR PUBLIC SERVER lance OPTIONS (api_key '$key');
ALTER DATABASE soak SET lancelsm.backoff_base = '1ms';
ALTER DATABASE soak SET lancelsm.backoff_max = '20ms';
ALTER DATABASE soak SET lancelsm.poll_interval_min = '10ms';
ALTER DATABASE soak SET lancelsm.poll_interval_max = '50ms';
-- a hung server is ended by the statement timeout (57014)
ALTER DATABASE soak SET statement_timeout = '500ms';
CREATE SEQUENCE soak_calls;
CREATE UNLOGGED TABLE soak_outcome (kind text, outcome text);
CREATE UNLOGGED TABLE soak_sample (pid int, at_call int, global_call bigint,
  vmrss_kb bigint, rssanon_kb bigint, rssshmem_kb bigint, fds int,
  fds_not_relation int, fd_targets text);
-- soak_sample_self(): this backend's VmRSS, RssAnon and open fds
CREATE FUNCTION soak_sample_self(at_call int) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
  st text := pg_read_file('/proc/self/status');
  targets text;
BEGIN
  -- what the descriptors are (sockets, pipes, files), for the report
  CREATE TEMP TABLE IF NOT EXISTS soak_fd_list (line text);
  TRUNCATE soak_fd_list;
  EXECUTE format('COPY soak_fd_list FROM PROGRAM %L',
                 'ls -l /proc/' || pg_backend_pid() || '/fd | sed -n "s/.*-> //p" | sed "s/:\\[.*//" | sort | uniq -c | sed "s/^ *//"');
  SELECT string_agg(line, ', ' ORDER BY line) INTO targets FROM soak_fd_list;
  INSERT INTO soak_sample
  SELECT pg_backend_pid(), at_call, (SELECT last_value FROM soak_calls),
         substring(st FROM 'VmRSS:\s+(\d+)')::bigint,
         substring(st FROM 'RssAnon:\s+(\d+)')::bigint,
         substring(st FROM 'RssShmem:\s+(\d+)')::bigint,
         (SELECT count(*) FROM pg_ls_dir('/proc/self/fd')),
         (SELECT sum(split_part(line, ' ', 1)::int) FROM soak_fd_list
           WHERE line !~ '/(base|global|pg_wal)/'), targets;
END
\$\$;
-- soak_call(kind): one call; every error (the statement timeout included)
-- is caught and counted by SQLSTATE
CREATE FUNCTION soak_call(kind text) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE
  n int := coalesce(nullif(current_setting('soak.n', true), ''), '0')::int + 1;
  outcome text := 'ok';
  cnt bigint;
  r record;
BEGIN
  PERFORM set_config('soak.n', n::text, false);
  PERFORM nextval('soak_calls');
  BEGIN
    BEGIN
      CASE kind
      WHEN 'flush' THEN PERFORM lancelsm_flush('lance', 'soak');
      WHEN 'compact' THEN PERFORM lancelsm_compact('lance', 'soak');
      WHEN 'stats' THEN SELECT count(*) INTO cnt FROM lancelsm_stats('lance', 'soak');
      WHEN 'stats_limit1' THEN
        SELECT shard_id INTO r FROM lancelsm_stats('lance', 'soak') LIMIT 1;
      WHEN 'generations' THEN
        SELECT count(*) INTO cnt FROM lancelsm_generations('lance', 'soak', true);
      WHEN 'memtables' THEN SELECT count(*) INTO cnt FROM lancelsm_memtables('lance', 'soak');
      WHEN 'checkpoint' THEN PERFORM lancelsm_checkpoint('lance', 'soak');
      WHEN 'checkpoint_many' THEN
        SELECT count(*) INTO cnt FROM lancelsm_checkpoint('lance', ARRAY['soak', 'soak2']);
      WHEN 'exception_loop' THEN
        -- three rounds, each its own subtransaction; a fault ends the round
        FOR i IN 1..3 LOOP
          BEGIN
            PERFORM lancelsm_flush('lance', 'soak2');
            FOR r IN SELECT * FROM lancelsm_stats('lance', 'soak2') LIMIT 1 LOOP
              NULL;
            END LOOP;
          EXCEPTION WHEN OTHERS OR query_canceled THEN
            outcome := 'loop:' || SQLSTATE;
          END;
        END LOOP;
      END CASE;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
      outcome := SQLSTATE;
    END;
    INSERT INTO soak_outcome VALUES (kind, outcome);
  EXCEPTION WHEN query_canceled THEN
    -- the statement timeout fell just after the call ended, or while its
    -- error was being handled (a slow network): it has fired, so this
    -- insert runs
    INSERT INTO soak_outcome VALUES (kind, 'late:' || SQLSTATE);
  END;
  RETURN outcome;
END
\$\$;
-- soak_sample_due(): a sample after the calls that take one, in a
-- statement of its own (bench/soak.pgbench), so that a call using up the
-- statement timeout cannot cancel it.  Call 1: a warm-up sample, so that
-- the relations the sampling itself touches are open (PostgreSQL keeps
-- their files open) before call 125
CREATE FUNCTION soak_sample_due() RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
  n int := coalesce(nullif(current_setting('soak.n', true), ''), '0')::int;
BEGIN
  IF n IN (1, $((per_client / 10)), $((per_client / 2)), $per_client) THEN
    PERFORM soak_sample_self(n);
  END IF;
END
\$\$;
SQL

# the fault injector: one random fault every 40 ms on a random table and
# route, until $work/stop exists
cat >"$work/injector.py" <<'PY'
import json, os, random, sys, time, urllib.request
port, stop = sys.argv[1], sys.argv[2]
faults = [
    {"status": 429, "json": {"code": 7, "error": "node is replaying its WAL"}},
    {"status": 503, "body": "<html><body>503 Service Unavailable</body></html>",
     "content_type": "text/html"},
    {"status": 404, "json": {"code": 3, "error": "table not found"}},
    {"status": 421, "json": {"code": 19, "error": "table not claimed"}},
    {"action": "hang"},
    {"mutate": "not_json"},
    {"mutate": "truncate"},
    {"status": 200, "body": "{\"lsm_stats\": {\"buckets\": [{\"shard_id\": 1"},
    {"action": "close_mid_body"},
]
n = 0
while not os.path.exists(stop):
    f = dict(random.choice(faults))
    f["table"] = random.choice(["soak", "soak2"])
    f["route"] = random.choice(["flush_lsm", "compact_lsm", "get_lsm_stats"])
    req = urllib.request.Request(f"http://127.0.0.1:{port}/_emulator/faults",
                                 data=json.dumps(f).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=5).read()
        n += 1
    except Exception as e:
        print("injector:", e, file=sys.stderr)
    time.sleep(0.04)
print(n)
PY
python3 "$work/injector.py" "$emu_port" "$work/stop" >"$work/injector.out" 2>"$work/injector.err" &
echo $! >"$work/injector.pid"

echo "soak: $((clients * per_client)) calls from $clients sessions (pgbench), random faults"
t0=$(date +%s)
cp "$bench/soak.pgbench" "$work/soak.pgbench"
chown postgres: "$work/soak.pgbench"
rc=0
timeout "${SOAK_TIMEOUT:-900}" su postgres -c "PGHOST='$work' PGPORT=$pgport pgbench -n -d soak \
	-c $clients -j 2 -t $per_client -f '$work/soak.pgbench'" >"$work/pgbench.out" 2>&1 || rc=$?
touch "$work/stop"
wait "$(cat "$work/injector.pid")" 2>/dev/null
rm -f "$work/injector.pid"
t1=$(date +%s)
grep -E 'number of transactions actually processed|number of failed|tps|aborted' "$work/pgbench.out"
[ $rc = 0 ] || { echo "soak: pgbench failed (status $rc):"; tail -20 "$work/pgbench.out"; }
echo "soak: $((t1 - t0)) s; faults queued: $(cat "$work/injector.out" 2>/dev/null)"
[ "${SOAK_NETWORK_FAULTS:-0}" = 1 ] && soak_faults_report "$work"

psqlq -d soak -c "SELECT last_value AS calls FROM soak_calls"
psqlq -d soak -c "SELECT kind, outcome, count(*) FROM soak_outcome GROUP BY 1, 2 ORDER BY 1, 2"
echo "soak: per backend, after its $((per_client / 10))th call (~$((clients * per_client / 10)) overall) and its ${per_client}th (~$((clients * per_client)))"
psqlq -d soak <<SQL
SELECT a.pid,
       a.global_call AS "call (1k)", b.global_call AS "call (10k)",
       a.vmrss_kb AS "VmRSS 1k", b.vmrss_kb AS "VmRSS 10k",
       round(100.0 * (b.vmrss_kb - a.vmrss_kb) / a.vmrss_kb, 1) AS "RSS %",
       a.rssanon_kb AS "RssAnon 1k", b.rssanon_kb AS "RssAnon 10k",
       a.rssshmem_kb AS "RssShmem 1k", b.rssshmem_kb AS "RssShmem 10k",
       a.fds AS "fds 1k", b.fds AS "fds 10k",
       a.fds_not_relation AS "non-relation fds 1k", b.fds_not_relation AS "non-relation fds 10k"
  FROM soak_sample a JOIN soak_sample b ON a.pid = b.pid AND b.at_call = $per_client
 WHERE a.at_call = $((per_client / 10))
 ORDER BY a.pid;
-- the trend (is growth a warm-up or steady?) and what the descriptors are
SELECT pid, at_call, global_call, vmrss_kb, rssanon_kb, rssshmem_kb, fds,
       fds_not_relation, regexp_replace(fd_targets, '[0-9]+ [^,]*/(base|global|pg_wal)/[^,]*(, )?', '', 'g') AS "non-relation fds"
  FROM soak_sample ORDER BY pid, at_call;
SQL
flat=$(psqlq -d soak -At <<SQL
SELECT count(*) = $clients
       AND bool_and(abs(b.vmrss_kb - a.vmrss_kb) <= 0.05 * a.vmrss_kb)
       AND bool_and(b.fds_not_relation - a.fds_not_relation
                    <= greatest(0.05 * a.fds_not_relation, 1))
  FROM soak_sample a JOIN soak_sample b ON a.pid = b.pid AND b.at_call = $per_client
 WHERE a.at_call = $((per_client / 10));
SQL
)
# a backend's crash, not the sampling's own "ls" ended by a timeout
crashes=$(grep -cE '\(PID [0-9]+\) was terminated by signal' "$work/server.log")
# Descriptors of relation files (data/base, global, pg_wal) are
# PostgreSQL's own file cache and vary with the tables the soak itself
# writes; the others (sockets, pipes, eventfd/epoll, log) are what lancelsm
# could leak.  One socket more or less is the cached keep-alive connection
# being open or not at the moment of the sample.
echo "soak: VmRSS within 5 % and non-relation fds grown by at most 5 % (at least 1 fd) from call ~1k to ~10k: $([ "$flat" = t ] && echo yes || echo NO)"
echo "soak: crashed backends: $crashes"
grep -E '\(PID [0-9]+\) was terminated by signal|PANIC' "$work/server.log" | head -5
[ $rc = 0 ] && [ "$flat" = t ] && [ "$crashes" = 0 ]
