-- options: the validator's rules, on servers, user mappings and the
-- wrapper, and the lancelsm.* settings.
SELECT emu_reset();
\set VERBOSITY default
-- database is required
CREATE SERVER o_nodb FOREIGN DATA WRAPPER lancelsm;
CREATE SERVER o_nodb FOREIGN DATA WRAPPER lancelsm OPTIONS (region 'eu-west-1');
-- without host_override the database is a host-name label
CREATE SERVER o_baddb FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'my.db');
CREATE SERVER o_baddb FOREIGN DATA WRAPPER lancelsm OPTIONS (database '');
-- ... with host_override any non-empty name will do
CREATE SERVER o_ok FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'my.db', host_override 'http://127.0.0.1:1');
-- a complete, valid server
CREATE SERVER o_full FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', region 'eu-west-1', id_delimiter '::',
           connect_timeout '3600', ssl_ca_file '/etc/ssl/certs/ca.pem',
           ssl_cert_file '/tmp/c.pem', ssl_key_file '/tmp/k.pem');
CREATE SERVER o_https FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override 'HTTPS://[::1]:8443/prefix/');
-- unrecognized options: a close name is suggested, else the list is given
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', regoin 'x');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', hostname 'x');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', completely_unrelated 'x');
-- api_key is refused on a server (it belongs in a user mapping)
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', api_key 'secret-1');
-- server options are refused in a user mapping
CREATE USER MAPPING FOR PUBLIC SERVER o_ok OPTIONS (database 'd');
CREATE USER MAPPING FOR PUBLIC SERVER o_ok OPTIONS (api_ky 'secret-1');
CREATE USER MAPPING FOR PUBLIC SERVER o_ok OPTIONS (user 'x');
-- the wrapper takes no options
ALTER FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd');
-- host_override: http or https only
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'ftp://h');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'file:///etc/passwd');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override '127.0.0.1:8080');
-- ... no credentials (the value is not echoed)
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'http://user:secret-2@h:80');
-- ... no query, fragment or blank
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'http://h/?a=b');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'http://h/#f');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'http://h /');
-- ... a host and a valid port
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'http://');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'http://h:0');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'http://h:65536');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'http://h:');
-- ... a path is a gateway's prefix, put before the routes as the SDK puts
-- host_override before them; one holding the routes' own /v1 is refused
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'http://h:8080/v1/');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'https://h/lancedb/V1');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'https://h/v1/table/t/');
CREATE SERVER o_v1 FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override 'https://h/api/v1/lancedb/');
DROP SERVER o_v1;
-- region: letters, digits, hyphens
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', region 'us.east');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', region 'us_east');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', region '');
-- id_delimiter: 1 to 8 bytes, no '/'
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', id_delimiter '');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', id_delimiter '123456789');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', id_delimiter '/');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', id_delimiter 'a/b');
CREATE SERVER o_d8 FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', id_delimiter '12345678');
-- connect_timeout: whole seconds, 1 to 3600
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', connect_timeout '0');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', connect_timeout '-1');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', connect_timeout 'abc');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', connect_timeout '3601');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', connect_timeout ' 5');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', connect_timeout '5s');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', connect_timeout '1.5');
-- read_timeout: whole seconds, 0 (off) to 86400
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', read_timeout '-1');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', read_timeout '86401');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', read_timeout '30s');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', read_timeout '');
CREATE SERVER o_rt0 FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', read_timeout '0');
CREATE SERVER o_rtmax FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', read_timeout '86400');
-- max_requests_in_flight: a whole number, 1 to 64
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', max_requests_in_flight '0');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', max_requests_in_flight '65');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', max_requests_in_flight '-1');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', max_requests_in_flight '8 ');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', max_requests_in_flight '');
CREATE SERVER o_mr1 FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', max_requests_in_flight '1');
CREATE SERVER o_mr64 FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', max_requests_in_flight '64');
-- http_version: '1.1' or '2'; unset, HTTP/2 is negotiated over TLS
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', http_version '1.0');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', http_version '2.0');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', http_version '');
CREATE SERVER o_h11 FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', http_version '1.1');
CREATE SERVER o_h2 FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', http_version '2');
-- proxy: an http:// URL of a host and a port, nothing else
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', proxy 'https://p:3128');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', proxy 'socks5://p:1080');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', proxy 'http://p');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', proxy 'http://[::1]');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', proxy 'http://p:3128/path');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', proxy 'http://user:secret-6@p:3128');
CREATE SERVER o_px FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', proxy 'http://[::1]:3128/');
-- ... and only for https targets: the proxy would see the key of plain http
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'd', host_override 'HTTP://h:80', proxy 'http://p:3128');
ALTER SERVER o_px OPTIONS (ADD host_override 'http://h');
ALTER SERVER o_px OPTIONS (ADD host_override 'https://h');
-- proxy credentials live in a user mapping; a password needs a user
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', proxy_user 'u');
CREATE USER MAPPING FOR PUBLIC SERVER o_px OPTIONS (proxy_password 'secret-7');
CREATE USER MAPPING FOR PUBLIC SERVER o_px OPTIONS (proxy_user 'a:b');
CREATE USER MAPPING FOR PUBLIC SERVER o_px OPTIONS (proxy_user '');
CREATE USER MAPPING FOR PUBLIC SERVER o_px OPTIONS (proxy_user 'u', proxy_password 'secret-7');
ALTER USER MAPPING FOR PUBLIC SERVER o_px OPTIONS (DROP proxy_user);
DROP SERVER o_h11, o_h2, o_px CASCADE;
-- control characters, in any value
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database E'd\r');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', region E'us\neast');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', host_override E'http://h/\tx');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', id_delimiter E'\t');
CREATE SERVER o_x FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', ssl_ca_file E'/a\x7fb');
CREATE USER MAPPING FOR PUBLIC SERVER o_ok OPTIONS (api_key E'secret-3\r\nx-evil: 1');
CREATE USER MAPPING FOR PUBLIC SERVER o_ok OPTIONS (api_key E'secret-3\n');
CREATE USER MAPPING FOR PUBLIC SERVER o_ok OPTIONS (api_key E'secret\t3');
CREATE USER MAPPING FOR PUBLIC SERVER o_ok OPTIONS (api_key 'secret-3');
-- ALTER keeps validation, on the merged option list
ALTER SERVER o_ok OPTIONS (DROP database);
ALTER SERVER o_ok OPTIONS (SET host_override 'gopher://h');
ALTER SERVER o_ok OPTIONS (ADD connect_timeout '0');
ALTER SERVER o_ok OPTIONS (ADD regoin 'x');
ALTER SERVER o_ok OPTIONS (DROP host_override);   -- 'my.db' is no label
ALTER SERVER o_ok OPTIONS (ADD connect_timeout '30', SET host_override 'https://h.example:443');
ALTER USER MAPPING FOR PUBLIC SERVER o_ok OPTIONS (SET api_key E'k\r');
ALTER USER MAPPING FOR PUBLIC SERVER o_ok OPTIONS (ADD region 'x');
ALTER USER MAPPING FOR PUBLIC SERVER o_ok OPTIONS (SET api_key 'secret-4');
SELECT srvname, srvoptions FROM pg_foreign_server
 WHERE srvname LIKE 'o\_%' ORDER BY srvname COLLATE "C";
-- ssl_* options are superuser-only
CREATE ROLE lancelsm_o_user;
GRANT USAGE ON FOREIGN DATA WRAPPER lancelsm TO lancelsm_o_user;
SET ROLE lancelsm_o_user;
CREATE SERVER o_mine FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', ssl_ca_file '/etc/ssl/x.pem');
CREATE SERVER o_mine FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', ssl_cert_file '/c');
CREATE SERVER o_mine FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', ssl_key_file '/k');
CREATE SERVER o_mine FOREIGN DATA WRAPPER lancelsm OPTIONS (database 'd', connect_timeout '5');
ALTER SERVER o_mine OPTIONS (ADD ssl_ca_file '/etc/ssl/x.pem');
CREATE USER MAPPING FOR lancelsm_o_user SERVER o_mine OPTIONS (api_key 'secret-5');
RESET ROLE;
-- superuser may set them (empty values are refused)
ALTER SERVER o_mine OPTIONS (ADD ssl_ca_file '/etc/ssl/x.pem');
ALTER SERVER o_mine OPTIONS (ADD ssl_key_file '');
SELECT srvname, srvoptions FROM pg_foreign_server WHERE srvname = 'o_mine';
DROP SERVER o_mine CASCADE;
REVOKE USAGE ON FOREIGN DATA WRAPPER lancelsm FROM lancelsm_o_user;
DROP ROLE lancelsm_o_user;
-- no secret value ever reached a message above: checked by the expected
-- output (secret-1 .. secret-7 appear only in the statements)
DROP SERVER o_ok, o_full, o_https, o_d8, o_rt0, o_rtmax, o_mr1, o_mr64 CASCADE;
-- the settings, with units and defaults
LOAD 'lancelsm';
SELECT name, setting, unit, boot_val, context, vartype, min_val, max_val
  FROM pg_settings
 WHERE name IN ('lancelsm.retry_budget', 'lancelsm.reissue_budget',
                'lancelsm.backoff_base', 'lancelsm.backoff_max',
                'lancelsm.poll_interval_min', 'lancelsm.poll_interval_max',
                'lancelsm.max_idle_polls', 'lancelsm.max_response_size')
 ORDER BY name COLLATE "C";
-- the bounds on name lookups: only a superuser may move them (1.5)
SELECT name, boot_val, context, min_val, max_val
  FROM pg_settings
 WHERE name IN ('lancelsm.max_name_lookups', 'lancelsm.max_cluster_name_lookups')
 ORDER BY name COLLATE "C";
-- every lancelsm setting (later versions add more) is described in a
-- full sentence
SELECT count(*) >= 8 AS at_least_eight,
       bool_and(short_desc ~ '^[A-Z].*\.$') AS full_sentences
  FROM pg_settings WHERE name LIKE 'lancelsm.%';
-- the prefix is reserved
SET lancelsm.no_such_setting = 1;
SHOW lancelsm.retry_budget;
SET lancelsm.retry_budget = -1;
SET lancelsm.backoff_base = '2s';
SHOW lancelsm.backoff_base;
RESET lancelsm.backoff_base;
-- a user mapping may not replace a header of a server that authenticates
-- every role with server-level credentials (bearer_token_file, or a
-- client certificate); names match without regard to case
CREATE SERVER o_token FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'd', host_override 'http://127.0.0.1:1',
           bearer_token_file '/nonexistent',
           extra_headers '{"X-Tenant": "acme"}');
CREATE USER MAPPING FOR PUBLIC SERVER o_token
  OPTIONS (api_key 'k', extra_headers '{"x-tenant": "other"}');
\echo :LAST_ERROR_SQLSTATE
CREATE USER MAPPING FOR PUBLIC SERVER o_token
  OPTIONS (api_key 'k', extra_headers '{"X-Secret": "s"}');
ALTER USER MAPPING FOR PUBLIC SERVER o_token
  OPTIONS (SET extra_headers '{"X-Secret": "s", "X-TENANT": "other"}');
SELECT count(*) FROM pg_user_mappings WHERE srvname = 'o_token';
-- header names match as gateways compare them: '_' and '-' alike, in
-- any case, since nginx, CGI and WSGI servers read X_Tenant as X-Tenant
ALTER USER MAPPING FOR PUBLIC SERVER o_token
  OPTIONS (SET extra_headers '{"X-Secret": "s", "X_Tenant": "other"}');
ALTER USER MAPPING FOR PUBLIC SERVER o_token
  OPTIONS (SET extra_headers '{"x_tENANT": "other"}');
SELECT umoptions FROM pg_user_mappings WHERE srvname = 'o_token';
-- ... in one extra_headers value, and against the headers lancelsm sets
CREATE SERVER o_dup FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'd', extra_headers '{"X-Tenant": "a", "x_tenant": "b"}');
ALTER USER MAPPING FOR PUBLIC SERVER o_token
  OPTIONS (SET extra_headers '{"X_Api_Key": "k2"}');
CREATE SERVER o_dup FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'd', extra_headers '{"x_request_ID": "r"}');
-- names that differ by more than that are different names
ALTER USER MAPPING FOR PUBLIC SERVER o_token
  OPTIONS (SET extra_headers '{"X-Secret": "s", "X.Tenant": "other", "XTenant": "o"}');
ALTER USER MAPPING FOR PUBLIC SERVER o_token
  OPTIONS (SET extra_headers '{"X-Secret": "s"}');
CREATE SERVER o_cert FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'd', ssl_cert_file '/c', extra_headers '{"X-Tenant": "acme"}');
CREATE USER MAPPING FOR PUBLIC SERVER o_cert
  OPTIONS (api_key 'k', extra_headers '{"X-Tenant": "other"}');
-- without server-level credentials a mapping overrides as before; once
-- the server gains them, the existing mapping fails every use, naming
-- the header, as an error and as a row of the declared tables' view
CREATE SERVER o_plain FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'd', host_override 'http://127.0.0.1:1',
           extra_headers '{"X-Tenant": "acme"}');
CREATE USER MAPPING FOR PUBLIC SERVER o_plain
  OPTIONS (api_key 'k', extra_headers '{"X-Tenant": "other"}');
ALTER SERVER o_plain OPTIONS (ADD bearer_token_file '/nonexistent');
SELECT lancelsm_flush('o_plain', 't');
\echo :LAST_ERROR_SQLSTATE
SELECT lancelsm_add_table('o_plain', 't', validate => false);
SELECT server, table_name, error_sqlstate, error
  FROM lancelsm_table_stats WHERE server = 'o_plain';
SELECT lancelsm_remove_table('o_plain', 't');
DROP SERVER o_token, o_cert, o_plain CASCADE;
