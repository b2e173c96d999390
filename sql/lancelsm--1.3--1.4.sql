/* lancelsm--1.3--1.4.sql: the 1.4 objects (see CHANGELOG.md). */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.4'" to load this file. \quit

-- BEGIN upgrade order
-- The functions below need the 1.4 library.  A session that loaded an
-- older one (from shared_preload_libraries, until the server restarts, or
-- by calling a function before the package upgrade) still runs it: say
-- so instead of failing on the first missing C function.  Only 1.4 and
-- later define lancelsm.log_min_duration.
DO $$
BEGIN
  IF pg_catalog.current_setting('lancelsm.retry_budget', true) IS NOT NULL
     AND pg_catalog.current_setting('lancelsm.log_min_duration', true) IS NULL THEN
    RAISE EXCEPTION 'this session runs a lancelsm library older than 1.4'
      USING ERRCODE = 'feature_not_supported',
            HINT = 'Restart the server if lancelsm is in shared_preload_libraries, or else start a new session, then run ALTER EXTENSION lancelsm UPDATE again.';
  END IF;
END
$$;
-- END upgrade order

-- BEGIN thresholds
-- lancelsm_alter_table keeps what it is not given, as cron.alter_job does:
-- a NULL or omitted threshold keeps its value, and the new clear argument
-- names the thresholds to set to NULL (no longer used).  A new argument
-- means a new signature: the function is dropped and created again, and
-- EXECUTE granted on the 1.3 function to a delegate must be granted again.
-- lancelsm_add_table on a declared table raises 42710 (the library does,
-- whatever the catalog's version).
DROP FUNCTION @extschema@.lancelsm_alter_table(pg_catalog.text, pg_catalog.text,
  pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval);
CREATE FUNCTION @extschema@.lancelsm_alter_table(
    server pg_catalog.text,
    table_name pg_catalog.text,
    max_l0_generations pg_catalog.int8 DEFAULT NULL,
    max_l0_bytes pg_catalog.int8 DEFAULT NULL,
    max_wal_lag pg_catalog.int8 DEFAULT NULL,
    max_memtable_rows pg_catalog.int8 DEFAULT NULL,
    max_checkpoint_age pg_catalog.interval DEFAULT NULL,
    clear pg_catalog.text[] DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_alter_table'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.lancelsm_alter_table(pg_catalog.text, pg_catalog.text,
  pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval,
  pg_catalog.text[]) FROM PUBLIC;
-- END thresholds

-- BEGIN lancelsm_info
-- One row on how lancelsm itself stands, as pg_stat_statements_info: the
-- library's and the catalog's versions, whether it is preloaded, the
-- shared-memory entries in use against their maximum, the skipped
-- count that lancelsm_progress_skipped() returned, which it replaces, and
-- the entries evicted by the fair rule (docs/operations.md, "Shared
-- memory").
-- Readable by pg_read_all_stats, as the progress and history views.
DROP FUNCTION @extschema@.lancelsm_progress_skipped();
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
    counter_evicted pg_catalog.int8)
AS 'MODULE_PATHNAME', 'lancelsm_info'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 1;

CREATE VIEW @extschema@.lancelsm_info AS
  SELECT * FROM @extschema@.lancelsm_info();

REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_info() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_info() TO pg_read_all_stats;
GRANT SELECT ON @extschema@.lancelsm_info TO pg_read_all_stats;
-- END lancelsm_info

-- BEGIN progress diagnosis
-- A checkpoint waits for a server whose compaction passes end without
-- draining anything, as the SDK's checkpoint_lsm does (statement_timeout,
-- cancel and lancelsm.max_idle_polls are its bounds); lancelsm_progress
-- says so while it waits: passes_without_drop counts the passes that ended
-- in a row without a drop in the outstanding generations, and diagnosis
-- says what that suggests (NULL when nothing is amiss).  A function's
-- result columns cannot be altered, so the function and its view are
-- dropped and created again, with the grants of 1.1: EXECUTE and SELECT to
-- pg_read_all_stats, not PUBLIC.
DROP VIEW @extschema@.lancelsm_progress;
DROP FUNCTION @extschema@.lancelsm_progress();

CREATE FUNCTION @extschema@.lancelsm_progress()
RETURNS TABLE (
    pid pg_catalog.int4,
    database pg_catalog.text,
    server pg_catalog.text,
    table_name pg_catalog.text,
    phase pg_catalog.text,
    waiting_bucket pg_catalog.text,
    waiting_bucket_status pg_catalog.text,
    target_generations pg_catalog.int8,
    outstanding_generations pg_catalog.int8,
    passes pg_catalog.int4,
    polls pg_catalog.int4,
    retries pg_catalog.int4,
    reissues pg_catalog.int4,
    started_at pg_catalog.timestamptz,
    passes_without_drop pg_catalog.int4,
    diagnosis pg_catalog.text)
AS 'MODULE_PATHNAME', 'lancelsm_progress'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 16;

CREATE VIEW @extschema@.lancelsm_progress AS
  SELECT * FROM @extschema@.lancelsm_progress();

REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_progress() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_progress() TO pg_read_all_stats;
GRANT SELECT ON @extschema@.lancelsm_progress TO pg_read_all_stats;
-- END progress diagnosis

-- BEGIN due runs in slices
-- lancelsm_checkpoint_due(slice, slices) runs one of slices disjoint
-- slices of the declared tables, by a stable hash of (server, table_name)
-- that needs no coordination between the calls, one pg_cron job per
-- slice (docs/operations.md).  Called without arguments it runs the whole
-- set, as before.  A function's arguments cannot be altered: the new
-- signature is created beside the 1.2 one, takes over the EXECUTE grants
-- a DBA gave that one (by default PUBLIC's: network calls with the
-- caller's rights), and the 1.2 one is dropped.
CREATE FUNCTION @extschema@.lancelsm_checkpoint_due(
    slice pg_catalog.int4 DEFAULT 0,
    slices pg_catalog.int4 DEFAULT 1)
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
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE ROWS 16;

DO $$
DECLARE
  acl pg_catalog.aclitem[];
  g record;
BEGIN
  SELECT p.proacl INTO acl FROM pg_catalog.pg_proc p
   WHERE p.oid = '@extschema@.lancelsm_checkpoint_due()'::pg_catalog.regprocedure;
  IF acl IS NULL THEN
    RETURN;   -- never granted nor revoked: the default, as the new one's
  END IF;
  REVOKE ALL ON FUNCTION @extschema@.lancelsm_checkpoint_due(pg_catalog.int4, pg_catalog.int4)
    FROM PUBLIC;
  FOR g IN SELECT a.grantee, a.is_grantable FROM pg_catalog.aclexplode(acl) a
            WHERE a.privilege_type = 'EXECUTE'
  LOOP
    EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_checkpoint_due(pg_catalog.int4, pg_catalog.int4) TO %s%s',
      CASE WHEN g.grantee = 0 THEN 'PUBLIC'
           ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END,
      CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
  END LOOP;
END
$$;

DROP FUNCTION @extschema@.lancelsm_checkpoint_due();
-- END due runs in slices

-- BEGIN connections
-- The backend's connection pools, listed and closed, as postgres_fdw's
-- postgres_fdw_get_connections(), postgres_fdw_disconnect() and
-- postgres_fdw_disconnect_all() do for its connections.  They see and
-- close only the calling backend's own pools, so EXECUTE stays with
-- PUBLIC, as postgres_fdw grants them.  PARALLEL RESTRICTED: a parallel
-- worker has pools of its own.
CREATE FUNCTION @extschema@.lancelsm_get_connections()
RETURNS TABLE (
    server_name pg_catalog.text,
    user_name pg_catalog.text,
    connections pg_catalog.int4,
    requests pg_catalog.int4,
    valid pg_catalog.bool)
AS 'MODULE_PATHNAME', 'lancelsm_get_connections'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED ROWS 4;

CREATE FUNCTION @extschema@.lancelsm_disconnect(server pg_catalog.text)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'lancelsm_disconnect'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION @extschema@.lancelsm_disconnect_all()
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'lancelsm_disconnect_all'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.lancelsm_get_connections() IS
  'The connection pools of the calling backend: server, user mapping''s role, open connections, requests in flight, and whether still valid';
COMMENT ON FUNCTION @extschema@.lancelsm_disconnect(pg_catalog.text) IS
  'Closes the calling backend''s pooled connections to a server; true when any were open';
COMMENT ON FUNCTION @extschema@.lancelsm_disconnect_all() IS
  'Closes every pooled connection of the calling backend; true when any were open';
-- END connections

-- BEGIN comments
-- Help in psql (\df+, \dv+, \d+ lancelsm_table, \dew+): what each object
-- does, its units and what one call costs.  sql/comments.sql checks that
-- every object of the extension and every column of lancelsm_table has
-- one, and that no two are alike.  Functions whose name is unique are
-- named without their arguments, so that a later signature keeps its help.
COMMENT ON FOREIGN DATA WRAPPER lancelsm IS
  'LanceDB LSM write path: a server per LanceDB database (database, region or host_override), the API key in a user mapping; no foreign tables, and creating a server contacts nothing';
COMMENT ON FUNCTION @extschema@.lancelsm_fdw_validator IS
  'Validates the options of lancelsm servers and user mappings at CREATE and ALTER (names, URLs, timeouts in seconds, headers) and suggests the closest name for a misspelt one; no network request';

COMMENT ON FUNCTION @extschema@.lancelsm_flush IS
  'Seals the active memtable of every bucket of one LanceDB table into a new L0 generation; one flush request, idempotent, returns once sealed';
COMMENT ON FUNCTION @extschema@.lancelsm_compact IS
  'Starts one background compaction pass per bucket the server can latch and returns at once, without waiting for L0 to drain; one compact request';
COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint(pg_catalog.text, pg_catalog.text) IS
  'Flushes one table, then compacts and polls until no L0 generation at or below the flush''s watermark remains; a flush, a compact per pass and a stats request per poll (50 ms to 5 s apart), bounded by statement_timeout';
COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint(pg_catalog.text, pg_catalog.text[]) IS
  'Checkpoints every table of the array concurrently from this backend under the statement''s one deadline; one row per distinct table (ok, sqlstate, message, elapsed, passes, polls); at most 32 connections per server and user mapping';
COMMENT ON FUNCTION @extschema@.lancelsm_stats IS
  'One row per bucket of one table: WAL positions and lag (entries), L0 generations and bytes, memtable rows and bytes; one stats request (include_generation_rows makes the server open every L0 dataset to count rows)';
COMMENT ON FUNCTION @extschema@.lancelsm_generations IS
  'One row per L0 generation of one table (shard_id, generation, bytes, rows; rows NULL unless include_generation_rows); one stats request';
COMMENT ON FUNCTION @extschema@.lancelsm_memtables IS
  'One row per memtable of one table, oldest first and the active one last (rows, bytes, batches, the indexes it maintains); one stats request';

COMMENT ON FUNCTION @extschema@.lancelsm_set_write_spec IS
  'Turns a table''s LSM write path on: installs its write spec (bucket, identity or unsharded; maintained indexes, NULL for every one; writer defaults as a JSON object of strings); one request on a fresh connection; EXECUTE revoked from PUBLIC';
COMMENT ON FUNCTION @extschema@.lancelsm_unset_write_spec IS
  'Turns a table''s LSM write path off: removes its write spec (55000 when none is set); one request on a fresh connection, not retried after a 5xx; EXECUTE revoked from PUBLIC';
COMMENT ON FUNCTION @extschema@.lancelsm_write_spec IS
  'Reads one table''s LSM write spec: one row (sharding, column, number of buckets, the indexes the server resolved, writer defaults), or none when the path is off; one request';

COMMENT ON TABLE @extschema@.lancelsm_table IS
  'The declared LanceDB tables, one row per (server, table_name), with their due thresholds; read by the stats views and the due job, changed by lancelsm_add_table, lancelsm_alter_table and lancelsm_remove_table, and dumped by pg_dump';
COMMENT ON COLUMN @extschema@.lancelsm_table.server IS
  'Name of the lancelsm foreign server that reaches the table';
COMMENT ON COLUMN @extschema@.lancelsm_table.table_name IS
  'Full LanceDB table identifier, namespace levels joined by the server''s id_delimiter (default $)';
COMMENT ON COLUMN @extschema@.lancelsm_table.added_at IS
  'When the table was declared; max_checkpoint_age counts from it until the first successful checkpoint';
COMMENT ON COLUMN @extschema@.lancelsm_table.max_l0_generations IS
  'Compact when the L0 generations summed over the buckets exceed this count; NULL: not used';
COMMENT ON COLUMN @extschema@.lancelsm_table.max_l0_bytes IS
  'Compact when the L0 bytes summed over the buckets exceed this many bytes; NULL: not used';
COMMENT ON COLUMN @extschema@.lancelsm_table.max_wal_lag IS
  'Flush when the WAL lag of any one bucket exceeds this many WAL entries; NULL: not used';
COMMENT ON COLUMN @extschema@.lancelsm_table.max_memtable_rows IS
  'Flush when the memtable rows summed over the buckets exceed this count; NULL: not used';
COMMENT ON COLUMN @extschema@.lancelsm_table.max_checkpoint_age IS
  'Checkpoint when last_checkpoint_at (else added_at) is older than this interval; NULL: not used';
COMMENT ON COLUMN @extschema@.lancelsm_table.last_checkpoint_at IS
  'Start of the table''s last successful checkpoint by lancelsm_checkpoint_due() or lancelsm_checkpoint_all(); never moves back; NULL before the first';

COMMENT ON FUNCTION @extschema@.lancelsm_add_table IS
  'Declares a LanceDB table in lancelsm_table, with optional due thresholds (NULL: not used); checks the server and the name, contacts no server; EXECUTE revoked from PUBLIC';
COMMENT ON FUNCTION @extschema@.lancelsm_alter_table IS
  'Changes the due thresholds (max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows, max_checkpoint_age) of a declared table, keeping those not given and setting those named in clear to NULL; 42704 for a table not declared; one row updated, contacts no server; EXECUTE revoked from PUBLIC';
COMMENT ON FUNCTION @extschema@.lancelsm_remove_table IS
  'Forgets a declared table: deletes its row of lancelsm_table and returns whether there was one; the LanceDB table is untouched and no server is contacted';

COMMENT ON FUNCTION @extschema@.lancelsm_declared_bucket_stats IS
  'The rows of the view lancelsm_bucket_stats: the stats of every declared table, read concurrently, one row per bucket; one stats request per declared table';
COMMENT ON FUNCTION @extschema@.lancelsm_declared_table_stats IS
  'The rows of the view lancelsm_table_stats: one row per declared table with bucket totals, thresholds and the due verdict, or the error that kept its stats from being read; one stats request per declared table';
COMMENT ON VIEW @extschema@.lancelsm_bucket_stats IS
  'Per bucket of every declared table: lancelsm_stats'' columns after server and table_name (l0_rows NULL); a table whose stats fail has no rows here; each query sends one stats request per declared table';
COMMENT ON VIEW @extschema@.lancelsm_table_stats IS
  'Per declared table: L0 and memtable totals, WAL lag, its thresholds, last_checkpoint_at, and whether lancelsm_checkpoint_due() would act now (due, due_reason, due_action), or error_sqlstate and error; each query sends one stats request per declared table';

COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint_all IS
  'Checkpoints every declared table concurrently until drained, one row per table (a failure is a row with ok false, never an error); records last_checkpoint_at; with share_checkpoints, skips a table another session is checkpointing';
COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint_due IS
  'The due job: reads every declared table''s stats concurrently, then flushes, compacts or checkpoints only the tables past a threshold, without waiting for a drain; one stats request per table plus one action per due table; records last_checkpoint_at';

COMMENT ON FUNCTION @extschema@.lancelsm_progress() IS
  'The rows of the view lancelsm_progress, read from shared memory; no network request; 55000 unless lancelsm is in shared_preload_libraries; EXECUTE granted to pg_read_all_stats';
COMMENT ON VIEW @extschema@.lancelsm_progress IS
  'One row per table being checkpointed now in any database of the cluster: phase, the bucket waited on, target and outstanding L0 generations, passes, polls, retries, reissues; reads shared memory only; needs lancelsm preloaded';
COMMENT ON FUNCTION @extschema@.lancelsm_info() IS
  'The one row of the view lancelsm_info, read from shared memory and pg_extension; no network request; counts NULL unless lancelsm is preloaded; EXECUTE granted to pg_read_all_stats';
COMMENT ON VIEW @extschema@.lancelsm_info IS
  'One row on lancelsm itself: library and catalog versions, whether it is preloaded, progress, history and herd entries in use against their maximum, checkpoints run without a progress row, history, pace and run entries evicted, runs kept against their maximum, tables counted against their maximum and counter entries evicted; reads shared memory only';
COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint_history() IS
  'The rows of the view lancelsm_checkpoint_history, read from shared memory; no network request; 55000 unless lancelsm is in shared_preload_libraries; EXECUTE granted to pg_read_all_stats';
COMMENT ON VIEW @extschema@.lancelsm_checkpoint_history IS
  'The last checkpoint outcome of each table, cluster-wide (finished_at, ok, sqlstate, message, elapsed, passes), at most lancelsm.max_history_entries tables, kept across clean restarts; reads shared memory only; needs lancelsm preloaded';
COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint_history_reset IS
  'Empties the checkpoint history of every database of the cluster; writes shared memory only, no network request; superusers only unless granted';
-- END comments

-- BEGIN durable outcomes
-- Each declared table keeps what was last done to it, in its own row of
-- lancelsm_table: it survives restarts and failovers, is readable on a
-- standby, is dumped by pg_dump with the rest of the row
-- (pg_extension_config_dump of 1.1) and grows with the declared set only.
-- Written, in the caller's transaction and with the caller's rights, by
-- lancelsm_checkpoint_due() (its actions and failed stats reads; a table
-- it leaves alone writes nothing, unless its last outcome was a failure
-- and its stats read succeeded), lancelsm_checkpoint_all() and direct
-- calls of lancelsm_flush, lancelsm_compact and lancelsm_checkpoint on a
-- declared table (docs/operations.md, "Durable outcomes").
ALTER TABLE @extschema@.lancelsm_table
  ADD COLUMN last_action pg_catalog.text
    CONSTRAINT lancelsm_table_last_action_check
    CHECK (last_action IN ('stats', 'flush', 'compact', 'checkpoint')),
  ADD COLUMN last_source pg_catalog.text
    CONSTRAINT lancelsm_table_last_source_check
    CHECK (last_source IN ('direct', 'checkpoint_all', 'checkpoint_due')),
  ADD COLUMN last_ok pg_catalog.bool,
  ADD COLUMN last_sqlstate pg_catalog.text,
  ADD COLUMN last_message pg_catalog.text,
  ADD COLUMN last_started_at pg_catalog.timestamptz,
  ADD COLUMN last_finished_at pg_catalog.timestamptz;

COMMENT ON COLUMN @extschema@.lancelsm_table.last_action IS
  'What was last done to the table: stats (a lancelsm_checkpoint_due() stats read), flush, compact or checkpoint; NULL: nothing recorded yet';
COMMENT ON COLUMN @extschema@.lancelsm_table.last_source IS
  'Who did it: direct (lancelsm_flush, lancelsm_compact, lancelsm_checkpoint), checkpoint_all or checkpoint_due';
COMMENT ON COLUMN @extschema@.lancelsm_table.last_ok IS
  'Whether the last action succeeded';
COMMENT ON COLUMN @extschema@.lancelsm_table.last_sqlstate IS
  'The SQLSTATE of the last action''s failure; NULL for a success';
COMMENT ON COLUMN @extschema@.lancelsm_table.last_message IS
  'The message of the last action''s failure (errmsg: errdetail, without secrets), or a note on a success (a joined checkpoint); NULL otherwise';
COMMENT ON COLUMN @extschema@.lancelsm_table.last_started_at IS
  'When the last action started; NULL when it never started (a server or name refused)';
COMMENT ON COLUMN @extschema@.lancelsm_table.last_finished_at IS
  'When the last action ended';
-- since 1.4 a direct checkpoint on a declared table sets it too
COMMENT ON COLUMN @extschema@.lancelsm_table.last_checkpoint_at IS
  'Start of the table''s last successful checkpoint by lancelsm_checkpoint_due(), lancelsm_checkpoint_all() or lancelsm_checkpoint on the declared table; never moves back; NULL before the first';

-- The checkpoints running in this database with their phase, for
-- lancelsm_status.  Unlike lancelsm_progress() it returns no rows, rather
-- than raising 55000, without lancelsm in shared_preload_libraries, and it
-- shows this database's checkpoints only: EXECUTE is left to PUBLIC, as
-- the view that calls it is readable by PUBLIC (a view's functions are
-- called with the rights of the role that reads it).
CREATE FUNCTION @extschema@.lancelsm_running()
RETURNS TABLE (
    server pg_catalog.text,
    table_name pg_catalog.text,
    pid pg_catalog.int4,
    phase pg_catalog.text,
    started_at pg_catalog.timestamptz)
AS 'MODULE_PATHNAME', 'lancelsm_running'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 16;
COMMENT ON FUNCTION @extschema@.lancelsm_running() IS
  'The checkpoints running in this database, with their phase; no rows without lancelsm in shared_preload_libraries';

-- One row per declared table: its thresholds, its durable outcome and the
-- checkpoint running on it, if any (the oldest one when several backends
-- run one).  Reads the catalog and shared memory only: no request to any
-- LanceDB server, so that alerts and exporters can read it at every scrape.
CREATE VIEW @extschema@.lancelsm_status AS
  SELECT t.server, t.table_name, t.max_l0_generations, t.max_l0_bytes,
         t.max_wal_lag, t.max_memtable_rows, t.max_checkpoint_age,
         t.last_action, t.last_source, t.last_ok, t.last_sqlstate,
         t.last_message, t.last_started_at, t.last_finished_at,
         t.last_checkpoint_at, r.phase AS running_phase,
         r.pid AS running_pid, r.started_at AS running_since
    FROM @extschema@.lancelsm_table t
    LEFT JOIN (SELECT DISTINCT ON (server, table_name)
                      server, table_name, pid, phase, started_at
                 FROM @extschema@.lancelsm_running()
                ORDER BY server, table_name, started_at, pid) r
      ON r.server OPERATOR(pg_catalog.=) t.server
     AND r.table_name OPERATOR(pg_catalog.=) t.table_name;
GRANT SELECT ON @extschema@.lancelsm_status TO PUBLIC;
COMMENT ON VIEW @extschema@.lancelsm_status IS
  'One row per declared table: thresholds, the last action and its outcome, the last checkpoint, and the checkpoint running now; reads no LanceDB server';
-- END durable outcomes

-- BEGIN run history
-- One row per action lancelsm ran on a table (flush, compact, checkpoint;
-- called directly or by lancelsm_checkpoint_all() or
-- lancelsm_checkpoint_due()), kept in shared memory: at most
-- lancelsm.max_run_history runs, a full history evicting by the fair rule
-- (docs/operations.md, "Run history"), not kept across restarts.
-- Readable by pg_read_all_stats, as the checkpoint history.
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
    requests pg_catalog.int4)
AS 'MODULE_PATHNAME', 'lancelsm_run_history'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 1000;

CREATE VIEW @extschema@.lancelsm_run_history AS
  SELECT * FROM @extschema@.lancelsm_run_history();

REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_run_history() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_run_history() TO pg_read_all_stats;
GRANT SELECT ON @extschema@.lancelsm_run_history TO pg_read_all_stats;

COMMENT ON FUNCTION @extschema@.lancelsm_run_history() IS
  'The rows of the view lancelsm_run_history, read from shared memory in the order the runs ended; no network request; 55000 unless lancelsm is in shared_preload_libraries; EXECUTE granted to pg_read_all_stats';
COMMENT ON VIEW @extschema@.lancelsm_run_history IS
  'One row per flush, compact or checkpoint lancelsm ran on a table, cluster-wide (action, source, started_at, finished_at, ok, sqlstate, message, passes, polls, requests), at most lancelsm.max_run_history, lost at restart; reads shared memory only; needs lancelsm preloaded';
-- END run history

-- BEGIN table counters
-- Per (database, foreign server, table) and action (flush, compact,
-- checkpoint): the runs lancelsm ran, their failures, passes, polls,
-- requests, retries and seconds, cumulative while the server runs, as
-- pg_stat_user_functions counts calls and time; in shared memory, at
-- most lancelsm.max_table_counters tables, a full set evicting by the
-- fair rule (docs/operations.md, "Table counters").  Readable by
-- pg_read_all_stats, as the run history; the reset is for superusers
-- unless granted, as pg_stat_statements_reset.
CREATE FUNCTION @extschema@.lancelsm_table_counters()
RETURNS TABLE (
    dbid pg_catalog.oid,
    database pg_catalog.text,
    serverid pg_catalog.oid,
    server pg_catalog.text,
    table_name pg_catalog.text,
    action pg_catalog.text,
    runs pg_catalog.int8,
    failures pg_catalog.int8,
    passes pg_catalog.int8,
    polls pg_catalog.int8,
    requests pg_catalog.int8,
    retries pg_catalog.int8,
    seconds pg_catalog.float8,
    stats_since pg_catalog.timestamptz)
AS 'MODULE_PATHNAME', 'lancelsm_table_counters'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 1000;

CREATE VIEW @extschema@.lancelsm_table_counters AS
  SELECT * FROM @extschema@.lancelsm_table_counters();

REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_table_counters() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_table_counters() TO pg_read_all_stats;
GRANT SELECT ON @extschema@.lancelsm_table_counters TO pg_read_all_stats;

CREATE FUNCTION @extschema@.lancelsm_table_counters_reset(
    dbid pg_catalog.oid DEFAULT NULL,
    serverid pg_catalog.oid DEFAULT NULL,
    table_name pg_catalog.text DEFAULT NULL)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'lancelsm_table_counters_reset'
LANGUAGE C VOLATILE PARALLEL SAFE;

REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_table_counters_reset(pg_catalog.oid,
  pg_catalog.oid, pg_catalog.text) FROM PUBLIC;

COMMENT ON FUNCTION @extschema@.lancelsm_table_counters() IS
  'The rows of the view lancelsm_table_counters, read from shared memory; no network request; 55000 unless lancelsm is in shared_preload_libraries; EXECUTE granted to pg_read_all_stats';
COMMENT ON VIEW @extschema@.lancelsm_table_counters IS
  'Per table and action (flush, compact, checkpoint), cluster-wide: runs, failures, passes, polls, requests, retries and seconds since stats_since, at most lancelsm.max_table_counters tables, lost at restart; reads shared memory only; needs lancelsm preloaded';
COMMENT ON FUNCTION @extschema@.lancelsm_table_counters_reset IS
  'Removes the table counters of a database, a foreign server and a table (OIDs as lancelsm_table_counters shows them; NULL matches any) and returns how many tables it removed; writes shared memory only; EXECUTE revoked from PUBLIC';
-- END table counters

-- BEGIN last stats
-- The stats lancelsm last read of each table (by lancelsm_table_stats,
-- lancelsm_bucket_stats or lancelsm_checkpoint_due()'s reads), kept with
-- its table counters, with the time of the read: what exporters read at
-- every scrape without a request to LanceDB (docs/monitoring.md).
-- Readable by pg_read_all_stats, as the table counters.
CREATE FUNCTION @extschema@.lancelsm_last_stats()
RETURNS TABLE (
    dbid pg_catalog.oid,
    database pg_catalog.text,
    serverid pg_catalog.oid,
    server pg_catalog.text,
    table_name pg_catalog.text,
    read_at pg_catalog.timestamptz,
    ok pg_catalog.bool,
    sqlstate pg_catalog.text,
    lsm_enabled pg_catalog.bool,
    buckets pg_catalog.int4,
    l0_generations pg_catalog.int8,
    l0_bytes pg_catalog.int8,
    memtable_rows pg_catalog.int8,
    wal_lag_total pg_catalog.int8,
    wal_lag_max pg_catalog.int8,
    compacting_buckets pg_catalog.int4)
AS 'MODULE_PATHNAME', 'lancelsm_last_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 1000;

CREATE VIEW @extschema@.lancelsm_last_stats AS
  SELECT * FROM @extschema@.lancelsm_last_stats();

REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_last_stats() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_last_stats() TO pg_read_all_stats;
GRANT SELECT ON @extschema@.lancelsm_last_stats TO pg_read_all_stats;

COMMENT ON FUNCTION @extschema@.lancelsm_last_stats() IS
  'The rows of the view lancelsm_last_stats, read from shared memory; no network request; 55000 unless lancelsm is in shared_preload_libraries; EXECUTE granted to pg_read_all_stats';
COMMENT ON VIEW @extschema@.lancelsm_last_stats IS
  'Per table, cluster-wide: the stats totals lancelsm last read (buckets, L0 generations and bytes, memtable rows, WAL lag, compacting buckets) and when, or that read''s SQLSTATE; kept with the table counters, lost at restart; reads shared memory only; needs lancelsm preloaded';
-- END last stats
