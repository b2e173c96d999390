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
