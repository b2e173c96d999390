-- connections: the backend's connection pools, listed and closed
-- (lancelsm_get_connections, lancelsm_disconnect, lancelsm_disconnect_all),
-- with the connections the emulator saw; who may call them.
SELECT emu_reset();
SELECT 'http://127.0.0.1:' || port AS emu_url, key AS emu_key FROM emu_conf \gset
-- function properties: volatile, parallel restricted (a worker has pools
-- of its own), executable by PUBLIC (they touch the caller's backend only),
-- each with a comment
SELECT p.proname, p.provolatile, p.proparallel, p.proisstrict,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented
  FROM pg_proc p
 WHERE p.proname IN ('lancelsm_get_connections', 'lancelsm_disconnect',
                     'lancelsm_disconnect_all')
 ORDER BY p.proname COLLATE "C";
-- a fresh backend holds no pool
SELECT * FROM lancelsm_get_connections();
SELECT lancelsm_disconnect_all();
SELECT lancelsm_disconnect('emu');
-- a second server, on the same emulator, with a mapping for the current role
CREATE ROLE regress_conn_user;
CREATE SERVER emu2 FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'emu_url');
CREATE USER MAPPING FOR CURRENT_USER SERVER emu2 OPTIONS (api_key :'emu_key');
-- three flushes on emu share one connection; one on emu2 opens another
SELECT count(lancelsm_flush('emu', 'events')) FROM generate_series(1, 3);
SELECT count(lancelsm_flush('emu2', 'events'));
SELECT server_name, user_name = current_user AS own_role,
       user_name = 'public' AS public_mapping, connections, requests, valid
  FROM lancelsm_get_connections() ORDER BY server_name COLLATE "C";
SELECT c->'flush_lsm' AS flushes, c->'connections' AS connections
  FROM emu('GET', '/_emulator/counts?table=events') c;
-- closing one server's pools leaves the other's
SELECT lancelsm_disconnect('emu');
SELECT lancelsm_disconnect('emu');
SELECT server_name, connections, valid FROM lancelsm_get_connections();
-- the next flush on emu connects afresh; emu2's connection is reused
SELECT count(lancelsm_flush('emu', 'events'));
SELECT count(lancelsm_flush('emu2', 'events'));
SELECT c->'flush_lsm' AS flushes, c->'connections' AS connections
  FROM emu('GET', '/_emulator/counts?table=events') c;
-- a changed option invalidates the pool: listed as not valid until the
-- next request closes it
ALTER SERVER emu2 OPTIONS (ADD connect_timeout '5');
SELECT server_name, connections, valid
  FROM lancelsm_get_connections() ORDER BY server_name COLLATE "C";
SELECT count(lancelsm_flush('emu2', 'events'));
SELECT server_name, connections, valid
  FROM lancelsm_get_connections() ORDER BY server_name COLLATE "C";
SELECT c->'flush_lsm' AS flushes, c->'connections' AS connections
  FROM emu('GET', '/_emulator/counts?table=events') c;
-- a change of lancelsm.allowed_endpoints invalidates every pool, the same
-- list again none
SET lancelsm.allowed_endpoints = '127.0.0.0/8';
SELECT server_name, valid
  FROM lancelsm_get_connections() ORDER BY server_name COLLATE "C";
SELECT count(lancelsm_flush('emu', 'events'));
SET lancelsm.allowed_endpoints = ' 127.0.0.0/8 ';
SELECT server_name, connections, valid
  FROM lancelsm_get_connections() ORDER BY server_name COLLATE "C";
RESET lancelsm.allowed_endpoints;
SELECT server_name, connections, valid
  FROM lancelsm_get_connections() ORDER BY server_name COLLATE "C";
SELECT c->'flush_lsm' AS flushes, c->'connections' AS connections
  FROM emu('GET', '/_emulator/counts?table=events') c;
-- a dropped server's pool shows a NULL name until closed
SELECT count(lancelsm_flush('emu2', 'events'));
SET client_min_messages = warning;
DROP SERVER emu2 CASCADE;
RESET client_min_messages;
SELECT server_name, user_name, connections, valid
  FROM lancelsm_get_connections() ORDER BY server_name COLLATE "C";
SELECT lancelsm_disconnect_all();
SELECT lancelsm_disconnect_all();
SELECT * FROM lancelsm_get_connections();
-- an unknown server is an error, and so is another wrapper's server
-- (42809, as every function taking a server refuses it); any role may
-- call the functions
SELECT emu_try($$SELECT lancelsm_disconnect('no_such_server')$$);
CREATE FOREIGN DATA WRAPPER conn_other_fdw;
CREATE SERVER conn_other FOREIGN DATA WRAPPER conn_other_fdw;
SELECT emu_try($$SELECT lancelsm_disconnect('conn_other')$$);
DROP FOREIGN DATA WRAPPER conn_other_fdw CASCADE;
SET ROLE regress_conn_user;
SELECT count(*) FROM lancelsm_get_connections();
SELECT lancelsm_disconnect_all();
RESET ROLE;
DROP ROLE regress_conn_user;
