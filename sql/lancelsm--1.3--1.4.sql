/* lancelsm--1.3--1.4.sql: the 1.4 objects (see CHANGELOG.md). */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.4'" to load this file. \quit

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
