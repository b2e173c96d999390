/* lancelsm--1.2--1.3.sql: progress and history show the database of each entry. */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.3'" to load this file. \quit

-- BEGIN progress and history by database
-- Shared memory is the cluster's: since 1.3 every progress entry and every
-- kept outcome belongs to the database whose checkpoint wrote it (with the
-- foreign server's OID, never a name another database can choose).  Both
-- readers show every database's entries with a database column (the name,
-- NULL once the database is dropped), as pg_stat_statements shows dbid:
-- an exporter connected to one database still sees the whole cluster.  A
-- function's result columns cannot be altered, so the functions and their
-- views are dropped and created again, with the grants of 1.1: EXECUTE and
-- SELECT to pg_read_all_stats, not PUBLIC.
DROP VIEW @extschema@.lancelsm_progress;
DROP FUNCTION @extschema@.lancelsm_progress();
DROP VIEW @extschema@.lancelsm_checkpoint_history;
DROP FUNCTION @extschema@.lancelsm_checkpoint_history();

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
    started_at pg_catalog.timestamptz)
AS 'MODULE_PATHNAME', 'lancelsm_progress'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 16;

CREATE VIEW @extschema@.lancelsm_progress AS
  SELECT * FROM @extschema@.lancelsm_progress();

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
    passes pg_catalog.int4)
AS 'MODULE_PATHNAME', 'lancelsm_checkpoint_history'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 100;

CREATE VIEW @extschema@.lancelsm_checkpoint_history AS
  SELECT * FROM @extschema@.lancelsm_checkpoint_history();

REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_progress() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_checkpoint_history() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_progress() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_checkpoint_history() TO pg_read_all_stats;
GRANT SELECT ON @extschema@.lancelsm_progress TO pg_read_all_stats;
GRANT SELECT ON @extschema@.lancelsm_checkpoint_history TO pg_read_all_stats;
-- END progress and history by database
