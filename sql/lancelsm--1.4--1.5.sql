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
-- and DROP SERVER (or DROP OWNED) is refused with 2BP01 while tables are
-- declared on the server, unless CASCADE, which removes them, as
-- postgres_fdw's foreign tables follow their server.  lancelsm_table
-- keeps the server's name, not its OID: pg_dump writes its rows as
-- values.  A pg_depend row cannot point at a row, and PL/pgSQL cannot
-- tell CASCADE from RESTRICT, so the event triggers' functions are
-- written in C.  SECURITY DEFINER: the owner of a server renames or drops
-- it without a privilege on lancelsm_table.  An event trigger function
-- cannot be called but as one; EXECUTE is not needed to fire it and is
-- revoked from PUBLIC.  While a dump is restored (check_function_bodies
-- off) a drop without CASCADE keeps the declarations: pg_restore --clean
-- drops servers so, then the extension, and creates all of them again.
CREATE FUNCTION @extschema@.lancelsm_server_renamed()
RETURNS pg_catalog.event_trigger
AS 'MODULE_PATHNAME', 'lancelsm_server_renamed'
LANGUAGE C VOLATILE SECURITY DEFINER;
CREATE FUNCTION @extschema@.lancelsm_server_dropped()
RETURNS pg_catalog.event_trigger
AS 'MODULE_PATHNAME', 'lancelsm_server_dropped'
LANGUAGE C VOLATILE SECURITY DEFINER;
REVOKE ALL ON FUNCTION @extschema@.lancelsm_server_renamed() FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.lancelsm_server_dropped() FROM PUBLIC;

CREATE EVENT TRIGGER lancelsm_server_rename ON ddl_command_end
  WHEN TAG IN ('ALTER SERVER')
  EXECUTE FUNCTION @extschema@.lancelsm_server_renamed();
CREATE EVENT TRIGGER lancelsm_server_drop ON sql_drop
  WHEN TAG IN ('DROP SERVER', 'DROP OWNED')
  EXECUTE FUNCTION @extschema@.lancelsm_server_dropped();

COMMENT ON FUNCTION @extschema@.lancelsm_server_renamed() IS
  'Event trigger function of lancelsm_server_rename: the tables declared on a renamed lancelsm server are declared on its new name; no network request';
COMMENT ON FUNCTION @extschema@.lancelsm_server_dropped() IS
  'Event trigger function of lancelsm_server_drop: refuses (2BP01) a drop of a server with declared tables unless CASCADE, which removes them; no network request';
COMMENT ON EVENT TRIGGER lancelsm_server_rename IS
  'After ALTER SERVER ... RENAME of a lancelsm server, renames the server in lancelsm_table';
COMMENT ON EVENT TRIGGER lancelsm_server_drop IS
  'On DROP SERVER and DROP OWNED: refuses to drop a server with declared tables unless CASCADE, which removes them from lancelsm_table';
-- END servers followed by identity

-- BEGIN declaring checks the table
-- lancelsm_add_table reads the table's stats once (one request, with
-- USAGE on the server and a user mapping) and refuses a table the server
-- does not have (HV00R), declaring nothing; validate => false declares
-- without a request, for a table not created yet.  The new argument makes
-- a new signature, which takes over the 1.2 one's EXECUTE grants (revoked
-- from PUBLIC by default).
CREATE FUNCTION @extschema@.lancelsm_add_table(
    server pg_catalog.text,
    table_name pg_catalog.text,
    max_l0_generations pg_catalog.int8 DEFAULT NULL,
    max_l0_bytes pg_catalog.int8 DEFAULT NULL,
    max_wal_lag pg_catalog.int8 DEFAULT NULL,
    max_memtable_rows pg_catalog.int8 DEFAULT NULL,
    max_checkpoint_age pg_catalog.interval DEFAULT NULL,
    validate pg_catalog.bool DEFAULT true)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'lancelsm_add_table'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
SELECT @extschema@.lancelsm_carry_grants(
  '@extschema@.lancelsm_add_table(pg_catalog.text, pg_catalog.text, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval)',
  '@extschema@.lancelsm_add_table(pg_catalog.text, pg_catalog.text, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval, pg_catalog.bool)');
DROP FUNCTION @extschema@.lancelsm_add_table(pg_catalog.text, pg_catalog.text,
  pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.int8, pg_catalog.interval);
COMMENT ON FUNCTION @extschema@.lancelsm_add_table IS
  'Declares a LanceDB table in lancelsm_table, with optional due thresholds (NULL: not used), after reading its stats once (HV00R: the server has no such table, and nothing is declared); validate => false contacts no server; EXECUTE revoked from PUBLIC';
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
