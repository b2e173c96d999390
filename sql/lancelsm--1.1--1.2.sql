/* lancelsm--1.1--1.2.sql: write spec functions and per-table maintenance thresholds. */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.2'" to load this file. \quit

-- BEGIN write spec
-- The LSM write spec turns a table's LSM write path on (set), off (unset)
-- and tells how it is sharded (read).  All three talk to the network:
-- VOLATILE, PARALLEL UNSAFE.  Not STRICT where NULL means something:
-- maintained_indexes NULL asks for every maintainable index.  Setting and
-- unsetting change how a table takes writes, so EXECUTE is revoked from
-- PUBLIC: a monitoring role with USAGE and a user mapping must not switch
-- a table's LSM path off.  Grant them to the role that administers the
-- LanceDB tables (README.md, "The LSM write spec").  Reading follows the
-- other readers: EXECUTE left to PUBLIC.
CREATE FUNCTION @extschema@.lancelsm_set_write_spec(
    server pg_catalog.text,
    table_name pg_catalog.text,
    sharding pg_catalog.text,
    sharding_column pg_catalog.text DEFAULT NULL,
    num_buckets pg_catalog.int4 DEFAULT NULL,
    maintained_indexes pg_catalog.text[] DEFAULT NULL,
    writer_config_defaults pg_catalog.jsonb DEFAULT '{}')
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_set_write_spec'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.lancelsm_set_write_spec(pg_catalog.text,
    pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.int4,
    pg_catalog.text[], pg_catalog.jsonb) FROM PUBLIC;

CREATE FUNCTION @extschema@.lancelsm_unset_write_spec(server pg_catalog.text,
    table_name pg_catalog.text)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_unset_write_spec'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.lancelsm_unset_write_spec(pg_catalog.text,
    pg_catalog.text) FROM PUBLIC;

CREATE FUNCTION @extschema@.lancelsm_write_spec(server pg_catalog.text,
    table_name pg_catalog.text)
RETURNS TABLE (
    sharding pg_catalog.text,
    sharding_column pg_catalog.text,
    num_buckets pg_catalog.int4,
    maintained_indexes pg_catalog.text[],
    writer_config_defaults pg_catalog.jsonb)
AS 'MODULE_PATHNAME', 'lancelsm_write_spec'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE ROWS 1;
-- END write spec
-- BEGIN checkpoint when due
-- Per-table thresholds on the declared tables (NULL: not used) and the
-- start of the table's last successful checkpoint.  The rows, thresholds
-- included, stay dumped by pg_dump (pg_extension_config_dump of 1.1).  A
-- table is due when a statistic exceeds its threshold (value > maximum):
--   max_l0_generations, max_l0_bytes  (L0 totals over the buckets) -> compact
--   max_wal_lag  (the largest WAL lag of a bucket)                  -> flush
--   max_memtable_rows  (memtable rows over the buckets)             -> flush
--   max_checkpoint_age  (since last_checkpoint_at, else added_at)   -> checkpoint
-- and both a compact and a flush cure together make a checkpoint.
ALTER TABLE @extschema@.lancelsm_table
  ADD COLUMN max_l0_generations pg_catalog.int8
    CONSTRAINT lancelsm_table_max_l0_generations_check CHECK (max_l0_generations >= 0),
  ADD COLUMN max_l0_bytes pg_catalog.int8
    CONSTRAINT lancelsm_table_max_l0_bytes_check CHECK (max_l0_bytes >= 0),
  ADD COLUMN max_wal_lag pg_catalog.int8
    CONSTRAINT lancelsm_table_max_wal_lag_check CHECK (max_wal_lag >= 0),
  ADD COLUMN max_memtable_rows pg_catalog.int8
    CONSTRAINT lancelsm_table_max_memtable_rows_check CHECK (max_memtable_rows >= 0),
  ADD COLUMN max_checkpoint_age pg_catalog.interval
    CONSTRAINT lancelsm_table_max_checkpoint_age_check
    CHECK (max_checkpoint_age > pg_catalog.make_interval()),
  ADD COLUMN last_checkpoint_at pg_catalog.timestamptz;

-- lancelsm_add_table gains the thresholds as optional arguments.  It is
-- dropped and created again rather than overloaded: an overload with
-- defaults would make every two-argument call ambiguous.  Calls with two
-- arguments keep working; EXECUTE granted on the 1.1 function to a delegate
-- must be granted again on the new signature (README.md, "Declared tables").
-- Not STRICT any more: NULL thresholds are the default; a NULL server or
-- table_name still returns NULL and changes nothing.
DROP FUNCTION @extschema@.lancelsm_add_table(pg_catalog.text, pg_catalog.text);
CREATE FUNCTION @extschema@.lancelsm_add_table(
    server pg_catalog.text,
    table_name pg_catalog.text,
    max_l0_generations pg_catalog.int8 DEFAULT NULL,
    max_l0_bytes pg_catalog.int8 DEFAULT NULL,
    max_wal_lag pg_catalog.int8 DEFAULT NULL,
    max_memtable_rows pg_catalog.int8 DEFAULT NULL,
    max_checkpoint_age pg_catalog.interval DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_add_table'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.lancelsm_add_table(pg_catalog.text, pg_catalog.text,
  pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval) FROM PUBLIC;

-- Sets a declared table's five thresholds to exactly the arguments (an
-- omitted one is NULL: not used).  Raises 42704 for a table not declared.
-- EXECUTE is revoked from PUBLIC; a delegate also needs UPDATE on
-- lancelsm_table.
CREATE FUNCTION @extschema@.lancelsm_alter_table(
    server pg_catalog.text,
    table_name pg_catalog.text,
    max_l0_generations pg_catalog.int8 DEFAULT NULL,
    max_l0_bytes pg_catalog.int8 DEFAULT NULL,
    max_wal_lag pg_catalog.int8 DEFAULT NULL,
    max_memtable_rows pg_catalog.int8 DEFAULT NULL,
    max_checkpoint_age pg_catalog.interval DEFAULT NULL)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_alter_table'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.lancelsm_alter_table(pg_catalog.text, pg_catalog.text,
  pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval) FROM PUBLIC;

-- lancelsm_table_stats shows the thresholds and whether the table is due.
-- The function keeps its C symbol: it fills the 1.1 columns or these,
-- after the number of columns it is declared with.
DROP VIEW @extschema@.lancelsm_table_stats;
DROP FUNCTION @extschema@.lancelsm_declared_table_stats();
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
    error pg_catalog.text,
    max_l0_generations pg_catalog.int8,
    max_l0_bytes pg_catalog.int8,
    max_wal_lag pg_catalog.int8,
    max_memtable_rows pg_catalog.int8,
    max_checkpoint_age pg_catalog.interval,
    last_checkpoint_at pg_catalog.timestamptz,
    due pg_catalog.bool,
    due_reason pg_catalog.text,
    due_action pg_catalog.text)
AS 'MODULE_PATHNAME', 'lancelsm_declared_table_stats'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE ROWS 16;

CREATE VIEW @extschema@.lancelsm_table_stats AS
  SELECT server, table_name, lsm_enabled, buckets, l0_generations, l0_bytes,
         memtable_rows, wal_lag_total, wal_lag_max, compacting_buckets,
         error_sqlstate, error, max_l0_generations, max_l0_bytes, max_wal_lag,
         max_memtable_rows, max_checkpoint_age, last_checkpoint_at, due,
         due_reason, due_action
    FROM @extschema@.lancelsm_declared_table_stats();
GRANT SELECT ON @extschema@.lancelsm_table_stats TO PUBLIC;

-- Reads the stats of every declared table concurrently, then acts on
-- exactly the due tables concurrently, without waiting for compaction to
-- drain: one row per declared table.  Network calls with the caller's
-- rights, as lancelsm_checkpoint_all(): EXECUTE left to PUBLIC.  It
-- records last_checkpoint_at with the caller's rights too; where it
-- cannot (read-only transaction, no UPDATE on lancelsm_table) it says so
-- in a WARNING and the rows are returned all the same.
CREATE FUNCTION @extschema@.lancelsm_checkpoint_due()
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
-- END checkpoint when due
