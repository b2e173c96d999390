-- client_options: extra_headers (server and user mapping), database_prefix,
-- user_id and bearer_token_file: validation, the headers the emulator
-- receives, a token file rewritten between calls, redaction of secrets.
SELECT emu_reset();
\set VERBOSITY default
SELECT 'http://127.0.0.1:' || port AS emu_url FROM emu_conf \gset
-- co_headers(): the headers of the last request the emulator logged,
-- those the client options set
CREATE FUNCTION co_headers() RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_object_agg(k, v ORDER BY k) FROM (
    SELECT e->'headers' h FROM emu_log() e ORDER BY (e->>'seq')::int DESC LIMIT 1) l,
    jsonb_each_text(l.h) AS x(k, v)
   WHERE k NOT IN ('host', 'accept', 'content-length', 'user-agent', 'x-request-id',
                   'content-type') $$;
-- extra_headers: a JSON object of header names and string values
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers 'x-a: 1');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '["x-a"]');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"x-a": 1}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"x-a": "1", "x-a": "2"}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"X-A": "1", "x-a": "2"}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"x a": "1"}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"": "1"}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"x-a:": "1"}');
-- ... no CR/LF, also not through a JSON escape (the value is not echoed)
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers E'{"x-a": "1\r\nx-api-key: k"}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"x-a": "1\r\nx-api-key: secret-9"}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"x-a": "1\u0000"}');
-- ... no header lancelsm sets itself, whatever the case
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"X-Api-Key": "k"}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"x-request-id": "r"}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"Authorization": "Bearer t"}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"x-lancedb-database": "d"}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"x-lancedb-user-id": "u"}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"Content-Type": "text/plain"}');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', extra_headers '{"host": "h"}');
-- database_prefix and user_id: non-empty, no control characters
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', database_prefix '');
CREATE SERVER co_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', user_id E'u\n');
-- ... they are server options; extra_headers goes on both objects
CREATE USER MAPPING FOR CURRENT_USER SERVER emu OPTIONS (user_id 'u');
-- the user mapping's extra_headers: same rules, no value echoed
CREATE SERVER co FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'emu_url',
           extra_headers '{"X-Gateway-Tenant": "acme", "X-Trace": "server"}',
           database_prefix 'team-a', user_id 'dba@example.com');
CREATE USER MAPPING FOR PUBLIC SERVER co OPTIONS (api_key 'k', extra_headers '{"x-gw-secret": "1\r\nsecret-10"}');
CREATE USER MAPPING FOR PUBLIC SERVER co OPTIONS (api_key 'k', extra_headers '{"x-api-key": "secret-11"}');
CREATE USER MAPPING FOR PUBLIC SERVER co OPTIONS (api_key 'k', extra_headers 'secret-12');
SELECT key AS emu_key FROM emu_conf \gset
CREATE USER MAPPING FOR PUBLIC SERVER co
  OPTIONS (api_key :'emu_key', extra_headers '{"X-Gateway-Secret": "gw-secret-7731", "x-trace": "trace-from-mapping"}');
-- the emulator receives every header (the mapping's x-trace wins)
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_flush('co', 'events');
SELECT co_headers();
-- every route carries them, the write spec routes too
SELECT count(*) FROM lancelsm_write_spec('co', 'events');
SELECT co_headers() ->> 'x-lancedb-database-prefix' AS prefix,
       co_headers() ->> 'x-gateway-secret' AS gw;
-- a server echoing a secret header value: the failure is redacted
SELECT emu_fault('events', 'flush_lsm', 500, 1,
  '{"json": {"code": 20, "error": "bad gateway secret gw-secret-7731 for tenant acme"}}');
SELECT emu_try($$SELECT lancelsm_flush('co', 'events')$$);
SELECT emu_fault('events', 'flush_lsm', 502, 1,
  '{"body": "<html>gateway rejected gw-secret-7731</html>", "content_type": "text/html"}');
SELECT emu_try($$SELECT lancelsm_flush('co', 'events')$$);
-- only a superuser sets bearer_token_file (it reads a server file)
CREATE ROLE lancelsm_co_user;
GRANT USAGE ON FOREIGN DATA WRAPPER lancelsm TO lancelsm_co_user;
SET ROLE lancelsm_co_user;
CREATE SERVER co_mine FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', bearer_token_file '/t');
CREATE SERVER co_mine FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'd', extra_headers '{"x-a": "1"}', database_prefix 'p', user_id 'u');
RESET ROLE;
DROP SERVER co_mine;
REVOKE USAGE ON FOREIGN DATA WRAPPER lancelsm FROM lancelsm_co_user;
DROP ROLE lancelsm_co_user;
-- bearer_token_file: read when the first request needs it, read again
-- when it changes; the header is "authorization: Bearer <token>"
SELECT current_setting('data_directory') || '/lancelsm_co_token' AS token_file \gset
SELECT current_setting('data_directory') || '/global' AS datadir_for_token \gset
COPY (SELECT 'token-one') TO :'token_file';
ALTER SERVER co OPTIONS (ADD bearer_token_file :'token_file');
-- with server-level credentials the mapping may no longer replace the
-- server's X-Trace: every use says so (naming it) until the mapping drops it
SELECT emu_try($$SELECT lancelsm_flush('co', 'events')$$);
ALTER USER MAPPING FOR PUBLIC SERVER co
  OPTIONS (SET extra_headers '{"X-Gateway-Secret": "gw-secret-7731"}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_flush('co', 'events');
SELECT co_headers() ->> 'authorization' AS authorization;
SELECT lancelsm_flush('co', 'events');
SELECT co_headers() ->> 'authorization' AS authorization;
-- an agent rewrites the file between calls: the next request sends the
-- new token
COPY (SELECT 'token-number-two') TO :'token_file';
SELECT lancelsm_flush('co', 'events');
SELECT co_headers() ->> 'authorization' AS authorization;
-- ... every request of a checkpoint carries it (each one checks the file)
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_checkpoint('co', 'events');
SELECT DISTINCT e->'headers'->>'authorization' AS authorization FROM emu_log() e;
-- the token echoed by a server is redacted, like the key
SELECT emu_fault('events', 'flush_lsm', 401, 1,
  '{"json": {"code": 2, "error": "token token-number-two expired"}}');
SELECT emu_try($$SELECT lancelsm_flush('co', 'events')$$);
-- an empty file, or one with a control character inside: refused, nothing sent
SELECT emu('POST', '/_emulator/log/reset');
COPY (SELECT '') TO :'token_file';
SELECT emu_try($$SELECT lancelsm_flush('co', 'events')$$);
COPY (SELECT E'tok\x01en') TO :'token_file';
SELECT emu_try($$SELECT lancelsm_flush('co', 'events')$$);
-- a file over the 16384-byte limit: refused from its size, read no
-- further than the limit (no byte written past the reader's buffer)
COPY (SELECT repeat('a', 16385)) TO :'token_file';
SELECT emu_try($$SELECT lancelsm_flush('co', 'events')$$);
-- ... a token of 16383 bytes and its line end (16384 bytes) is used
COPY (SELECT repeat('b', 16383)) TO :'token_file';
SELECT emu_try($$SELECT lancelsm_flush('co', 'events')$$);
SELECT length(co_headers() ->> 'authorization') AS authorization_length;
-- a directory, or anything but a regular file, is refused before a read
ALTER SERVER co OPTIONS (SET bearer_token_file :'datadir_for_token');
SELECT emu_try($$SELECT lancelsm_flush('co', 'events')$$);
SELECT count(*) AS requests FROM emu_log() e
  WHERE e->'headers'->>'authorization' IS DISTINCT FROM 'Bearer ' || repeat('b', 16383);
ALTER SERVER co OPTIONS (SET bearer_token_file :'token_file');
SELECT emu('POST', '/_emulator/log/reset');
-- a missing file
ALTER SERVER co OPTIONS (SET bearer_token_file '/nonexistent/lancelsm-token');
SELECT emu_try($$SELECT lancelsm_flush('co', 'events')$$);
-- ... in a checkpoint of many tables it is a row per table, not an error
SELECT table_name, ok, sqlstate, message FROM lancelsm_checkpoint('co', ARRAY['events', 'other']);
SELECT count(*) AS requests FROM emu_log();
-- the mapping's headers are as hidden as the key
CREATE ROLE lancelsm_co_reader;
SET ROLE lancelsm_co_reader;
SELECT srvname, umoptions FROM pg_user_mappings WHERE srvname = 'co';
RESET ROLE;
DROP ROLE lancelsm_co_reader;
DROP SERVER co CASCADE;
DROP FUNCTION co_headers();
