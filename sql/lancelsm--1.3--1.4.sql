/* lancelsm--1.3--1.4.sql: the 1.4 objects (see CHANGELOG.md). */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.4'" to load this file. \quit

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
