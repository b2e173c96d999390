/* lancelsm--1.3--1.4.sql: the 1.4 objects (see CHANGELOG.md). */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.4'" to load this file. \quit

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
