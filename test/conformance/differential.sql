-- The PostgreSQL side of differential.js: lancelsm, server "emu" on the
-- emulator (psql variables emu_url, emu_key), and schema "conf" whose
-- functions turn each lancelsm outcome into one jsonb value, a failure
-- included, so that one psql call can read many tables.
CREATE EXTENSION lancelsm;
CREATE SERVER emu FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'emu_url');
CREATE USER MAPPING FOR CURRENT_USER SERVER emu OPTIONS (api_key :'emu_key');
CREATE SCHEMA conf;

-- conf.outcome(query): the jsonb value the query returns, or
-- {"error": SQLSTATE, "message", "detail"} when it fails, a statement
-- timeout included (57014, which OTHERS does not catch).
CREATE FUNCTION conf.outcome(query text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  result jsonb;
  state text;
  msg text;
  detail text;
BEGIN
  EXECUTE query INTO result;
  RETURN result;
EXCEPTION WHEN OTHERS OR query_canceled THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                          detail = PG_EXCEPTION_DETAIL;
  RETURN pg_catalog.jsonb_build_object('error', state, 'message', msg, 'detail', detail);
END
$$;

-- conf.rows(call): the rows of a set-returning call (SQL text such as
-- lancelsm_stats('emu', 't', true)) in their order, as a jsonb array of
-- objects, or the error as conf.outcome.
CREATE FUNCTION conf.rows(call text) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT conf.outcome(
    'SELECT COALESCE(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(x) '
    || 'OPERATOR(pg_catalog.-) ''ordinality'' ORDER BY x.ordinality), ''[]'') FROM '
    || call || ' WITH ORDINALITY AS x')
$$;

-- conf.stats(table, rows): what the three stats functions say of a table.
CREATE FUNCTION conf.stats(t text, with_rows boolean) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT pg_catalog.jsonb_build_object(
    'stats', conf.rows(pg_catalog.format('lancelsm_stats(%L, %L, %L)', 'emu', t, with_rows)),
    'generations', conf.rows(pg_catalog.format('lancelsm_generations(%L, %L, %L)', 'emu', t, with_rows)),
    'memtables', conf.rows(pg_catalog.format('lancelsm_memtables(%L, %L)', 'emu', t)))
$$;

-- conf.checkpoint(table): {"ok": true} or the error, as conf.outcome.
CREATE FUNCTION conf.checkpoint(t text) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT conf.outcome(pg_catalog.format(
    'SELECT ''{"ok": true}''::jsonb FROM lancelsm_checkpoint(%L, %L)', 'emu', t))
$$;

-- conf.declared(): what the monitoring functions say of every declared
-- table, {table: {"buckets": [rows of lancelsm_declared_bucket_stats()]}
-- or {"error": SQLSTATE, "message": error} from
-- lancelsm_declared_table_stats()}.
CREATE FUNCTION conf.declared() RETURNS jsonb
LANGUAGE sql AS $$
  WITH b AS (SELECT * FROM lancelsm_declared_bucket_stats() WITH ORDINALITY),
       t AS (SELECT * FROM lancelsm_declared_table_stats())
  SELECT COALESCE(pg_catalog.jsonb_object_agg(t.table_name,
    CASE WHEN t.error_sqlstate IS NOT NULL
      THEN pg_catalog.jsonb_build_object('error', t.error_sqlstate, 'message', t.error)
      ELSE pg_catalog.jsonb_build_object('buckets', COALESCE((
        SELECT pg_catalog.jsonb_agg(pg_catalog.to_jsonb(b) OPERATOR(pg_catalog.-) 'ordinality'
                                    ORDER BY b.ordinality)
          FROM b WHERE b.table_name OPERATOR(pg_catalog.=) t.table_name), '[]'))
    END), '{}')
    FROM t
$$;
