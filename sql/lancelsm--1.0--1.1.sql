/* lancelsm--1.0--1.1.sql: declared tables, monitoring views, progress and history. */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.1'" to load this file. \quit

-- BEGIN declared tables
-- The LanceDB tables a DBA manages, one row per (server, table_name).  Its
-- rows are dumped by pg_dump (pg_extension_config_dump).  Everyone may read
-- it; only its owner (the extension's owner, usually a superuser) or roles
-- granted INSERT / DELETE and EXECUTE on the two functions below change it.
CREATE TABLE @extschema@.lancelsm_table (
    server pg_catalog.text NOT NULL,
    table_name pg_catalog.text NOT NULL,
    added_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (server, table_name));
SELECT pg_catalog.pg_extension_config_dump('@extschema@.lancelsm_table', '');
GRANT SELECT ON @extschema@.lancelsm_table TO PUBLIC;

-- Declaring checks the server (exists, lancelsm wrapper) and the name, but
-- contacts nothing; declaring twice is a NOTICE and no change.  Run with
-- the caller's rights: EXECUTE is revoked from PUBLIC, and a delegate also
-- needs INSERT or DELETE on lancelsm_table.
CREATE FUNCTION @extschema@.lancelsm_add_table(server pg_catalog.text, table_name pg_catalog.text)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_add_table'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.lancelsm_add_table(pg_catalog.text, pg_catalog.text) FROM PUBLIC;

CREATE FUNCTION @extschema@.lancelsm_remove_table(server pg_catalog.text, table_name pg_catalog.text)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'lancelsm_remove_table'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.lancelsm_remove_table(pg_catalog.text, pg_catalog.text) FROM PUBLIC;

-- The functions over every declared table talk to the network with the
-- caller's rights (USAGE and a user mapping per server, as every lancelsm
-- function): VOLATILE, PARALLEL UNSAFE, EXECUTE left to PUBLIC.  A table
-- the caller cannot reach is a row carrying its error, never an error.
CREATE FUNCTION @extschema@.lancelsm_declared_bucket_stats()
RETURNS TABLE (
    server pg_catalog.text,
    table_name pg_catalog.text,
    shard_id pg_catalog.text,
    status pg_catalog.text,
    writer_epoch pg_catalog.int8,
    manifest_version pg_catalog.int8,
    current_generation pg_catalog.int8,
    replay_after_wal_entry_position pg_catalog.int8,
    wal_entry_position_last_seen pg_catalog.int8,
    compacting pg_catalog.bool,
    wal_lag pg_catalog.int8,
    l0_generations pg_catalog.int8,
    l0_bytes pg_catalog.int8,
    oldest_l0_generation pg_catalog.int8,
    newest_l0_generation pg_catalog.int8,
    l0_rows pg_catalog.int8,
    memtables pg_catalog.int8,
    memtable_rows pg_catalog.int8,
    memtable_bytes pg_catalog.int8)
AS 'MODULE_PATHNAME', 'lancelsm_declared_bucket_stats'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE ROWS 64;

CREATE FUNCTION @extschema@.lancelsm_declared_table_stats()
RETURNS TABLE (
    server pg_catalog.text,
    table_name pg_catalog.text,
    lsm_enabled pg_catalog.bool,
    buckets pg_catalog.int4,
    l0_generations pg_catalog.int8,
    l0_bytes pg_catalog.int8,
    memtable_rows pg_catalog.int8,
    wal_lag_total pg_catalog.int8,
    wal_lag_max pg_catalog.int8,
    compacting_buckets pg_catalog.int4,
    error_sqlstate pg_catalog.text,
    error pg_catalog.text)
AS 'MODULE_PATHNAME', 'lancelsm_declared_table_stats'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE ROWS 16;

CREATE FUNCTION @extschema@.lancelsm_checkpoint_all()
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
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE ROWS 16;

-- One query of a view costs one stats request per declared table.
CREATE VIEW @extschema@.lancelsm_bucket_stats AS
  SELECT server, table_name, shard_id, status, writer_epoch, manifest_version,
         current_generation, replay_after_wal_entry_position,
         wal_entry_position_last_seen, compacting, wal_lag, l0_generations,
         l0_bytes, oldest_l0_generation, newest_l0_generation, l0_rows,
         memtables, memtable_rows, memtable_bytes
    FROM @extschema@.lancelsm_declared_bucket_stats();
GRANT SELECT ON @extschema@.lancelsm_bucket_stats TO PUBLIC;

CREATE VIEW @extschema@.lancelsm_table_stats AS
  SELECT server, table_name, lsm_enabled, buckets, l0_generations, l0_bytes,
         memtable_rows, wal_lag_total, wal_lag_max, compacting_buckets,
         error_sqlstate, error
    FROM @extschema@.lancelsm_declared_table_stats();
GRANT SELECT ON @extschema@.lancelsm_table_stats TO PUBLIC;
-- END declared tables

-- BEGIN progress and history
-- Running checkpoints and the last outcome of each table's checkpoint, read
-- from shared memory: they need lancelsm in shared_preload_libraries and
-- raise 55000 without it.  The readers are VOLATILE (every call sees the
-- live state) and PARALLEL SAFE (any process reads the same shared memory);
-- the reset writes it and is PARALLEL UNSAFE.  Table and server names and
-- error messages of every role's checkpoints show here, so EXECUTE and
-- SELECT go to pg_read_all_stats (pg_monitor includes it), not PUBLIC; the
-- reset is for superusers only unless a superuser grants it.
CREATE FUNCTION @extschema@.lancelsm_progress()
RETURNS TABLE (
    pid pg_catalog.int4,
    server pg_catalog.text,
    table_name pg_catalog.text,
    phase pg_catalog.text,
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

CREATE FUNCTION @extschema@.lancelsm_progress_skipped()
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'lancelsm_progress_skipped'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE FUNCTION @extschema@.lancelsm_checkpoint_history()
RETURNS TABLE (
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

CREATE FUNCTION @extschema@.lancelsm_checkpoint_history_reset()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_checkpoint_history_reset'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_progress() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_progress_skipped() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_checkpoint_history() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.lancelsm_checkpoint_history_reset() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_progress() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_progress_skipped() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION @extschema@.lancelsm_checkpoint_history() TO pg_read_all_stats;
GRANT SELECT ON @extschema@.lancelsm_progress TO pg_read_all_stats;
GRANT SELECT ON @extschema@.lancelsm_checkpoint_history TO pg_read_all_stats;
-- END progress and history
