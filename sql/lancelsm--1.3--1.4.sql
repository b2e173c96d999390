/* lancelsm--1.3--1.4.sql: the 1.4 objects (see CHANGELOG.md). */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.4'" to load this file. \quit

-- BEGIN due runs in slices
-- lancelsm_checkpoint_due(slice, slices) runs one of slices disjoint
-- slices of the declared tables, by a stable hash of (server, table_name)
-- that needs no coordination between the calls, one pg_cron job per
-- slice (docs/operations.md).  Called without arguments it runs the whole
-- set, as before.  A function's arguments cannot be altered: the 1.2
-- function is dropped and created again, EXECUTE left to PUBLIC as
-- before (network calls with the caller's rights).
DROP FUNCTION @extschema@.lancelsm_checkpoint_due();

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
-- END due runs in slices
