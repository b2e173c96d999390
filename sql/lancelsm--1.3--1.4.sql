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
-- shared-memory entries in use against their maximum, and the skipped
-- count that lancelsm_progress_skipped() returned, which it replaces.
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
    history_evicted pg_catalog.int8)
AS 'MODULE_PATHNAME', 'lancelsm_info'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 1;

CREATE VIEW @extschema@.lancelsm_info AS
  SELECT * FROM @extschema@.lancelsm_info();

REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_info() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_info() TO pg_read_all_stats;
GRANT SELECT ON @extschema@.lancelsm_info TO pg_read_all_stats;
-- END lancelsm_info
