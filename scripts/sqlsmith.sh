#!/usr/bin/env bash
# scripts/sqlsmith.sh [QUERIES]: random SQL from sqlsmith against lancelsm,
# asserting that no backend crashes and the postmaster never restarts.
#
# Needs lancelsm installed in the PostgreSQL of PG_CONFIG (default: the
# host's 15) and the sqlsmith package; with SQLSMITH_BUILD=1 it builds a
# copy of this tree instead and installs it into a scratch DESTDIR that
# the cluster reads through Debian's extension_destdir
# (scripts/lab.sh), never over the system's lancelsm.  Starts an emulator
# of its own and a throwaway cluster (scripts/lab.sh: initdb in a
# temporary directory, Unix socket only, lancelsm in
# shared_preload_libraries), then sets up database "smith":
# lancelsm, server emu (and emu_ns, with id_delimiter '.') pointing at the
# emulator, user mappings for PUBLIC, four declared tables (two the
# emulator has, one it has not, one through emu_ns), and role "smith" with
# USAGE on both servers, pg_read_all_stats and statement_timeout 2 s.
# sqlsmith then runs QUERIES queries (default 10000, seed SQLSMITH_SEED,
# default 1) as smith, within SQLSMITH_TIMEOUT seconds (default 300).
#
# What sqlsmith reaches: its FROM clauses draw on relations, and with
# --exclude-catalog (the default here; SQLSMITH_CATALOG=1 drops it) the
# only relations are lancelsm's: lancelsm_table and the views over its
# set-returning functions (lancelsm_table_stats and lancelsm_bucket_stats
# read the stats of every declared table from the emulator at each scan,
# lancelsm_progress, lancelsm_checkpoint_history).  Its expressions draw
# on every function and operator of the catalog, pg_catalog's included,
# by result type; it never calls set-returning functions directly, and
# void functions (lancelsm_flush, lancelsm_compact, the two-argument
# lancelsm_checkpoint, the validator) only where a void value is wanted,
# which is next to never.  So that those are called with random and real
# arguments too, schema "smith" wraps each in a function returning
# boolean (smith.flush, smith.compact, smith.checkpoint,
# smith.checkpoint_many, smith.validate), and views that call them on
# every declared table (smith.flushes, smith.compactions,
# smith.checkpoints) are relations sqlsmith scans like the others.
#
# Prints the queries run, the time, the errors by SQLSTATE class (from the
# server log: every ERROR logs its SQLSTATE) with the messages of internal
# errors (class XX) and the log line after each, the crashed backends and the
# postmaster restarts.  Exit status 0 when sqlsmith finished its queries
# in time, no backend crashed ("terminated by signal", "server process ...
# was terminated", "all server processes terminated" in the log) and
# pg_postmaster_start_time() did not change; 1 otherwise; 2 when sqlsmith
# is missing.  Runs as root (cluster commands as postgres) or as postgres.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
queries=${1:-10000}
seed=${SQLSMITH_SEED:-1}
limit=${SQLSMITH_TIMEOUT:-300}
pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
bindir=$("$pg_config" --bindir)
key=lsm-sqlsmith-key-41d7

command -v sqlsmith >/dev/null || {
	echo "scripts/sqlsmith.sh: sqlsmith is not installed (Debian package sqlsmith)" >&2
	exit 2
}

work=$(mktemp -d /tmp/lancelsm-sqlsmith.XXXXXX)
chmod 755 "$work"
[ "$(id -u)" = 0 ] && chown postgres: "$work"

# the throwaway cluster, and as_postgres CMD: a shell command as the
# postgres user
. "$here/scripts/lab.sh"
as_postgres() { lab_as_postgres "$1"; }
pgport=$lab_port

cleanup() {
	lab_stop "$work" "$pg_config"
	wait 2>/dev/null
	# SQLSMITH_KEEP=1 keeps the server log and sqlsmith's output
	if [ "${SQLSMITH_KEEP:-0}" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

"$here/scripts/regress-emulator.sh" "$work" "$key" --quiet || exit 1
emuport=$(cat "$work/emulator.port")

if [ "${SQLSMITH_BUILD:-0}" = 1 ]; then
	lab_build "$work" "$pg_config" || exit 1
fi
lab_cluster "$work" "$pg_config" "$lab_lancelsm_conf
max_connections = 20
log_line_prefix = '%m [%p] %e '
log_min_error_statement = panic
track_functions = 'all'" || exit 1

psql_as() {
	as_postgres "'$bindir/psql' -X -q -At -v ON_ERROR_STOP=1 -h '$work' -p $pgport -U $1 -d $2 -c $(printf %q "$3")"
}
psql_as postgres postgres 'CREATE DATABASE smith' || exit 1
psql_as postgres smith "
CREATE EXTENSION lancelsm;
CREATE SERVER emu FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$emuport');
CREATE SERVER emu_ns FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:$emuport', id_delimiter '.');
CREATE USER MAPPING FOR PUBLIC SERVER emu OPTIONS (api_key '$key');
CREATE USER MAPPING FOR PUBLIC SERVER emu_ns OPTIONS (api_key '$key');
SELECT lancelsm_add_table('emu', 'events', max_l0_generations => 4, validate => false);
SELECT lancelsm_add_table('emu', 'analytics\$events', max_wal_lag => 100, validate => false);
SELECT lancelsm_add_table('emu', 'nosuch', validate => false);
SELECT lancelsm_add_table('emu_ns', 'analytics.events', validate => false);
CREATE SCHEMA smith;
CREATE FUNCTION smith.flush(server text, table_name text) RETURNS boolean
  LANGUAGE sql AS 'SELECT lancelsm_flush(server, table_name) IS NULL';
CREATE FUNCTION smith.compact(server text, table_name text) RETURNS boolean
  LANGUAGE sql AS 'SELECT lancelsm_compact(server, table_name) IS NULL';
CREATE FUNCTION smith.checkpoint(server text, table_name text) RETURNS boolean
  LANGUAGE sql AS 'SELECT lancelsm_checkpoint(server, table_name) IS NULL';
CREATE FUNCTION smith.checkpoint_many(server text, table_names text[]) RETURNS bigint
  LANGUAGE sql AS 'SELECT count(*) FROM lancelsm_checkpoint(server, table_names)';
CREATE FUNCTION smith.validate(options text[], catalog oid) RETURNS boolean
  LANGUAGE sql AS 'SELECT lancelsm_fdw_validator(options, catalog) IS NULL';
CREATE VIEW smith.flushes AS
  SELECT server, table_name, smith.flush(server, table_name) AS done FROM lancelsm_table;
CREATE VIEW smith.compactions AS
  SELECT server, table_name, smith.compact(server, table_name) AS done FROM lancelsm_table;
CREATE VIEW smith.checkpoints AS
  SELECT server, table_name, smith.checkpoint(server, table_name) AS done FROM lancelsm_table;
GRANT USAGE ON SCHEMA smith TO PUBLIC;
GRANT SELECT ON ALL TABLES IN SCHEMA smith TO PUBLIC;
CREATE ROLE smith LOGIN;
GRANT USAGE ON FOREIGN SERVER emu, emu_ns TO smith;
GRANT pg_read_all_stats TO smith;
ALTER ROLE smith SET statement_timeout = '2s';
" >/dev/null || exit 1
started_at=$(psql_as smith smith 'SELECT pg_postmaster_start_time()')

exclude=--exclude-catalog
[ "${SQLSMITH_CATALOG:-0}" = 1 ] && exclude=
t0=$SECONDS
as_postgres "timeout $limit sqlsmith --target='host=$work port=$pgport dbname=smith user=smith' \
	--seed=$seed --max-queries=$queries $exclude --verbose >'$work/sqlsmith.out' 2>&1"
rc=$?
elapsed=$((SECONDS - t0))

crashes=$(grep -cE 'terminated by signal|server process .* was terminated|all server processes terminated' "$work/server.log")
now=$(psql_as smith smith 'SELECT pg_postmaster_start_time()' 2>/dev/null)
restarts=0
[ "$now" = "$started_at" ] || restarts=1

echo "sqlsmith: $queries queries (seed $seed${exclude:+, $exclude}) in $elapsed s, exit status $rc"
echo "emulator requests per route: $(python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$emuport/_emulator/counts').read().decode())")"
echo "lancelsm functions called (pg_stat_user_functions):"
psql_as postgres smith "SELECT funcname || ' ' || calls FROM pg_stat_user_functions WHERE funcname LIKE 'lancelsm%' ORDER BY funcname" | sed 's/^/  /'
echo "errors by SQLSTATE class (count class):"
grep -oE '^[^ ]+ [^ ]+ [^ ]+ \[[0-9]+\] [0-9A-Z]{5} ERROR:' "$work/server.log" |
	awk '{ print substr($5, 1, 2) }' | sort | uniq -c | sort -rn | sed 's/^/  /'
# an internal error (class XX) is a bug somewhere, lancelsm's or the
# server's: show its messages (they fail nothing: sqlsmith also reaches
# the server's own internal errors)
grep -E -A1 '^[^ ]+ [^ ]+ [^ ]+ \[[0-9]+\] XX[0-9A-Z]{3} ERROR:' "$work/server.log" | head -20 | sed 's/^/  /'
echo "crashed backends: $crashes"
echo "postmaster restarts: $restarts"
if [ $rc != 0 ] || [ "$crashes" != 0 ] || [ $restarts != 0 ]; then
	echo "sqlsmith: FAILED; the end of sqlsmith's output and the crash lines of the server log:"
	tail -20 "$work/sqlsmith.out"
	grep -E -B2 -A5 'terminated by signal|was terminated' "$work/server.log" | head -60
	exit 1
fi
exit 0
