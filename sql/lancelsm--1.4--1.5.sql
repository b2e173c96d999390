/* lancelsm--1.4--1.5.sql: the 1.5 objects (see CHANGELOG.md). */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.5'" to load this file. \quit

-- One section per change of 1.5, each between its BEGIN and END lines and
-- opened by a comment on what it changes and why.  The library serves a
-- 1.4 catalog until this script has run, so a function given a new
-- argument keeps accepting the old argument count.  A new argument means
-- a new signature: it is created beside the old one, takes over the old
-- one's EXECUTE grants (lancelsm_carry_grants below), and the old one is
-- dropped, as lancelsm--1.3--1.4.sql did for lancelsm_checkpoint_due.
-- CREATE OR REPLACE VIEW can only add columns at the end.

-- BEGIN upgrade order
-- The objects below need the 1.5 library.  A session that loaded an
-- older one (from shared_preload_libraries, until the server restarts, or
-- by calling a function before the package upgrade) still runs it: say
-- so instead of failing on the first missing C function.  lancelsm_info
-- gives the loaded library's release (1.4 gave its SQL version, 1.4).
DO $$
BEGIN
  IF pg_catalog.current_setting('lancelsm.retry_budget', true) IS NOT NULL
     AND pg_catalog.string_to_array(
           (SELECT i.library_version FROM @extschema@.lancelsm_info() i),
           '.')::pg_catalog.int4[] OPERATOR(pg_catalog.<) '{1,5}' THEN
    RAISE EXCEPTION 'this session runs a lancelsm library older than 1.5'
      USING ERRCODE = 'feature_not_supported',
            HINT = 'Restart the server if lancelsm is in shared_preload_libraries, or else start a new session, then run ALTER EXTENSION lancelsm UPDATE again.';
  END IF;
END
$$;
-- END upgrade order

-- BEGIN carrying grants
-- lancelsm_carry_grants(old, new) gives the new signature of a function
-- the EXECUTE grants a DBA gave the old one: when the old one's ACL was
-- changed at all, the new one's default PUBLIC grant is revoked and every
-- EXECUTE grant of the old one but its owner's is given again, with its
-- grant option.  The sections below call it before they drop an old
-- signature; the last section drops it.
CREATE FUNCTION @extschema@.lancelsm_carry_grants(
    old_function pg_catalog.regprocedure,
    new_function pg_catalog.regprocedure)
RETURNS pg_catalog.void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  acl pg_catalog.aclitem[];
  owner pg_catalog.oid;
  g record;
BEGIN
  SELECT p.proacl, p.proowner INTO acl, owner FROM pg_catalog.pg_proc p
   WHERE p.oid = old_function;
  IF acl IS NULL THEN
    RETURN;   -- never granted nor revoked: the default, as the new one's
  END IF;
  EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', new_function);
  FOR g IN SELECT a.grantee, a.is_grantable FROM pg_catalog.aclexplode(acl) a
            WHERE a.privilege_type = 'EXECUTE'
              AND a.grantee OPERATOR(pg_catalog.<>) owner
  LOOP
    EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s%s', new_function,
      CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
           ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END,
      CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
  END LOOP;
END
$$;
-- END carrying grants

-- BEGIN servers followed by identity
-- A declared table follows its server through ALTER SERVER ... RENAME,
-- and DROP SERVER (or DROP OWNED) is refused with 2BP01 while tables are
-- declared on the server, unless CASCADE, which removes them, as
-- postgres_fdw's foreign tables follow their server.  lancelsm_table
-- keeps the server's name, not its OID: pg_dump writes its rows as
-- values.  A pg_depend row cannot point at a row, and PL/pgSQL cannot
-- tell CASCADE from RESTRICT, so the event triggers' functions are
-- written in C.  SECURITY DEFINER: the owner of a server renames or drops
-- it without a privilege on lancelsm_table.  An event trigger function
-- cannot be called but as one; EXECUTE is not needed to fire it and is
-- revoked from PUBLIC.  While a dump is restored (check_function_bodies
-- off) a drop without CASCADE keeps the declarations: pg_restore --clean
-- drops servers so, then the extension, and creates all of them again.
CREATE FUNCTION @extschema@.lancelsm_server_renamed()
RETURNS pg_catalog.event_trigger
AS 'MODULE_PATHNAME', 'lancelsm_server_renamed'
LANGUAGE C VOLATILE SECURITY DEFINER;
CREATE FUNCTION @extschema@.lancelsm_server_dropped()
RETURNS pg_catalog.event_trigger
AS 'MODULE_PATHNAME', 'lancelsm_server_dropped'
LANGUAGE C VOLATILE SECURITY DEFINER;
REVOKE ALL ON FUNCTION @extschema@.lancelsm_server_renamed() FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.lancelsm_server_dropped() FROM PUBLIC;

CREATE EVENT TRIGGER lancelsm_server_rename ON ddl_command_end
  WHEN TAG IN ('ALTER SERVER')
  EXECUTE FUNCTION @extschema@.lancelsm_server_renamed();
CREATE EVENT TRIGGER lancelsm_server_drop ON sql_drop
  WHEN TAG IN ('DROP SERVER', 'DROP OWNED')
  EXECUTE FUNCTION @extschema@.lancelsm_server_dropped();

COMMENT ON FUNCTION @extschema@.lancelsm_server_renamed() IS
  'Event trigger function of lancelsm_server_rename: the tables declared on a renamed lancelsm server are declared on its new name; no network request';
COMMENT ON FUNCTION @extschema@.lancelsm_server_dropped() IS
  'Event trigger function of lancelsm_server_drop: refuses (2BP01) a drop of a server with declared tables unless CASCADE, which removes them; no network request';
COMMENT ON EVENT TRIGGER lancelsm_server_rename IS
  'After ALTER SERVER ... RENAME of a lancelsm server, renames the server in lancelsm_table';
COMMENT ON EVENT TRIGGER lancelsm_server_drop IS
  'On DROP SERVER and DROP OWNED: refuses to drop a server with declared tables unless CASCADE, which removes them from lancelsm_table';
-- END servers followed by identity

-- BEGIN declaring checks the table
-- lancelsm_add_table reads the table's stats once (one request, with
-- USAGE on the server and a user mapping) and refuses a table the server
-- does not have (HV00R), declaring nothing; validate => false declares
-- without a request, for a table not created yet.  The new argument makes
-- a new signature, which takes over the 1.2 one's EXECUTE grants (revoked
-- from PUBLIC by default).  Its last argument, max_read_interval, is the
-- section "due without asking"'s (below).
CREATE FUNCTION @extschema@.lancelsm_add_table(
    server pg_catalog.text,
    table_name pg_catalog.text,
    max_l0_generations pg_catalog.int8 DEFAULT NULL,
    max_l0_bytes pg_catalog.int8 DEFAULT NULL,
    max_wal_lag pg_catalog.int8 DEFAULT NULL,
    max_memtable_rows pg_catalog.int8 DEFAULT NULL,
    max_checkpoint_age pg_catalog.interval DEFAULT NULL,
    validate pg_catalog.bool DEFAULT true,
    max_read_interval pg_catalog.interval DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_add_table'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
SELECT @extschema@.lancelsm_carry_grants(
  '@extschema@.lancelsm_add_table(pg_catalog.text, pg_catalog.text, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval)',
  '@extschema@.lancelsm_add_table(pg_catalog.text, pg_catalog.text, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval, pg_catalog.bool, pg_catalog.interval)');
DROP FUNCTION @extschema@.lancelsm_add_table(pg_catalog.text, pg_catalog.text,
  pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval);
COMMENT ON FUNCTION @extschema@.lancelsm_add_table IS
  'Declares a LanceDB table in lancelsm_table, with optional due thresholds (NULL: not used), after reading its stats once (HV00R: the server has no such table, and nothing is declared); validate => false contacts no server; EXECUTE revoked from PUBLIC';
-- END declaring checks the table

-- BEGIN outcomes that survive the error
-- The outcome of every table of every call stays recorded when the
-- caller's statement or transaction fails: with lancelsm preloaded, each
-- outcome is also staged, and a rollback hands it to a background worker
-- of its database that writes it in a transaction of its own
-- (docs/operations.md, "Outcomes that survive the error").  lancelsm_info
-- says whether that is so (outcomes_survive_rollback: false without
-- shared_preload_libraries or with lancelsm.max_pending_outcomes = 0,
-- when outcomes roll back with the caller's transaction), and counts the
-- outcomes waiting for their worker against the queue's size and those
-- dropped since server start.  A function's result columns cannot be
-- altered: the 1.4 function and view are renamed, the new ones created
-- and given the old ones' grants (pg_read_all_stats' and a DBA's), and
-- the old ones dropped.
ALTER VIEW @extschema@.lancelsm_info RENAME TO lancelsm_info_1_4;
ALTER FUNCTION @extschema@.lancelsm_info() RENAME TO lancelsm_info_1_4;

CREATE FUNCTION @extschema@.lancelsm_info()
RETURNS TABLE (
    library_version pg_catalog.text,
    catalog_version pg_catalog.text,
    preloaded pg_catalog.bool,
    progress_entries pg_catalog.int4,
    max_progress_entries pg_catalog.int4,
    history_entries pg_catalog.int4,
    max_history_entries pg_catalog.int4,
    herd_entries pg_catalog.int4,
    max_herd_entries pg_catalog.int4,
    progress_skipped pg_catalog.int8,
    history_evicted pg_catalog.int8,
    pace_evicted pg_catalog.int8,
    run_entries pg_catalog.int4,
    max_run_entries pg_catalog.int4,
    run_evicted pg_catalog.int8,
    counter_entries pg_catalog.int4,
    max_counter_entries pg_catalog.int4,
    counter_evicted pg_catalog.int8,
    outcomes_survive_rollback pg_catalog.bool,
    pending_outcomes pg_catalog.int4,
    max_pending_outcomes pg_catalog.int4,
    outcomes_dropped pg_catalog.int8)
AS 'MODULE_PATHNAME', 'lancelsm_info'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 1;

CREATE VIEW @extschema@.lancelsm_info AS
  SELECT * FROM @extschema@.lancelsm_info();

SELECT @extschema@.lancelsm_carry_grants(
  '@extschema@.lancelsm_info_1_4()'::pg_catalog.regprocedure,
  '@extschema@.lancelsm_info()'::pg_catalog.regprocedure);
DO $$
DECLARE
  g record;
BEGIN
  REVOKE ALL ON @extschema@.lancelsm_info FROM PUBLIC;
  FOR g IN SELECT a.grantee, a.is_grantable
             FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
            WHERE c.oid OPERATOR(pg_catalog.=) '@extschema@.lancelsm_info_1_4'::pg_catalog.regclass
              AND a.privilege_type OPERATOR(pg_catalog.=) 'SELECT'
              AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
  LOOP
    EXECUTE pg_catalog.format('GRANT SELECT ON @extschema@.lancelsm_info TO %s%s',
      CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
           ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END,
      CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
  END LOOP;
END
$$;
DROP VIEW @extschema@.lancelsm_info_1_4;
DROP FUNCTION @extschema@.lancelsm_info_1_4();

COMMENT ON FUNCTION @extschema@.lancelsm_info() IS
  'The one row of the view lancelsm_info, read from shared memory and pg_extension; no network request; counts NULL unless lancelsm is preloaded; EXECUTE granted to pg_read_all_stats (1.5: with the outcome queue)';
COMMENT ON VIEW @extschema@.lancelsm_info IS
  'One row on lancelsm itself: library and catalog versions, whether it is preloaded, progress, history and herd entries in use against their maximum, checkpoints run without a progress row, history, pace and run entries evicted, runs kept against their maximum, tables counted against their maximum, counter entries evicted, whether outcomes survive a rollback, outcomes waiting for their worker against the queue''s size and outcomes dropped; reads shared memory only';
-- END outcomes that survive the error

-- BEGIN strict runs
-- lancelsm_checkpoint_due and lancelsm_checkpoint_all take strict: with
-- strict => true, a run in which a table failed ends, once every table's
-- outcome is recorded, in an error (HV000) that counts the failed tables
-- and names the first with their SQLSTATEs, which pg_cron records as a
-- failed run.  Both stop being STRICT: a NULL argument raises 22004
-- rather than returning no rows, which pg_cron would record as a success.
-- Each new signature is created beside the 1.4 one, takes over its
-- EXECUTE grants, and the 1.4 one is dropped.
CREATE FUNCTION @extschema@.lancelsm_checkpoint_due(
    slice pg_catalog.int4 DEFAULT 0,
    slices pg_catalog.int4 DEFAULT 1,
    strict pg_catalog.bool DEFAULT false)
RETURNS TABLE (
    server pg_catalog.text,
    table_name pg_catalog.text,
    ok pg_catalog.bool,
    sqlstate pg_catalog.text,
    message pg_catalog.text,
    elapsed pg_catalog.interval,
    passes pg_catalog.int4,
    polls pg_catalog.int4,
    due pg_catalog.bool,
    reason pg_catalog.text,
    action pg_catalog.text)
AS 'MODULE_PATHNAME', 'lancelsm_checkpoint_due'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 16;
SELECT @extschema@.lancelsm_carry_grants(
  '@extschema@.lancelsm_checkpoint_due(pg_catalog.int4, pg_catalog.int4)'::pg_catalog.regprocedure,
  '@extschema@.lancelsm_checkpoint_due(pg_catalog.int4, pg_catalog.int4, pg_catalog.bool)'::pg_catalog.regprocedure);
DROP FUNCTION @extschema@.lancelsm_checkpoint_due(pg_catalog.int4, pg_catalog.int4);

CREATE FUNCTION @extschema@.lancelsm_checkpoint_all(
    strict pg_catalog.bool DEFAULT false)
RETURNS TABLE (
    server pg_catalog.text,
    table_name pg_catalog.text,
    ok pg_catalog.bool,
    sqlstate pg_catalog.text,
    message pg_catalog.text,
    elapsed pg_catalog.interval,
    passes pg_catalog.int4,
    polls pg_catalog.int4)
AS 'MODULE_PATHNAME', 'lancelsm_checkpoint_all'
LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 16;
SELECT @extschema@.lancelsm_carry_grants(
  '@extschema@.lancelsm_checkpoint_all()'::pg_catalog.regprocedure,
  '@extschema@.lancelsm_checkpoint_all(pg_catalog.bool)'::pg_catalog.regprocedure);
DROP FUNCTION @extschema@.lancelsm_checkpoint_all();

COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint_all IS
  'Checkpoints every declared table concurrently until drained, one row per table; records each table''s outcome; with strict => true a run in which a table failed ends in an error counting the failed tables (HV000); skips a table another session is checkpointing';
COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint_due IS
  'The due job: reads every declared table''s stats concurrently, then flushes, compacts or checkpoints only the tables past a threshold, without waiting for a drain; records each table''s outcome; with strict => true a run in which a table failed ends in an error counting the failed tables (HV000), which pg_cron records as failed';
-- END strict runs

-- BEGIN no stale rows
-- lancelsm_remove_table takes the table out of lancelsm_last_stats,
-- lancelsm_table_counters and lancelsm_status when its transaction
-- commits; the table's rows in the two histories stay, with the time of
-- the removal in a new last column, removed_at (NULL for a table still
-- declared, or never declared), so that an alert can leave them out
-- (docs/monitoring.md).  lancelsm_run_history also gets a row per due
-- run, action reads, counting in reads_sent and reads_skipped the stats
-- reads it sent and the tables it left unread (section "due without
-- asking").  A function's result columns cannot be altered:
-- the functions and their views are dropped and created again, with the
-- grants of 1.3 and 1.4: EXECUTE and SELECT to pg_read_all_stats, not
-- PUBLIC.
DROP VIEW @extschema@.lancelsm_checkpoint_history;
DROP FUNCTION @extschema@.lancelsm_checkpoint_history();
DROP VIEW @extschema@.lancelsm_run_history;
DROP FUNCTION @extschema@.lancelsm_run_history();

CREATE FUNCTION @extschema@.lancelsm_checkpoint_history()
RETURNS TABLE (
    database pg_catalog.text,
    server pg_catalog.text,
    table_name pg_catalog.text,
    finished_at pg_catalog.timestamptz,
    ok pg_catalog.bool,
    sqlstate pg_catalog.text,
    message pg_catalog.text,
    elapsed pg_catalog.interval,
    passes pg_catalog.int4,
    removed_at pg_catalog.timestamptz)
AS 'MODULE_PATHNAME', 'lancelsm_checkpoint_history'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 100;

CREATE VIEW @extschema@.lancelsm_checkpoint_history AS
  SELECT * FROM @extschema@.lancelsm_checkpoint_history();

CREATE FUNCTION @extschema@.lancelsm_run_history()
RETURNS TABLE (
    database pg_catalog.text,
    server pg_catalog.text,
    table_name pg_catalog.text,
    action pg_catalog.text,
    source pg_catalog.text,
    started_at pg_catalog.timestamptz,
    finished_at pg_catalog.timestamptz,
    ok pg_catalog.bool,
    sqlstate pg_catalog.text,
    message pg_catalog.text,
    passes pg_catalog.int4,
    polls pg_catalog.int4,
    requests pg_catalog.int4,
    removed_at pg_catalog.timestamptz,
    reads_sent pg_catalog.int4,
    reads_skipped pg_catalog.int4)
AS 'MODULE_PATHNAME', 'lancelsm_run_history'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 1000;

CREATE VIEW @extschema@.lancelsm_run_history AS
  SELECT * FROM @extschema@.lancelsm_run_history();

REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_checkpoint_history() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_run_history() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_checkpoint_history() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_run_history() TO pg_read_all_stats;
GRANT SELECT ON @extschema@.lancelsm_checkpoint_history TO pg_read_all_stats;
GRANT SELECT ON @extschema@.lancelsm_run_history TO pg_read_all_stats;

COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint_history() IS
  'The rows of the view lancelsm_checkpoint_history, read from shared memory; no network request; 55000 unless lancelsm is in shared_preload_libraries; EXECUTE granted to pg_read_all_stats';
COMMENT ON VIEW @extschema@.lancelsm_checkpoint_history IS
  'The last checkpoint outcome of each table, cluster-wide (finished_at, ok, sqlstate, message, elapsed, passes; removed_at once lancelsm_remove_table or DROP SERVER ... CASCADE removed it), at most lancelsm.max_history_entries tables, kept across clean restarts; reads shared memory only; needs lancelsm preloaded';
COMMENT ON FUNCTION @extschema@.lancelsm_run_history() IS
  'The rows of the view lancelsm_run_history, read from shared memory in the order the runs ended; no network request; 55000 unless lancelsm is in shared_preload_libraries; EXECUTE granted to pg_read_all_stats';
COMMENT ON VIEW @extschema@.lancelsm_run_history IS
  'One row per flush, compact or checkpoint lancelsm ran on a table, cluster-wide (action, source, started_at, finished_at, ok, sqlstate, message, passes, polls, requests; removed_at once lancelsm_remove_table or DROP SERVER ... CASCADE removed it), and one per lancelsm_checkpoint_due() run (action reads, no server or table: reads_sent and reads_skipped), at most lancelsm.max_run_history, lost at restart; reads shared memory only; needs lancelsm preloaded';
-- END no stale rows

-- BEGIN due without asking
-- lancelsm_checkpoint_due() read the stats of every declared table at
-- every run: at 100,000 tables and a run a minute, 1,667 requests a
-- second, each opening an uncached dataset on the server, 99 % of them
-- finding nothing to do.  From 1.5 a due run reads a table only when its
-- next read is due, planned from the thresholds: the time the checkpoint
-- age expires, the growth seen between the table's last two reads
-- projected to the time a threshold would be crossed (read at half that
-- time), and a bound after which the table is read whatever the
-- projection, max_read_interval (NULL: the setting
-- lancelsm.max_read_interval; the first bound is spread over its second
-- half by the table's names, so that tables declared together do not
-- come due together).  A table acted on, whose read failed, whose
-- thresholds changed, that holds unflushed writes at its first read, or
-- that is written while its L0 stands still, is read at the next run
-- (docs/operations.md, "Due without asking").  The plan is kept with the
-- declaration, in lancelsm_table, so that it survives a restart, a
-- failover and pg_dump, and each slice plans its own tables; it is
-- written as the owner of lancelsm_table by the due run that read the
-- table.  lancelsm.due_plan = off reads every table as 1.4 did.
ALTER TABLE @extschema@.lancelsm_table
  ADD COLUMN max_read_interval pg_catalog.interval
    CONSTRAINT lancelsm_table_max_read_interval_check
    CHECK (max_read_interval OPERATOR(pg_catalog.>) '0'::pg_catalog.interval),
  ADD COLUMN next_read_at pg_catalog.timestamptz,
  ADD COLUMN next_read_reason pg_catalog.text DEFAULT 'never read',
  ADD COLUMN plan_read_at pg_catalog.timestamptz,
  ADD COLUMN plan_read_values pg_catalog.int8[];

COMMENT ON COLUMN @extschema@.lancelsm_table.max_read_interval IS
  'The longest time lancelsm_checkpoint_due() goes without reading the table''s stats, whatever its plan; NULL: the setting lancelsm.max_read_interval';
COMMENT ON COLUMN @extschema@.lancelsm_table.next_read_at IS
  'When lancelsm_checkpoint_due() reads the table''s stats next (the first run at or after it); NULL: at the next run';
COMMENT ON COLUMN @extschema@.lancelsm_table.next_read_reason IS
  'Why next_read_at: age, bound, projected <measure> at <rate>/s, or, for a read at the next run, never read, first read, started growing, written, fell <measure>, acted, read failed or altered';
COMMENT ON COLUMN @extschema@.lancelsm_table.plan_read_at IS
  'When lancelsm_checkpoint_due() last read the table''s stats; NULL: never';
COMMENT ON COLUMN @extschema@.lancelsm_table.plan_read_values IS
  'What that read found: l0_generations, l0_bytes, wal_lag_max, memtable_rows and the write position (WAL position and generation summed over the buckets), for the projection of the next read';

-- lancelsm_status shows each table's plan in two new last columns
-- (next_read_at, next_read_reason): the next section defines the 1.5
-- view.

-- lancelsm_alter_table takes max_read_interval too (clear may name it:
-- back to the setting), and forgets the plan: the table is read at the
-- next run.  The new signature takes over the 1.4 one's EXECUTE grants.
CREATE FUNCTION @extschema@.lancelsm_alter_table(
    server pg_catalog.text,
    table_name pg_catalog.text,
    max_l0_generations pg_catalog.int8 DEFAULT NULL,
    max_l0_bytes pg_catalog.int8 DEFAULT NULL,
    max_wal_lag pg_catalog.int8 DEFAULT NULL,
    max_memtable_rows pg_catalog.int8 DEFAULT NULL,
    max_checkpoint_age pg_catalog.interval DEFAULT NULL,
    clear pg_catalog.text[] DEFAULT NULL,
    max_read_interval pg_catalog.interval DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_alter_table'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
SELECT @extschema@.lancelsm_carry_grants(
  '@extschema@.lancelsm_alter_table(pg_catalog.text, pg_catalog.text, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval, pg_catalog.text[])',
  '@extschema@.lancelsm_alter_table(pg_catalog.text, pg_catalog.text, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval, pg_catalog.text[], pg_catalog.interval)');
DROP FUNCTION @extschema@.lancelsm_alter_table(pg_catalog.text, pg_catalog.text,
  pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval,
  pg_catalog.text[]);
COMMENT ON FUNCTION @extschema@.lancelsm_alter_table IS
  'Changes the due thresholds and max_read_interval of a declared table: a value given is set, one omitted keeps its value, one named in clear is set to NULL; the table is read at the next due run; no network request; EXECUTE revoked from PUBLIC';
COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint_due IS
  'The due job: reads the stats of the declared tables whose next read is due (every table with lancelsm.due_plan off), then flushes, compacts or checkpoints only the tables past a threshold, without waiting for a drain; a table not read is a row with action none and a reason starting "not read: "; records each table''s outcome and plan; with strict => true a run in which a table failed ends in an error counting the failed tables (HV000), which pg_cron records as failed';
-- END due without asking

-- BEGIN the message relation
-- The server's message of each declared table's last outcome (the errmsg
-- and errdetail of a failure: a 403's body, say) was in
-- lancelsm_table.last_message, readable by PUBLIC; the same text in the
-- histories is readable by pg_read_all_stats only.  A column REVOKE does
-- nothing while PUBLIC may SELECT the table, and column grants would
-- break SELECT * for everyone, so the message moves to a relation of its
-- own, gated as the histories are: SELECT for pg_read_all_stats, not
-- PUBLIC.  Its rows follow their table's (renamed, removed) and are
-- written, as the other outcome columns, by the roles that may record
-- (docs/security.md).  lancelsm_status keeps its last_message column,
-- NULL for a role that may not read the relation, as pg_stat_activity
-- shows another role's query, and gains the read plan's two columns
-- (section "due without asking").  The messages are not dumped by
-- pg_dump.
CREATE TABLE @extschema@.lancelsm_table_message (
    server pg_catalog.text NOT NULL,
    table_name pg_catalog.text NOT NULL,
    last_message pg_catalog.text,
    PRIMARY KEY (server, table_name),
    FOREIGN KEY (server, table_name)
      REFERENCES @extschema@.lancelsm_table (server, table_name)
      ON UPDATE CASCADE ON DELETE CASCADE);
INSERT INTO @extschema@.lancelsm_table_message (server, table_name, last_message)
  SELECT server, table_name, last_message FROM @extschema@.lancelsm_table
   WHERE last_message IS NOT NULL;
REVOKE ALL ON @extschema@.lancelsm_table_message FROM PUBLIC;
GRANT SELECT ON @extschema@.lancelsm_table_message TO pg_read_all_stats;

CREATE OR REPLACE VIEW @extschema@.lancelsm_status AS
  SELECT t.server, t.table_name, t.max_l0_generations, t.max_l0_bytes,
         t.max_wal_lag, t.max_memtable_rows, t.max_checkpoint_age,
         t.last_action, t.last_source, t.last_ok, t.last_sqlstate,
         CASE WHEN pg_catalog.has_table_privilege(
                     '@extschema@.lancelsm_table_message', 'SELECT')
              THEN m.last_message END AS last_message,
         t.last_started_at, t.last_finished_at,
         t.last_checkpoint_at, r.phase AS running_phase,
         r.pid AS running_pid, r.started_at AS running_since,
         t.next_read_at, t.next_read_reason
    FROM @extschema@.lancelsm_table t
    LEFT JOIN @extschema@.lancelsm_table_message m
      ON m.server OPERATOR(pg_catalog.=) t.server
     AND m.table_name OPERATOR(pg_catalog.=) t.table_name
    LEFT JOIN (SELECT DISTINCT ON (server, table_name)
                      server, table_name, pid, phase, started_at
                 FROM @extschema@.lancelsm_running()
                ORDER BY server, table_name, started_at, pid) r
      ON r.server OPERATOR(pg_catalog.=) t.server
     AND r.table_name OPERATOR(pg_catalog.=) t.table_name;

ALTER TABLE @extschema@.lancelsm_table DROP COLUMN last_message;

COMMENT ON TABLE @extschema@.lancelsm_table_message IS
  'The message of each declared table''s last outcome (errmsg: errdetail of a failure, without secrets; a note on a success), one row per table that has one; written by the roles that may record; readable by pg_read_all_stats, not PUBLIC';
COMMENT ON COLUMN @extschema@.lancelsm_table_message.last_message IS
  'The message of the last action''s failure (errmsg: errdetail, without secrets), or a note on a success (a joined checkpoint); NULL otherwise';
COMMENT ON VIEW @extschema@.lancelsm_status IS
  'One row per declared table: thresholds, the last action and its outcome, the last checkpoint, the checkpoint running now, and when and why lancelsm_checkpoint_due() reads its stats next; last_message only for roles that may read lancelsm_table_message (pg_read_all_stats), NULL for the others; reads no LanceDB server';
-- END the message relation

-- BEGIN upgrades keep recording
-- A job role set up as the 1.3 and 1.4 docs said keeps recording after
-- the update, with no extra grant: from 1.5 a role records when it may
-- UPDATE lancelsm_table.last_checkpoint_at (the grant the 1.3 docs gave
-- the job role; the 1.4 docs' grant includes it), and the library writes
-- the outcome columns and the message relation as the owner of
-- lancelsm_table.  The column grants the 1.4 docs added are no longer
-- needed; they stay, harmless, but last_message's went with its column.
-- lancelsm_checkpoint_due() and lancelsm_checkpoint_all() by a role that
-- may not record raise 42501 before any request instead of a WARNING
-- after (docs/upgrading.md).  Nothing in the catalog changes.
COMMENT ON COLUMN @extschema@.lancelsm_table.last_checkpoint_at IS
  'Start of the table''s last successful checkpoint by lancelsm_checkpoint_due(), lancelsm_checkpoint_all() or lancelsm_checkpoint on the declared table; never moves back; NULL before the first; UPDATE on this column is what lets a role record the outcomes of declared tables';
-- END upgrades keep recording

-- BEGIN honest WAL lag and null index lists
-- The server's wal_entry_position_last_seen is a best-effort hint, not
-- updated on every WAL write, so the WAL lag lancelsm reports is a lower
-- bound and max_wal_lag fires late, never early; a write spec whose
-- maintained_indexes is null maintains every index of the table, shown as
-- NULL (docs/protocol.md).  Comments only.
COMMENT ON COLUMN @extschema@.lancelsm_table.max_wal_lag IS
  'Flush when the WAL lag of any one bucket, a lower bound from the server''s best-effort hint, exceeds this many WAL entries; NULL: not used';
COMMENT ON FUNCTION @extschema@.lancelsm_stats IS
  'One row per bucket of one table: WAL positions and lag (entries, a lower bound), L0 generations and bytes, memtable rows and bytes; one stats request (include_generation_rows makes the server open every L0 dataset to count rows)';
COMMENT ON FUNCTION @extschema@.lancelsm_write_spec IS
  'Reads one table''s LSM write spec: one row (sharding, column, number of buckets, the indexes the server resolved, NULL for every index, writer defaults), or none when the path is off; one request';
-- END honest WAL lag and null index lists

-- BEGIN end of script
DROP FUNCTION @extschema@.lancelsm_carry_grants(pg_catalog.regprocedure,
  pg_catalog.regprocedure);
-- END end of script
