-- write_spec: install, read and remove a table's LSM write spec; argument
-- checks before any request; the request body; the retry policy with call
-- counts; strict decoding of the answer; who may call what.
SELECT emu_reset();
-- ws_calls(tbl): write spec route calls since the last log reset
CREATE FUNCTION ws_calls(tbl text) RETURNS text LANGUAGE sql AS $$
  SELECT format('set %s, unset %s, get %s',
                coalesce(c->>'set_lsm_write_spec', '0'),
                coalesce(c->>'unset_lsm_write_spec', '0'),
                coalesce(c->>'get_lsm_write_spec', '0'))
    FROM emu_counts(tbl) c $$;
-- ws_body(): the body of the last set request the emulator logged, as jsonb
CREATE FUNCTION ws_body() RETURNS jsonb LANGUAGE sql AS $$
  SELECT (e->>'body')::jsonb FROM emu_log() e
   WHERE e->>'route' = 'set_lsm_write_spec'
   ORDER BY (e->>'seq')::int DESC LIMIT 1 $$;
-- function properties: volatile, parallel unsafe, strict only where NULL
-- means nothing, set/unset not executable by PUBLIC
SELECT p.proname, p.provolatile, p.proparallel, p.proisstrict,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p
 WHERE p.proname IN ('lancelsm_set_write_spec', 'lancelsm_unset_write_spec',
                     'lancelsm_write_spec')
 ORDER BY p.proname COLLATE "C";
-- a table without the LSM path: no spec, no stats, flush refused
SELECT emu('POST', '/_emulator/tables',
           '{"name": "ws", "buckets": 1, "lsm": false, "indexes": ["vec_idx", "txt_idx"]}');
SELECT * FROM lancelsm_write_spec('emu', 'ws');
SELECT count(*) FROM lancelsm_stats('emu', 'ws');
-- bucket sharding: 4 buckets, every index (NULL), one writer default
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_set_write_spec('emu', 'ws', 'bucket', 'id', 4,
                               writer_config_defaults => '{"max_memtable_rows": "5000"}');
SELECT ws_body() = '{"sharding": {"mode": "bucket", "column": "id", "num_buckets": 4},
                     "maintained_indexes": null,
                     "writer_config_defaults": {"max_memtable_rows": "5000"}}'::jsonb AS body_ok;
SELECT e->'headers'->>'content-type' AS content_type FROM emu_log() e;
SELECT * FROM lancelsm_write_spec('emu', 'ws');
SELECT shard_id FROM lancelsm_stats('emu', 'ws') ORDER BY shard_id COLLATE "C";
SELECT emu('GET', '/_emulator/tables/ws') -> 'spec' AS emulator_spec;
SELECT ws_calls('ws');
-- a second set is refused by the server (unset first), as itself
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded')$$);
-- unset: the path is off; a second unset is refused
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_unset_write_spec('emu', 'ws');
SELECT count(*) FROM lancelsm_write_spec('emu', 'ws');
SELECT count(*) FROM lancelsm_stats('emu', 'ws');
SELECT emu_try($$SELECT lancelsm_unset_write_spec('emu', 'ws')$$);
SELECT ws_calls('ws');
SELECT e->>'body' = '' AS unset_has_no_body FROM emu_log() e
 WHERE e->>'route' = 'unset_lsm_write_spec';
-- identity and unsharded; an explicit list of indexes; empty list
SELECT lancelsm_set_write_spec('emu', 'ws', 'identity', 'region',
                               maintained_indexes => ARRAY['txt_idx']);
SELECT ws_body();
SELECT * FROM lancelsm_write_spec('emu', 'ws');
SELECT lancelsm_unset_write_spec('emu', 'ws');
SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', maintained_indexes => '{}');
SELECT ws_body();
SELECT * FROM lancelsm_write_spec('emu', 'ws');
SELECT shard_id FROM lancelsm_stats('emu', 'ws');
SELECT lancelsm_unset_write_spec('emu', 'ws');
-- non-ASCII names go out as UTF-8 and come back unchanged
SELECT emu('POST', '/_emulator/tables',
           '{"name": "ws_u", "buckets": 1, "lsm": false, "indexes": ["índice"]}');
SELECT lancelsm_set_write_spec('emu', 'ws_u', 'identity', 'région',
                               writer_config_defaults => '{"clé": "été"}');
SELECT * FROM lancelsm_write_spec('emu', 'ws_u');
-- the server's own checks: no primary key, bucketed column not the key
SELECT emu('POST', '/_emulator/tables',
           '{"name": "ws_nopk", "buckets": 1, "lsm": false, "primary_key": null}');
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws_nopk', 'unsharded')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'bucket', 'region', 2)$$);
-- refused before any request: 22023 (22004 for a NULL that means nothing)
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'hash', 'id', 4)$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'Bucket', 'id', 4)$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'bucket', NULL, 4)$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'bucket', 'id')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'identity')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'identity', 'region', 4)$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', 'id')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', num_buckets => 1)$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'identity', '')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'bucket', 'id', 0)$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'bucket', 'id', 1025)$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'bucket', 'id', -1)$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', writer_config_defaults => '[]')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', writer_config_defaults => '"x"')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', writer_config_defaults => '{"a": "1", "b": 2}')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', writer_config_defaults => '{"a": {"b": "c"}}')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', writer_config_defaults => 'null')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', writer_config_defaults => NULL)$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', maintained_indexes => ARRAY['a', ''])$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', maintained_indexes => ARRAY['a', NULL])$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', maintained_indexes => ARRAY['a', 'b', 'a'])$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded', maintained_indexes => ARRAY[['a'], ['b']])$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', NULL)$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec(NULL, 'ws', 'unsharded')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', NULL, 'unsharded')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', '', 'unsharded')$$);
SELECT emu_try($$SELECT lancelsm_set_write_spec('nosuch', 'ws', 'hash')$$);
SELECT lancelsm_unset_write_spec(NULL, 'ws') IS NULL AS strict_unset;
SELECT count(*) FROM lancelsm_write_spec('emu', NULL);
SELECT (emu('GET', '/_emulator/counts') ->> 'total')::int AS requests_sent;
-- retry policy: 429 and 503 (not draining) retried, then success
SELECT emu_reset();
SELECT emu('POST', '/_emulator/tables', '{"name": "ws", "buckets": 1, "lsm": false}');
SELECT emu_fault('ws', 'set_lsm_write_spec', 429, 2);
SELECT emu_fault('ws', 'set_lsm_write_spec', 503, 1);
SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded');
SELECT emu_fault('ws', 'get_lsm_write_spec', 429, 3);
SELECT sharding FROM lancelsm_write_spec('emu', 'ws');
SELECT emu_fault('ws', 'unset_lsm_write_spec', 503, 2, '{"json": {"code": 7, "error": "proxy busy"}}');
SELECT lancelsm_unset_write_spec('emu', 'ws');
SELECT ws_calls('ws');
-- ... 429 past the budget: 1 + 8 calls, reported as itself
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ws', 'get_lsm_write_spec', 429, -1);
SELECT emu_try($$SELECT * FROM lancelsm_write_spec('emu', 'ws')$$);
SELECT ws_calls('ws');
SELECT emu('DELETE', '/_emulator/faults');
-- 409 on every write spec route, and 500, 502 and 504 on get, are retried
-- as the SDK's transport retries them, every attempt with the same
-- x-request-id; 500, 502 and 504 on set and unset are not (the server may
-- have acted): exactly one call each; a draining 503 is retried like any
-- 503 (here a budget of 1: two calls), then reported as a draining node
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded');
SELECT emu_fault('ws', 'unset_lsm_write_spec', 500, 1, '{"apply": true}');
SELECT emu_try($$SELECT lancelsm_unset_write_spec('emu', 'ws')$$);
SELECT emu_fault('ws', 'get_lsm_write_spec', 409);
SELECT emu_fault('ws', 'get_lsm_write_spec', 500);
SELECT emu_fault('ws', 'get_lsm_write_spec', 502);
SELECT emu_fault('ws', 'get_lsm_write_spec', 504);
-- the unset that answered 500 had acted: the path is off
SELECT count(*) FROM lancelsm_write_spec('emu', 'ws');
SELECT emu_fault('ws', 'set_lsm_write_spec', 409);
SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded');
SELECT emu_fault('ws', 'unset_lsm_write_spec', 409);
SELECT lancelsm_unset_write_spec('emu', 'ws');
SELECT emu_fault('ws', 'set_lsm_write_spec', 502);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded')$$);
SELECT emu_fault('ws', 'set_lsm_write_spec', 504);
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded')$$);
SELECT emu_fault('ws', 'set_lsm_write_spec', 503, -1, '{"json": {"code": 19, "error": "node is draining"}}');
SET lancelsm.retry_budget = 1;
SELECT emu_try($$SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded')$$);
RESET lancelsm.retry_budget;
SELECT emu('DELETE', '/_emulator/faults');
SELECT ws_calls('ws');
-- ... calls and distinct request ids per route, in order: one id for the
-- five attempts of the get, one for the two of a set and of an unset
SELECT route, status, dense_rank() OVER (ORDER BY first_seq) AS request
  FROM (SELECT e->>'route' AS route, e->>'status' AS status,
               (e->>'seq')::int AS seq,
               min((e->>'seq')::int) OVER (PARTITION BY e->'headers'->>'x-request-id') AS first_seq
          FROM emu_log() e) l
 ORDER BY seq;
-- set and unset go on a fresh connection (libcurl never re-sends them);
-- get reuses the connection of the request before it
SELECT emu('POST', '/_emulator/log/reset');
SELECT count(*) FROM lancelsm_write_spec('emu', 'ws');
SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded');
SELECT count(*) FROM lancelsm_write_spec('emu', 'ws');
SELECT lancelsm_unset_write_spec('emu', 'ws');
SELECT count(*) FROM lancelsm_write_spec('emu', 'ws');
SELECT e->>'route' AS route,
       (e->>'conn')::int = lag((e->>'conn')::int) OVER (ORDER BY (e->>'seq')::int) AS same_conn
  FROM emu_log() e ORDER BY (e->>'seq')::int;
-- a set answered 200 with a JSON body: the body is ignored
SELECT emu_fault('ws', 'set_lsm_write_spec', 200, 1, '{"apply": true, "json": {"anything": [1]}}');
SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded');
SELECT sharding FROM lancelsm_write_spec('emu', 'ws');
-- the answer of a read is decoded strictly (08P01 names the field)
SELECT emu('POST', '/_emulator/faults', '{"table": "ws", "route": "get_lsm_write_spec", "mutate": "missing:lsm_write_spec.sharding.mode"}');
SELECT emu_try($$SELECT * FROM lancelsm_write_spec('emu', 'ws')$$);
SELECT emu('POST', '/_emulator/faults', '{"table": "ws", "route": "get_lsm_write_spec", "mutate": "mistype:lsm_write_spec.writer_config_defaults"}');
SELECT emu_try($$SELECT * FROM lancelsm_write_spec('emu', 'ws')$$);
-- ... but what the SDK's types default is accepted: no lsm_write_spec is
-- null (no rows), no maintained_indexes / writer_config_defaults are empty;
-- a null writer_config_defaults is refused, as serde refuses it
SELECT emu('POST', '/_emulator/faults', '{"table": "ws", "route": "get_lsm_write_spec", "mutate": "missing:lsm_write_spec"}');
SELECT count(*) FROM lancelsm_write_spec('emu', 'ws');
SELECT emu('POST', '/_emulator/faults', '{"table": "ws", "route": "get_lsm_write_spec", "mutate": "missing:lsm_write_spec.maintained_indexes"}');
SELECT emu('POST', '/_emulator/faults', '{"table": "ws", "route": "get_lsm_write_spec", "mutate": "missing:lsm_write_spec.writer_config_defaults"}');
SELECT sharding, maintained_indexes, writer_config_defaults FROM lancelsm_write_spec('emu', 'ws');
SELECT sharding, maintained_indexes, writer_config_defaults FROM lancelsm_write_spec('emu', 'ws');
SELECT emu('POST', '/_emulator/faults', '{"table": "ws", "route": "get_lsm_write_spec", "mutate": "null:lsm_write_spec.writer_config_defaults"}');
SELECT emu_try($$SELECT * FROM lancelsm_write_spec('emu', 'ws')$$);
-- any 2xx: a 204 set, a 202 unset, a 203 read
SELECT emu_fault('ws', 'unset_lsm_write_spec', 202, 1, '{"apply": true, "json": {"report": "done"}}');
SELECT lancelsm_unset_write_spec('emu', 'ws');
SELECT emu_fault('ws', 'set_lsm_write_spec', 204, 1, '{"apply": true, "body": ""}');
SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded');
SELECT emu_fault('ws', 'get_lsm_write_spec', 203, 1, '{"json": {"lsm_write_spec": {"sharding": {"mode": "bucket", "column": "id", "num_buckets": 0}}}}');
SELECT sharding, sharding_column, num_buckets, maintained_indexes, writer_config_defaults FROM lancelsm_write_spec('emu', 'ws');
-- maintained_indexes null: every index the table has (NULL), as the SDK's
-- newest code reads it; writer_config_defaults null stays refused (above)
SELECT emu_fault('ws', 'get_lsm_write_spec', 200, 1,
  '{"json": {"lsm_write_spec": {"sharding": {"mode": "unsharded"}, "maintained_indexes": null, "writer_config_defaults": {}}}}');
SELECT sharding, maintained_indexes IS NULL AS every_index, writer_config_defaults FROM lancelsm_write_spec('emu', 'ws');
SELECT emu_fault('ws', 'get_lsm_write_spec', 200, 1,
  '{"json": {"lsm_write_spec": {"sharding": {"mode": "bucket", "column": "id", "num_buckets": "4"}, "maintained_indexes": [], "writer_config_defaults": {}}}}');
SELECT emu_try($$SELECT * FROM lancelsm_write_spec('emu', 'ws')$$);
SELECT emu_fault('ws', 'get_lsm_write_spec', 200, 1,
  '{"json": {"lsm_write_spec": {"sharding": {"mode": "range"}, "maintained_indexes": [], "writer_config_defaults": {}}}}');
SELECT emu_try($$SELECT * FROM lancelsm_write_spec('emu', 'ws')$$);
SELECT emu('POST', '/_emulator/faults', '{"table": "ws", "route": "get_lsm_write_spec", "mutate": "not_json"}');
SELECT emu_try($$SELECT * FROM lancelsm_write_spec('emu', 'ws')$$);
-- ... members it does not know are ignored
SELECT emu_fault('ws', 'get_lsm_write_spec', 200, 1,
  '{"json": {"lsm_write_spec": {"sharding": {"mode": "identity", "column": "c", "x": 1}, "maintained_indexes": ["i"], "writer_config_defaults": {"k": "v"}, "y": [2]}, "z": null}}');
SELECT * FROM lancelsm_write_spec('emu', 'ws');
-- the same specs as the SDK conformance check: lancelsm sends the body
-- the Node SDK sends (test/conformance/write_spec_bodies.json)
\set bodies `cat test/conformance/write_spec_bodies.json`
CREATE FUNCTION ws_case(c jsonb) RETURNS boolean LANGUAGE plpgsql AS $fn$
DECLARE
  a jsonb := c->'lancelsm';
BEGIN
  PERFORM emu('POST', '/_emulator/tables',
              '{"name": "wsc", "lsm": false, "indexes": ["vec_idx", "txt_idx"]}');
  PERFORM lancelsm_set_write_spec('emu', 'wsc', a->>'sharding', a->>'sharding_column',
            (a->>'num_buckets')::int,
            CASE WHEN jsonb_typeof(a->'maintained_indexes') = 'array' THEN
              ARRAY(SELECT jsonb_array_elements_text(a->'maintained_indexes')) END,
            a->'writer_config_defaults');
  RETURN ws_body() = c->'body';
END
$fn$;
SELECT c->>'name' AS spec, ws_case(c) AS same_body
  FROM jsonb_array_elements(:'bodies'::jsonb) WITH ORDINALITY AS x(c, n) ORDER BY n;
DROP FUNCTION ws_case(jsonb);
-- permissions: a role with USAGE and a mapping reads the spec but cannot
-- switch the path on or off (42501, nothing sent); granted, it can
CREATE ROLE lancelsm_ws_monitor;
CREATE ROLE lancelsm_ws_admin;
GRANT USAGE ON FOREIGN SERVER emu TO lancelsm_ws_monitor, lancelsm_ws_admin;
GRANT SELECT ON emu_conf TO lancelsm_ws_monitor, lancelsm_ws_admin;
GRANT EXECUTE ON FUNCTION lancelsm_set_write_spec(text, text, text, text, integer, text[], jsonb),
                          lancelsm_unset_write_spec(text, text) TO lancelsm_ws_admin;
SELECT emu('POST', '/_emulator/log/reset');
SET ROLE lancelsm_ws_monitor;
SELECT sharding FROM lancelsm_write_spec('emu', 'ws');
SELECT lancelsm_unset_write_spec('emu', 'ws');
SELECT lancelsm_set_write_spec('emu', 'ws', 'unsharded');
RESET ROLE;
SELECT ws_calls('ws');
SET ROLE lancelsm_ws_admin;
SELECT lancelsm_unset_write_spec('emu', 'ws');
SELECT lancelsm_set_write_spec('emu', 'ws', 'bucket', 'id', 2);
RESET ROLE;
SELECT ws_calls('ws');
SELECT lancelsm_unset_write_spec('emu', 'ws');
REVOKE ALL ON emu_conf FROM lancelsm_ws_monitor, lancelsm_ws_admin;
REVOKE USAGE ON FOREIGN SERVER emu FROM lancelsm_ws_monitor, lancelsm_ws_admin;
REVOKE EXECUTE ON FUNCTION lancelsm_set_write_spec(text, text, text, text, integer, text[], jsonb),
                           lancelsm_unset_write_spec(text, text) FROM lancelsm_ws_admin;
DROP ROLE lancelsm_ws_monitor;
DROP ROLE lancelsm_ws_admin;
DROP FUNCTION ws_calls(text);
DROP FUNCTION ws_body();
