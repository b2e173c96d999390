-- permissions: USAGE on the server, user mappings, secrets, function
-- properties, server lookup
SELECT key AS emu_key FROM emu_conf \gset
SELECT emu_reset();
SELECT 'http://127.0.0.1:' || port AS emu_url FROM emu_conf \gset
CREATE ROLE lancelsm_p_nousage;
CREATE ROLE lancelsm_p_user;
GRANT USAGE ON FOREIGN SERVER emu TO lancelsm_p_user;
-- a second server with no PUBLIC mapping, only one for lancelsm_p_user
CREATE SERVER emu_private FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'emu_url');
GRANT USAGE ON FOREIGN SERVER emu_private TO lancelsm_p_user, lancelsm_p_nousage;
CREATE USER MAPPING FOR lancelsm_p_user SERVER emu_private
  OPTIONS (api_key :'emu_key');
-- the helpers are ours: let the roles call them
GRANT SELECT ON emu_conf TO PUBLIC;
SELECT emu('POST', '/_emulator/log/reset');
-- no USAGE on the server: 42501, for every function, nothing sent
SET ROLE lancelsm_p_nousage;
SELECT lancelsm_flush('emu', 'events');
SELECT lancelsm_compact('emu', 'events');
SELECT lancelsm_checkpoint('emu', 'events');
SELECT * FROM lancelsm_stats('emu', 'events');
SELECT * FROM lancelsm_generations('emu', 'events');
SELECT * FROM lancelsm_memtables('emu', 'events');
-- USAGE but no user mapping (neither its own nor PUBLIC): 42704
SELECT lancelsm_flush('emu_private', 'events');
SELECT * FROM lancelsm_stats('emu_private', 'events');
-- the key of a mapping is not visible to others
SELECT srvname, usename, umoptions FROM pg_user_mappings
 WHERE srvname IN ('emu', 'emu_private') ORDER BY srvname COLLATE "C", usename COLLATE "C";
RESET ROLE;
SELECT count(*) AS requests FROM emu_log();
-- with USAGE: works through the PUBLIC mapping ...
SET ROLE lancelsm_p_user;
SELECT lancelsm_flush('emu', 'events');
SELECT count(*) FROM lancelsm_stats('emu', 'events');
-- ... and through its own mapping
SELECT lancelsm_flush('emu_private', 'events');
-- the role sees its own key, not PUBLIC's (it does not own server emu)
SELECT srvname, usename, umoptions IS NULL AS hidden,
       umoptions = ARRAY['api_key=' || :'emu_key'] AS own_key_shown
  FROM pg_user_mappings
 WHERE srvname IN ('emu', 'emu_private') ORDER BY srvname COLLATE "C", usename COLLATE "C";
RESET ROLE;
SELECT count(*) AS requests, count(*) FILTER (WHERE e->'headers'->>'x-api-key' = '***') AS with_key
  FROM emu_log() e;
-- a role's own mapping wins over PUBLIC's
CREATE USER MAPPING FOR lancelsm_p_user SERVER emu OPTIONS (api_key 'not-the-key');
SET ROLE lancelsm_p_user;
DO $$
BEGIN
  PERFORM lancelsm_flush('emu', 'events');
EXCEPTION WHEN invalid_authorization_specification THEN
  RAISE NOTICE '28000: %', SQLERRM;
END $$;
RESET ROLE;
DROP USER MAPPING FOR lancelsm_p_user SERVER emu;
-- USAGE revoked: refused again
REVOKE USAGE ON FOREIGN SERVER emu FROM lancelsm_p_user;
SET ROLE lancelsm_p_user;
SELECT lancelsm_compact('emu', 'events');
RESET ROLE;
-- the superuser sees every key
SELECT srvname, usename, umoptions = ARRAY['api_key=' || :'emu_key'] AS key_shown
  FROM pg_user_mappings WHERE srvname IN ('emu', 'emu_private')
 ORDER BY srvname COLLATE "C", usename COLLATE "C";
-- unknown server: 42704
SELECT lancelsm_flush('no_such_server', 'events');
SELECT * FROM lancelsm_stats('no_such_server', 'events');
-- a server of another wrapper: 42809
CREATE FOREIGN DATA WRAPPER dummy;
CREATE SERVER dummy_srv FOREIGN DATA WRAPPER dummy;
SELECT lancelsm_flush('dummy_srv', 'events');
SELECT * FROM lancelsm_memtables('dummy_srv', 'events');
DROP SERVER dummy_srv;
DROP FOREIGN DATA WRAPPER dummy;
-- every function runs with the caller's rights, is volatile and parallel
-- unsafe; EXECUTE is granted to PUBLIC (USAGE on the server is the gate)
SELECT p.proname, p.prosecdef, p.provolatile, p.proparallel, p.proisstrict,
       p.proretset, pg_get_function_identity_arguments(p.oid) AS args,
       has_function_privilege('lancelsm_p_nousage', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p
 WHERE p.oid IN ('lancelsm_flush(text, text)'::regprocedure,
                 'lancelsm_compact(text, text)'::regprocedure,
                 'lancelsm_checkpoint(text, text)'::regprocedure,
                 'lancelsm_stats(text, text, boolean)'::regprocedure,
                 'lancelsm_generations(text, text, boolean)'::regprocedure,
                 'lancelsm_memtables(text, text)'::regprocedure,
                 'lancelsm_fdw_validator(text[], oid)'::regprocedure)
 ORDER BY p.proname COLLATE "C";
-- ... and no function of the extension is SECURITY DEFINER but the two
-- event trigger functions, which run only as event triggers (a server's
-- owner renames or drops it without a privilege on lancelsm_table)
SELECT count(*) >= 7 AS has_functions,
       string_agg(p.proname, ', ' ORDER BY p.proname COLLATE "C")
         FILTER (WHERE p.prosecdef) AS security_definer,
       bool_and(p.prorettype = 'event_trigger'::regtype)
         FILTER (WHERE p.prosecdef) AS only_event_triggers
  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  JOIN pg_extension x ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = x.oid
 WHERE x.extname = 'lancelsm';
-- the wrapper, owned by the superuser, with its validator
SELECT fdwname, fdwvalidator::regproc, fdwhandler FROM pg_foreign_data_wrapper
 WHERE fdwname = 'lancelsm';
SELECT emu_counts('events');
DROP SERVER emu_private CASCADE;
REVOKE SELECT ON emu_conf FROM PUBLIC;
DROP ROLE lancelsm_p_nousage;
DROP ROLE lancelsm_p_user;
