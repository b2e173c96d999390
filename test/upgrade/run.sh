#!/usr/bin/env bash
# The upgrade chain as a test: in a
# throwaway cluster (scripts/lab.sh), CREATE EXTENSION lancelsm VERSION '1.0'
# then ALTER EXTENSION lancelsm UPDATE in one database, the same from
# VERSION '1.3' and from VERSION '1.4' in others, CREATE EXTENSION lancelsm
# (the default version) in another, and compare what each updated one
# holds with it:
# the \dx+ member list, every member function's definition and ACL, every
# member relation's columns, indexes, constraints, view definition and ACL, and the
# extension's version and dumped configuration tables.  Any difference
# fails the test with a diff.  Then the EXECUTE grants a DBA gave the
# 1.3 lancelsm_checkpoint_due() are found on its 1.4 signature after the
# update, those given lancelsm_add_table on its 1.5 signature, those
# given on the 1.4 lancelsm_info on its 1.5 view and function, and a
# pg_dump round trip: declared tables
# (lancelsm_table rows, with their thresholds, last_checkpoint_at and last
# outcome, max_read_interval and read plan) survive pg_dump and a restore
# into a new database; the grants given the 1.4 lancelsm_alter_table are
# on its 1.5 signature (max_read_interval).
#
# Run as the postgres user, with lancelsm built and installed; scripts/test.sh
# calls it.  No emulator needed: nothing here contacts a LanceDB server.
set -euo pipefail

# The PostgreSQL to test: major LANCELSM_PG_VERSION's, else $PG_CONFIG's
# (or pg_config's on the PATH).
if [ "${1:-}" != inside ]; then
	pg_config=${PG_CONFIG:-pg_config}
	[ -z "${LANCELSM_PG_VERSION:-}" ] || pg_config=/usr/lib/postgresql/$LANCELSM_PG_VERSION/bin/pg_config
	exec "$(dirname "$0")/../../scripts/lab.sh" run "$pg_config" "" "'$(cd "$(dirname "$0")" && pwd)/run.sh' inside"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
psql_q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

# describe DB: the extension's objects, one sorted, stable listing
describe() {
	psql_q -d "$1" -A -t <<'SQL'
\dx+ lancelsm
SELECT 'version ' || extversion || ' config ' || coalesce(extconfig::regclass[]::text, '-')
       || ' ' || coalesce(extcondition::text, '-')
  FROM pg_extension WHERE extname = 'lancelsm';
WITH members AS (
  SELECT classid, objid FROM pg_depend
   WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
     AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'lancelsm'))
SELECT def FROM (
  SELECT p.oid::regprocedure::text AS k,
         pg_get_functiondef(p.oid) || E'\nACL ' || coalesce(p.proacl::text, 'default') AS def
    FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
  UNION ALL
  SELECT c.oid::regclass::text,
         format(E'relation %s kind %s ACL %s\n', c.oid::regclass, c.relkind,
                coalesce(c.relacl::text, 'default'))
         || (SELECT string_agg(format('  %s %s%s%s', a.attname,
                                      format_type(a.atttypid, a.atttypmod),
                                      CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
                                      coalesce(' DEFAULT ' || pg_get_expr(ad.adbin, ad.adrelid), '')),
                               E'\n' ORDER BY a.attnum)
               FROM pg_attribute a
               LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)
         || coalesce(E'\n' || (SELECT string_agg(pg_get_indexdef(i.indexrelid), E'\n' ORDER BY i.indexrelid::regclass::text COLLATE "C")
                                FROM pg_index i WHERE i.indrelid = c.oid), '')
         || coalesce(E'\n' || (SELECT string_agg(format('constraint %s %s', k.conname, pg_get_constraintdef(k.oid)), E'\n' ORDER BY k.conname COLLATE "C")
                                FROM pg_constraint k WHERE k.conrelid = c.oid), '')
         || CASE WHEN c.relkind = 'v' THEN E'\n' || pg_get_viewdef(c.oid) ELSE '' END
    FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
) d ORDER BY k COLLATE "C";
SQL
}

createdb fresh
psql_q -d fresh -c "CREATE EXTENSION lancelsm"
describe fresh >"$tmp/fresh.txt"
# from 1.0 (the first release), 1.3 and 1.4 (the last one)
for from in 1.0 1.3 1.4; do
	createdb "upgraded_$from"
	psql_q -d "upgraded_$from" -c "CREATE EXTENSION lancelsm VERSION '$from'" \
		-c "ALTER EXTENSION lancelsm UPDATE"
	describe "upgraded_$from" >"$tmp/upgraded_$from.txt"
	if ! diff -u "$tmp/fresh.txt" "$tmp/upgraded_$from.txt"; then
		echo "upgrade: $from + ALTER EXTENSION UPDATE differs from a fresh install (diff above: - fresh, + upgraded)" >&2
		exit 1
	fi
	echo "upgrade: $from -> $(psql_q -d "upgraded_$from" -A -t -c "SELECT extversion FROM pg_extension WHERE extname = 'lancelsm'") matches a fresh install ($(grep -c . "$tmp/fresh.txt") lines compared)"
done

# a table declared under 1.1 is kept by the update to 1.2, without thresholds
createdb kept
psql_q -d kept -o /dev/null <<'SQL'
CREATE EXTENSION lancelsm VERSION '1.1';
CREATE SERVER kept_srv FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:1');
SELECT lancelsm_add_table('kept_srv', 'events');
ALTER EXTENSION lancelsm UPDATE;
SQL
kept=$(psql_q -d kept -A -t -c "SELECT concat_ws(' ', server, table_name, coalesce(max_l0_generations::text, 'null'), coalesce(max_checkpoint_age::text, 'null'), coalesce(last_checkpoint_at::text, 'never')) FROM lancelsm_table")
if [ "$kept" != "kept_srv events null null never" ]; then
	echo "upgrade: a table declared under 1.1 was not kept by the update: '$kept'" >&2
	exit 1
fi
echo "upgrade: a table declared under 1.1 is kept by the update ($kept)"

# the grants a DBA gave lancelsm_checkpoint_due() in 1.3 are those of its
# 1.4 signature (slice, slices) after the update
createdb grants
psql_q -d grants -o /dev/null <<'SQL'
CREATE EXTENSION lancelsm VERSION '1.3';
CREATE ROLE regress_upgrade_cron;
REVOKE EXECUTE ON FUNCTION lancelsm_checkpoint_due() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION lancelsm_checkpoint_due() TO regress_upgrade_cron WITH GRANT OPTION;
GRANT EXECUTE ON FUNCTION lancelsm_add_table(text, text, int8, int8, int8, int8, interval) TO regress_upgrade_cron;
ALTER EXTENSION lancelsm UPDATE;
SQL
# grants_of FUNCTION: its grants other than its owner's, and how many
# functions have its name
grants_of() {
	psql_q -d grants -A -t -c "SELECT string_agg(CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END || ':' || a.is_grantable, ' ' ORDER BY 1) FROM pg_proc p, aclexplode(p.proacl) a WHERE p.proname = '$1' AND a.grantee <> p.proowner" \
		-c "SELECT count(*) FROM pg_proc WHERE proname = '$1'"
}
grants=$(grants_of lancelsm_checkpoint_due)
add_grants=$(grants_of lancelsm_add_table)
psql_q -d postgres -c "DROP DATABASE grants" -c "DROP ROLE regress_upgrade_cron"
if [ "$grants" != "regress_upgrade_cron:true
1" ]; then
	echo "upgrade: the grants on lancelsm_checkpoint_due() were not carried to (slice, slices): '$grants'" >&2
	exit 1
fi
echo "upgrade: the grants on lancelsm_checkpoint_due() are carried to its 1.4 signature ($(echo $grants))"
if [ "$add_grants" != "regress_upgrade_cron:false
1" ]; then
	echo "upgrade: the grants on lancelsm_add_table were not carried to its 1.5 signature (validate): '$add_grants'" >&2
	exit 1
fi
echo "upgrade: the grants on lancelsm_add_table are carried to its 1.5 signature ($(echo $add_grants))"

# the grants a DBA gave lancelsm_info (view and function) in 1.4 are those
# of the 1.5 view and function, re-created with the outcome queue's columns
createdb info_grants
psql_q -d info_grants -o /dev/null <<'SQL'
CREATE EXTENSION lancelsm VERSION '1.4';
CREATE ROLE regress_upgrade_mon;
GRANT SELECT ON lancelsm_info TO regress_upgrade_mon;
GRANT EXECUTE ON FUNCTION lancelsm_info() TO regress_upgrade_mon;
GRANT EXECUTE ON FUNCTION lancelsm_alter_table(text, text, int8, int8, int8, int8, interval, text[]) TO regress_upgrade_mon;
ALTER EXTENSION lancelsm UPDATE;
SQL
alter=$(psql_q -d info_grants -A -t -c "SELECT has_function_privilege('regress_upgrade_mon', 'lancelsm_alter_table(text, text, int8, int8, int8, int8, interval, text[], interval)', 'EXECUTE'), has_function_privilege('public', 'lancelsm_alter_table(text, text, int8, int8, int8, int8, interval, text[], interval)', 'EXECUTE'), (SELECT count(*) FROM pg_proc WHERE proname = 'lancelsm_alter_table')")
info=$(psql_q -d info_grants -A -t -c "SELECT has_table_privilege('regress_upgrade_mon', 'lancelsm_info', 'SELECT'), has_function_privilege('regress_upgrade_mon', 'lancelsm_info()', 'EXECUTE'), has_function_privilege('public', 'lancelsm_info()', 'EXECUTE'), (SELECT count(*) FROM pg_attribute WHERE attrelid = 'lancelsm_info'::regclass AND attnum > 0)")
psql_q -d postgres -c "DROP DATABASE info_grants" -c "DROP ROLE regress_upgrade_mon"
if [ "$info" != "t|t|f|22" ]; then
	echo "upgrade: the grants on lancelsm_info were not carried to its 1.5 view and function: '$info'" >&2
	exit 1
fi
echo "upgrade: the grants on lancelsm_info are carried to its 1.5 view and function ($info)"
if [ "$alter" != "t|f|1" ]; then
	echo "upgrade: the grants on lancelsm_alter_table were not carried to its 1.5 signature (max_read_interval): '$alter'" >&2
	exit 1
fi
echo "upgrade: the grants on lancelsm_alter_table are carried to its 1.5 signature ($alter)"

# pg_dump round trip of the declared tables
psql_q -d fresh -o /dev/null <<'SQL'
CREATE SERVER dump_srv FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:1');
SELECT lancelsm_add_table('dump_srv', 'events', max_l0_generations => 20,
                          max_wal_lag => 1000, max_checkpoint_age => '15 minutes',
                          validate => false);
SELECT lancelsm_add_table('dump_srv', 'ns$orders', 1, 2, 3, 4, '1 day', validate => false,
                          max_read_interval => '30 minutes');
UPDATE lancelsm_table SET last_checkpoint_at = '2026-11-30 12:34:56.789+00',
       last_action = 'checkpoint', last_source = 'checkpoint_due', last_ok = true,
       last_started_at = '2026-11-30 12:34:56.789+00',
       last_finished_at = '2026-11-30 12:35:01.5+00',
       next_read_at = '2026-11-30 12:50:01.5+00', next_read_reason = 'bound',
       plan_read_at = '2026-11-30 12:35:01.5+00', plan_read_values = '{1,2,3,4}'
 WHERE table_name = 'events';
UPDATE lancelsm_table SET last_action = 'flush', last_source = 'direct', last_ok = false,
       last_sqlstate = 'HV000',
       last_started_at = '2026-12-01 00:00:00+00', last_finished_at = '2026-12-01 00:00:01+00'
 WHERE table_name = 'ns$orders';
SQL
rows() {
	psql_q -d "$1" -A -t -c "SELECT concat_ws(' ', server, table_name, added_at, max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows, max_checkpoint_age, coalesce(last_checkpoint_at::text, 'never'), last_action, last_source, last_ok, last_sqlstate, last_started_at, last_finished_at, max_read_interval, next_read_at, next_read_reason, plan_read_at, plan_read_values) FROM lancelsm_table ORDER BY server COLLATE \"C\", table_name COLLATE \"C\""
}
pg_dump fresh >"$tmp/dump.sql"
createdb restored
psql_q -d restored -f "$tmp/dump.sql" >/dev/null
rows fresh >"$tmp/rows.fresh"
rows restored >"$tmp/rows.restored"
if [ "$(wc -l <"$tmp/rows.fresh")" != 2 ] || ! diff -u "$tmp/rows.fresh" "$tmp/rows.restored"; then
	echo "upgrade: declared tables did not survive pg_dump and restore" >&2
	cat "$tmp/rows.fresh" >&2
	exit 1
fi
echo "upgrade: pg_dump round trip kept $(wc -l <"$tmp/rows.restored") declared tables with their thresholds, last checkpoint, last outcome and read plan"
cat "$tmp/rows.restored"
