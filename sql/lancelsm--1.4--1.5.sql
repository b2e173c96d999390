/* lancelsm--1.4--1.5.sql: the 1.5 objects (see CHANGELOG.md). */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.5'" to load this file. \quit

-- One section per change of 1.5, each between its BEGIN and END lines and
-- opened by a comment on what it changes and why.  The library serves a
-- 1.4 catalog until this script has run, so a function given a new
-- argument keeps accepting the old argument count.  A new argument means
-- a new signature: it is created beside the old one, takes over the old
-- one's EXECUTE grants (lancelsm_carry_grants below), and the old one is
-- dropped, as lancelsm--1.3--1.4.sql did for lancelsm_checkpoint_due.
-- CREATE OR REPLACE VIEW can only add columns at the end.

-- BEGIN upgrade order
-- The objects below need the 1.5 library.  A session that loaded an
-- older one (from shared_preload_libraries, until the server restarts, or
-- by calling a function before the package upgrade) still runs it: say
-- so instead of failing on the first missing C function.  lancelsm_info
-- gives the loaded library's release (1.4 gave its SQL version, 1.4).
DO $$
BEGIN
  IF pg_catalog.current_setting('lancelsm.retry_budget', true) IS NOT NULL
     AND pg_catalog.string_to_array(
           (SELECT i.library_version FROM @extschema@.lancelsm_info() i),
           '.')::pg_catalog.int4[] OPERATOR(pg_catalog.<) '{1,5}' THEN
    RAISE EXCEPTION 'this session runs a lancelsm library older than 1.5'
      USING ERRCODE = 'feature_not_supported',
            HINT = 'Restart the server if lancelsm is in shared_preload_libraries, or else start a new session, then run ALTER EXTENSION lancelsm UPDATE again.';
  END IF;
END
$$;
-- END upgrade order

-- BEGIN carrying grants
-- lancelsm_carry_grants(old, new) gives the new signature of a function
-- the EXECUTE grants a DBA gave the old one: when the old one's ACL was
-- changed at all, the new one's default PUBLIC grant is revoked and every
-- EXECUTE grant of the old one but its owner's is given again, with its
-- grant option.  The sections below call it before they drop an old
-- signature; the last section drops it.
CREATE FUNCTION @extschema@.lancelsm_carry_grants(
    old_function pg_catalog.regprocedure,
    new_function pg_catalog.regprocedure)
RETURNS pg_catalog.void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  acl pg_catalog.aclitem[];
  owner pg_catalog.oid;
  g record;
BEGIN
  SELECT p.proacl, p.proowner INTO acl, owner FROM pg_catalog.pg_proc p
   WHERE p.oid = old_function;
  IF acl IS NULL THEN
    RETURN;   -- never granted nor revoked: the default, as the new one's
  END IF;
  EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', new_function);
  FOR g IN SELECT a.grantee, a.is_grantable FROM pg_catalog.aclexplode(acl) a
            WHERE a.privilege_type = 'EXECUTE'
              AND a.grantee OPERATOR(pg_catalog.<>) owner
  LOOP
    EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s%s', new_function,
      CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
           ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END,
      CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
  END LOOP;
END
$$;
-- END carrying grants

-- BEGIN servers followed by identity
-- A declared table follows its server through ALTER SERVER ... RENAME,
-- and DROP SERVER is refused while tables are declared on it unless
-- CASCADE, which removes them: event triggers written in C.
-- END servers followed by identity

-- BEGIN declaring checks the table
-- lancelsm_add_table reads the table's stats once and refuses a table the
-- server does not have; validate => false declares without a request.
-- END declaring checks the table

-- BEGIN outcomes that survive the error
-- The outcome of every table of every call stays recorded when the
-- caller's statement or transaction fails.
-- END outcomes that survive the error

-- BEGIN strict runs
-- lancelsm_checkpoint_due and lancelsm_checkpoint_all take strict: a run
-- in which a table failed ends in an error, which pg_cron records.
-- END strict runs

-- BEGIN no stale rows
-- lancelsm_remove_table takes the table out of every view; its history
-- rows stay, marked as removed.
-- END no stale rows

-- BEGIN the message relation
-- The server's message is readable only by the roles that may read the
-- histories: it moves out of lancelsm_table into a relation of its own.
-- END the message relation

-- BEGIN upgrades keep recording
-- A job role set up as the 1.3 and 1.4 docs said keeps recording after
-- the update, with no extra grant.
-- END upgrades keep recording

-- BEGIN end of script
DROP FUNCTION @extschema@.lancelsm_carry_grants(pg_catalog.regprocedure,
  pg_catalog.regprocedure);
-- END end of script
