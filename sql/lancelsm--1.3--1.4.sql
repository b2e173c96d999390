/* lancelsm--1.3--1.4.sql: the 1.4 objects (see CHANGELOG.md). */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.4'" to load this file. \quit

-- BEGIN connections
-- The backend's connection pools, listed and closed, as postgres_fdw's
-- postgres_fdw_get_connections(), postgres_fdw_disconnect() and
-- postgres_fdw_disconnect_all() do for its connections.  They see and
-- close only the calling backend's own pools, so EXECUTE stays with
-- PUBLIC, as postgres_fdw grants them.  PARALLEL RESTRICTED: a parallel
-- worker has pools of its own.
CREATE FUNCTION @extschema@.lancelsm_get_connections()
RETURNS TABLE (
    server_name pg_catalog.text,
    user_name pg_catalog.text,
    connections pg_catalog.int4,
    requests pg_catalog.int4,
    valid pg_catalog.bool)
AS 'MODULE_PATHNAME', 'lancelsm_get_connections'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED ROWS 4;

CREATE FUNCTION @extschema@.lancelsm_disconnect(server pg_catalog.text)
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'lancelsm_disconnect'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION @extschema@.lancelsm_disconnect_all()
RETURNS pg_catalog.bool
AS 'MODULE_PATHNAME', 'lancelsm_disconnect_all'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.lancelsm_get_connections() IS
  'The connection pools of the calling backend: server, user mapping''s role, open connections, requests in flight, and whether still valid';
COMMENT ON FUNCTION @extschema@.lancelsm_disconnect(pg_catalog.text) IS
  'Closes the calling backend''s pooled connections to a server; true when any were open';
COMMENT ON FUNCTION @extschema@.lancelsm_disconnect_all() IS
  'Closes every pooled connection of the calling backend; true when any were open';
-- END connections
