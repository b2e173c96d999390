/* lancelsm--1.0.sql: the LanceDB LSM write path from SQL. */

\echo Use "CREATE EXTENSION lancelsm" to load this file. \quit

-- The foreign-data wrapper: servers name a LanceDB database, user mappings
-- hold the API key.  No scan handler: lancelsm has no foreign tables.
CREATE FUNCTION @extschema@.lancelsm_fdw_validator(pg_catalog.text[], pg_catalog.oid)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_fdw_validator'
LANGUAGE C STRICT;

CREATE FOREIGN DATA WRAPPER lancelsm
  VALIDATOR @extschema@.lancelsm_fdw_validator;

-- Every function below talks to the network: VOLATILE, PARALLEL UNSAFE,
-- run with the caller's rights (USAGE on the server and a user mapping are
-- checked at each call).  EXECUTE stays granted to PUBLIC, as for any
-- function: the server's USAGE privilege is the gate.
CREATE FUNCTION @extschema@.lancelsm_flush(server pg_catalog.text, table_name pg_catalog.text)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_flush'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION @extschema@.lancelsm_compact(server pg_catalog.text, table_name pg_catalog.text)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_compact'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION @extschema@.lancelsm_checkpoint(server pg_catalog.text, table_name pg_catalog.text)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_checkpoint'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION @extschema@.lancelsm_stats(
    server pg_catalog.text,
    table_name pg_catalog.text,
    include_generation_rows pg_catalog.bool DEFAULT false)
RETURNS TABLE (
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
AS 'MODULE_PATHNAME', 'lancelsm_stats'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE ROWS 16;

CREATE FUNCTION @extschema@.lancelsm_generations(
    server pg_catalog.text,
    table_name pg_catalog.text,
    include_generation_rows pg_catalog.bool DEFAULT false)
RETURNS TABLE (
    shard_id pg_catalog.text,
    generation pg_catalog.int8,
    bytes pg_catalog.int8,
    "rows" pg_catalog.int8)
AS 'MODULE_PATHNAME', 'lancelsm_generations'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE ROWS 64;

CREATE FUNCTION @extschema@.lancelsm_memtables(
    server pg_catalog.text,
    table_name pg_catalog.text)
RETURNS TABLE (
    shard_id pg_catalog.text,
    generation pg_catalog.int8,
    "rows" pg_catalog.int8,
    bytes pg_catalog.int8,
    batches pg_catalog.int8,
    indexes pg_catalog.text[])
AS 'MODULE_PATHNAME', 'lancelsm_memtables'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE ROWS 32;

-- Many tables at once, one row per table: the call a pg_cron job needs.
CREATE FUNCTION @extschema@.lancelsm_checkpoint(server pg_catalog.text, table_names pg_catalog.text[])
RETURNS TABLE (
    table_name pg_catalog.text,
    ok pg_catalog.bool,
    sqlstate pg_catalog.text,
    message pg_catalog.text,
    elapsed pg_catalog.interval,
    passes pg_catalog.int4,
    polls pg_catalog.int4)
AS 'MODULE_PATHNAME', 'lancelsm_checkpoint_many'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE ROWS 8;
