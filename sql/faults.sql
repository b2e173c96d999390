-- faults: every fault class of the protocol with its SQLSTATE and call
-- count, strict decoding of stats, transport failures.
SELECT key AS emu_key FROM emu_conf \gset
SELECT emu_reset();
-- try(sql): 'ok', or SQLSTATE, message, detail (request id replaced, after
-- checking it is the id of the last request the emulator logged) and hint
CREATE FUNCTION try(sql text) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  st text; msg text; det text; hin text; rid text; last_rid text; tag text;
BEGIN
  EXECUTE sql;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
    det = PG_EXCEPTION_DETAIL, hin = PG_EXCEPTION_HINT;
  rid := substring(det from 'Request ID: ([^ ]+)\.');
  IF rid IS NOT NULL THEN
    SELECT e->'headers'->>'x-request-id' INTO last_rid
      FROM emu_log() e ORDER BY (e->>'seq')::int DESC LIMIT 1;
    tag := CASE WHEN rid = last_rid THEN 'last logged request'
                WHEN EXISTS (SELECT 1 FROM emu_log() e
                              WHERE e->'headers'->>'x-request-id' = rid)
                     THEN 'an earlier logged request'
                ELSE 'not logged' END;
    det := replace(det, rid, '<' || tag || '>');
  END IF;
  RETURN st || ' ' || msg
         || CASE WHEN det <> '' THEN E'\nDETAIL: ' || det ELSE '' END
         || CASE WHEN hin <> '' THEN E'\nHINT: ' || hin ELSE '' END;
END
$fn$;
-- qfault(route, fault): queue one fault on table events (no status: the
-- route runs for real)
CREATE FUNCTION qfault(route text, fault jsonb) RETURNS void LANGUAGE sql AS
$$ SELECT emu('POST', '/_emulator/faults',
              jsonb_build_object('table', 'events', 'route', route) || fault) $$;
-- mut(m): queue a stats answer mutation, read the stats with generation rows
CREATE FUNCTION mut(m text) RETURNS text LANGUAGE sql AS
$$ SELECT qfault('get_lsm_stats', jsonb_build_object('mutate', m));
   SELECT try($q$SELECT * FROM lancelsm_stats('emu', 'events', true)$q$) $$;
-- calls(tbl): flush/compact/stats call counts since the last reset
CREATE FUNCTION calls(tbl text) RETURNS text LANGUAGE sql AS $$
  SELECT format('flush %s, compact %s, stats %s', c->>'flush_lsm',
                c->>'compact_lsm', c->>'get_lsm_stats')
    FROM emu_counts(tbl) c $$;
-- 400: flush / compact on a table without an LSM write path
SELECT emu('POST', '/_emulator/tables', '{"name": "nolsm", "buckets": 1, "lsm": false}');
SELECT try($$SELECT lancelsm_flush('emu', 'nolsm')$$);
SELECT try($$SELECT lancelsm_compact('emu', 'nolsm')$$);
SELECT calls('nolsm');
SELECT 1;
-- 401: a wrong key (a second server, its own mapping)
SELECT 'http://127.0.0.1:' || port AS emu_url FROM emu_conf \gset
CREATE SERVER emu_badkey FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'emu_url');
CREATE USER MAPPING FOR PUBLIC SERVER emu_badkey OPTIONS (api_key 'wrong-key');
SELECT emu('POST', '/_emulator/log/reset');
SELECT try($$SELECT lancelsm_flush('emu_badkey', 'events')$$);
SELECT try($$SELECT lancelsm_checkpoint('emu_badkey', 'events')$$);
SELECT try($$SELECT * FROM lancelsm_stats('emu_badkey', 'events')$$);
SELECT calls('events');
-- ... and no key at all: no x-api-key header
ALTER USER MAPPING FOR PUBLIC SERVER emu_badkey OPTIONS (DROP api_key);
SELECT emu('POST', '/_emulator/log/reset');
SELECT try($$SELECT lancelsm_flush('emu_badkey', 'events')$$);
SELECT e->'headers' ? 'x-api-key' AS has_key FROM emu_log() e;
DROP SERVER emu_badkey CASCADE;
SELECT 1;
-- 403
SELECT emu_reset();
SELECT emu_fault('events', 'flush_lsm', 403, 1, '{"json": {"code": 2, "error": "key has no access to events"}}');
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
SELECT calls('events');
-- 404: exactly one call, whatever the function
SELECT emu('POST', '/_emulator/log/reset');
SELECT try($$SELECT lancelsm_flush('emu', 'nosuch')$$);
SELECT try($$SELECT lancelsm_compact('emu', 'nosuch')$$);
SELECT try($$SELECT lancelsm_checkpoint('emu', 'nosuch')$$);
SELECT try($$SELECT * FROM lancelsm_stats('emu', 'nosuch')$$);
SELECT try($$SELECT * FROM lancelsm_generations('emu', 'nosuch')$$);
SELECT try($$SELECT * FROM lancelsm_memtables('emu', 'nosuch')$$);
SELECT calls('nosuch');
-- 409: the table is being dropped
SELECT emu('POST', '/_emulator/tables/events/dropping', '{"dropping": true}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'events')$$);
SELECT try($$SELECT * FROM lancelsm_stats('emu', 'events')$$);
SELECT calls('events');
SELECT emu('POST', '/_emulator/tables/events/dropping', '{"dropping": false}');
-- 421 on compact (lancelsm_compact does not re-issue: one call)
SELECT emu('POST', '/_emulator/tables/events/claim', '{"claimed": false}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT try($$SELECT lancelsm_compact('emu', 'events')$$);
SELECT calls('events');
SELECT 1;
-- 429 five times on flush, then success: six flush calls
SELECT emu_reset();
SELECT emu_fault('events', 'flush_lsm', 429, 5, '{"json": {"code": 6, "error": "busy"}}');
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
SELECT calls('events');
-- 429 forever: 1 + 8 = 9 calls, the 429 reported as itself
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('events', 'flush_lsm', 429, -1, '{"json": {"code": 6, "error": "compactor pool saturated"}}');
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
SELECT calls('events');
-- every request of the nine has its own request id
SELECT count(DISTINCT e->'headers'->>'x-request-id') AS ids FROM emu_log() e;
-- the budget is a setting
SET lancelsm.retry_budget = 2;
SELECT emu('POST', '/_emulator/faults/clear');
SELECT emu_fault('events', 'get_lsm_stats', 429, -1);
SELECT emu('POST', '/_emulator/log/reset');
SELECT try($$SELECT * FROM lancelsm_stats('emu', 'events')$$);
SELECT calls('events');
SET lancelsm.retry_budget = 0;
SELECT emu('POST', '/_emulator/faults/clear');
SELECT emu_fault('events', 'compact_lsm', 429, -1);
SELECT emu('POST', '/_emulator/log/reset');
SELECT try($$SELECT lancelsm_compact('emu', 'events')$$);
SELECT calls('events');
RESET lancelsm.retry_budget;
-- compact on an empty L0 is the emulator's own 429 (code 6): retried too
SELECT emu('POST', '/_emulator/faults/clear');
SELECT emu('POST', '/_emulator/log/reset');
SELECT try($$SELECT lancelsm_compact('emu', 'events')$$);
SELECT calls('events');
SELECT 1;
-- 503 with code 19 (draining): retried like any 503, as the SDKs do since
-- upstream stopped failing it at once; past the budget (2 here: three
-- calls) the error is 57P03 and says the node was draining
SELECT emu_reset();
SELECT emu('POST', '/_emulator/node', '{"draining": true}');
SET lancelsm.retry_budget = 2;
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
SELECT calls('events');
SELECT emu('POST', '/_emulator/log/reset');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'events')$$);
SELECT calls('events');
RESET lancelsm.retry_budget;
SELECT emu('POST', '/_emulator/node', '{"draining": false}');
-- ... a rolling restart: the node drains for 2 s; with backoffs of 400,
-- 800 and 1600 ms the flushes go at 0, 0.4, 1.2 and 2.8 s, so the fourth
-- one (0.8 s clear of either side) finds the node back and the checkpoint
-- succeeds
SELECT emu('POST', '/_emulator/log/reset');
SET lancelsm.backoff_base = '400ms';
SET lancelsm.backoff_max = '5s';
SELECT emu('POST', '/_emulator/node', '{"draining": true, "draining_ms": 2000}');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'events')$$);
SELECT calls('events');
RESET lancelsm.backoff_base;
RESET lancelsm.backoff_max;
-- ... a drain that ends within the budget: two 503s, then success
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('events', 'flush_lsm', 503, 2, '{"json": {"code": 19, "error": "node is draining"}}');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'events')$$);
SELECT calls('events');
-- 503 with another body (a proxy page): retried; twice then success = 3
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('events', 'flush_lsm', 503, 2, '{"body": "<html>503 Service Temporarily Unavailable</html>", "content_type": "text/html"}');
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
SELECT calls('events');
-- ... a JSON body with another code is retried as well
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('events', 'get_lsm_stats', 503, 1, '{"json": {"code": 7, "error": "overloaded"}}');
SELECT count(*) FROM lancelsm_stats('emu', 'events');
SELECT calls('events');
-- ... forever: nine calls, reported as itself (empty body)
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('events', 'flush_lsm', 503, -1);
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
SELECT calls('events');
SELECT emu('POST', '/_emulator/faults/clear');
-- 500 (and other 5xx): fail, one call
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('events', 'flush_lsm', 500, 1, '{"json": {"code": 99, "error": "internal error"}}');
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
SELECT emu_fault('events', 'get_lsm_stats', 502, 1, '{"body": "Bad Gateway\r\n\u0001"}');
SELECT try($$SELECT * FROM lancelsm_stats('emu', 'events')$$);
SELECT calls('events');
-- other statuses the protocol does not list: protocol violation
SELECT emu_fault('events', 'compact_lsm', 418, 1, '{"json": {"error": "teapot"}}');
SELECT try($$SELECT lancelsm_compact('emu', 'events')$$);
-- ... but any 2xx is a success, as in the SDKs (a 204 compact)
SELECT emu_fault('events', 'compact_lsm', 204, 1, '{"body": ""}');
SELECT try($$SELECT lancelsm_compact('emu', 'events')$$);
SELECT 1;
-- no status: connection refused
CREATE SERVER emu_closed FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:1');
CREATE USER MAPPING FOR PUBLIC SERVER emu_closed OPTIONS (api_key 'closed-port-key-0001');
-- (curl's own text is in the detail: only its first words are shown)
SELECT regexp_replace(try($$SELECT lancelsm_flush('emu_closed', 'events')$$),
                      'Could not reach the server: [^\n]*', 'Could not reach the server: ...') AS refused;
SELECT regexp_replace(try($$SELECT lancelsm_checkpoint('emu_closed', 'events')$$),
                      'Could not reach the server: [^\n]*', 'Could not reach the server: ...') AS refused;
SELECT regexp_replace(try($$SELECT * FROM lancelsm_stats('emu_closed', 'events')$$),
                      'Could not reach the server: [^\n]*', 'Could not reach the server: ...') AS refused;
-- a request never sent has no request id that a server could have
-- logged: none for a refused connection, nor for an endpoint that
-- lancelsm.allowed_endpoints refuses; a request answered has one
SELECT try($$SELECT lancelsm_flush('emu_closed', 'events')$$) ~ 'Request ID' AS refused_has_id;
SET lancelsm.allowed_endpoints = '10.0.0.0/8';
SELECT regexp_replace(try($$SELECT lancelsm_flush('emu', 'events')$$),
                      '127\.0\.0\.1:[0-9]+', '127.0.0.1:<port>') AS denied;
RESET lancelsm.allowed_endpoints;
SELECT try($$SELECT lancelsm_flush('emu', 'fa_nosuch')$$) AS answered;
\set VERBOSITY terse
SELECT lancelsm_flush('emu_closed', 'events');
-- a table name holding the key is the caller's own text: shown as passed,
-- in the errmsg as in a row's message (a mask would be an oracle)
SELECT lancelsm_flush('emu_closed', 'of-closed-port-key-0001');
SELECT sqlstate, split_part(message, ':', 1) AS message
  FROM lancelsm_checkpoint('emu_closed', ARRAY['of-closed-port-key-0001']);
\set VERBOSITY default
SELECT 1;
DROP SERVER emu_closed CASCADE;
-- a connection closed before any answer.  On a fresh connection (a new
-- server has its own): 08006 after exactly one call
SELECT emu_reset();
SELECT 'http://127.0.0.1:' || port AS emu_url FROM emu_conf \gset
CREATE SERVER emu_fresh FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'emu_url');
CREATE USER MAPPING FOR PUBLIC SERVER emu_fresh OPTIONS (api_key :'emu_key');
SELECT qfault('flush_lsm', '{"action": "close_before_headers", "apply": true}');
SELECT try($$SELECT lancelsm_flush('emu_fresh', 'events')$$) ~ '^08006 could not flush LanceDB table "events"' AS failed;
SELECT calls('events');
DROP SERVER emu_fresh CASCADE;
-- ... on a reused keep-alive connection libcurl sends the request again,
-- once, on a new connection (a deliberate choice: flush is idempotent,
-- compact only latches what is free; see src/net/http.c): two calls, success
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 1, "rows": 2}');
SELECT count(*) FROM lancelsm_stats('emu', 'events');
SELECT emu('POST', '/_emulator/log/reset');
SELECT qfault('flush_lsm', '{"action": "close_before_headers", "apply": true}');
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
SELECT calls('events');
SELECT count(DISTINCT e->>'conn') AS connections FROM emu_log() e;
SELECT emu('POST', '/_emulator/log/reset');
SELECT qfault('compact_lsm', '{"action": "reset"}');
SELECT try($$SELECT lancelsm_compact('emu', 'events')$$);
SELECT calls('events');
SELECT 1;
-- strict decoding of stats: 08P01 naming the field
SELECT emu_reset();
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 1, "rows": 3}');
SELECT emu('POST', '/_emulator/tables/events/write', '{"rows": 2}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT m AS mutate, mut(m) AS error
  FROM unnest(ARRAY[
            'truncate', 'not_json', 'html', 'nest:5000',
            'missing:lsm_stats', 'mistype:lsm_stats',
            'missing:lsm_stats.buckets', 'mistype:lsm_stats.buckets',
            'mistype:lsm_stats.buckets.0',
            'missing:lsm_stats.buckets.0.shard_id', 'mistype:lsm_stats.buckets.0.shard_id',
            'missing:lsm_stats.buckets.0.status', 'mistype:lsm_stats.buckets.0.status',
            'missing:lsm_stats.buckets.0.writer_epoch', 'mistype:lsm_stats.buckets.0.writer_epoch',
            'negative:lsm_stats.buckets.0.writer_epoch', 'huge:lsm_stats.buckets.0.writer_epoch',
            'missing:lsm_stats.buckets.0.manifest_version', 'huge:lsm_stats.buckets.0.manifest_version',
            'missing:lsm_stats.buckets.0.current_generation', 'negative:lsm_stats.buckets.0.current_generation',
            'missing:lsm_stats.buckets.0.replay_after_wal_entry_position',
            'mistype:lsm_stats.buckets.0.wal_entry_position_last_seen',
            'missing:lsm_stats.buckets.0.generations', 'mistype:lsm_stats.buckets.0.generations',
            'missing:lsm_stats.buckets.0.generations.0.generation',
            'mistype:lsm_stats.buckets.0.generations.0.bytes',
            'missing:lsm_stats.buckets.0.generations.0.rows',
            'negative:lsm_stats.buckets.0.generations.0.rows',
            'missing:lsm_stats.buckets.0.compacting', 'mistype:lsm_stats.buckets.0.compacting',
            'missing:lsm_stats.buckets.0.memtables', 'mistype:lsm_stats.buckets.0.memtables',
            'null:lsm_stats.buckets.0.memtables', 'null:lsm_stats.buckets.0.status',
            'null:lsm_stats.buckets.0.generations', 'null:lsm_stats.buckets.0.compacting',
            'null:lsm_stats.buckets.0.generations.0.rows',
            'mistype:lsm_stats.buckets.0.generations.0.rows',
            'missing:lsm_stats.buckets.0.memtables.0.generation',
            'mistype:lsm_stats.buckets.0.memtables.0.rows',
            'missing:lsm_stats.buckets.0.memtables.0.batches',
            'missing:lsm_stats.buckets.0.memtables.0.indexes',
            'mistype:lsm_stats.buckets.0.memtables.0.indexes',
            'mistype:lsm_stats.buckets.0.memtables.0.indexes.0',
            'duplicate:lsm_stats', 'duplicate:lsm_stats.buckets.0.shard_id',
            'duplicate:lsm_stats.buckets.0.generations.0.bytes'
          ]) WITH ORDINALITY AS u(m, n) ORDER BY n;
SELECT calls('events');
-- a status override on a mutated answer is still judged by its status
SELECT qfault('get_lsm_stats', '{"mutate": "html", "status": 502}');
SELECT try($$SELECT * FROM lancelsm_stats('emu', 'events')$$);
-- extra fields everywhere are accepted, values unchanged
SELECT qfault('get_lsm_stats', '{"mutate": "extra"}');
SELECT shard_id, l0_generations, l0_rows, memtable_rows FROM lancelsm_stats('emu', 'events', true)
 ORDER BY shard_id COLLATE "C";
-- a checkpoint decodes strictly too (its first stats read)
SELECT qfault('get_lsm_stats', '{"mutate": "missing:lsm_stats.buckets.1.compacting"}');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'events')$$);
SELECT 1;
-- any 2xx is a success on every route, as in the SDKs; the bodies of flush
-- and compact are never read: 202 with a JSON report, 200 with {}, 204,
-- and a body that is not JSON at all
SELECT emu_reset();
SELECT emu_fault('events', 'flush_lsm', 202, 1, '{"apply": true, "json": {"sealed": 2}}');
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
SELECT emu_fault('events', 'flush_lsm', 200, 1, '{"apply": true, "json": {}}');
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
SELECT emu_fault('events', 'flush_lsm', 204, 1, '{"apply": true, "body": ""}');
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
SELECT emu_fault('events', 'compact_lsm', 200, 1, '{"body": ""}');
SELECT try($$SELECT lancelsm_compact('emu', 'events')$$);
SELECT emu_fault('events', 'compact_lsm', 202, 1, '{"json": {"dispatched": ["b0"]}}');
SELECT try($$SELECT lancelsm_compact('emu', 'events')$$);
SELECT qfault('flush_lsm', '{"mutate": "not_json"}');
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
-- stats answered 202 or 203 with its JSON: read as usual
SELECT qfault('get_lsm_stats', '{"status": 203, "mutate": "extra"}');
SELECT count(*) FROM lancelsm_stats('emu', 'events');
-- ... but a stats answer must still be JSON, whatever its 2xx (the SDK
-- fails to parse it too)
SELECT emu_fault('events', 'get_lsm_stats', 202, 1, '{"body": ""}');
SELECT try($$SELECT * FROM lancelsm_stats('emu', 'events')$$);
SELECT calls('events');
-- a checkpoint through 200 {} flushes and 204 compacts: same call counts
-- as with 202 (one flush, three compacts for three generations, one pass
-- each), same final L0
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 3, "buckets": ["b0"]}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('events', 'flush_lsm', 200, -1, '{"apply": true, "json": {}}');
SELECT emu_fault('events', 'compact_lsm', 204, -1, '{"apply": true, "body": ""}');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'events')$$);
SELECT emu('POST', '/_emulator/faults/clear');
SELECT emu_counts('events') ->> 'flush_lsm' AS flushes,
       emu_counts('events') ->> 'compact_lsm' AS compacts;
SELECT shard_id, l0_generations FROM lancelsm_stats('emu', 'events') ORDER BY shard_id COLLATE "C";
-- what the SDK's types leave optional: a WAL-only writer without
-- memtables (absent or null), a status in any spelling shown as sent,
-- generations without rows (l0_rows NULL for that bucket only), and an
-- answer without lsm_stats (no LSM write path: no rows)
SELECT emu_reset();
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 2, "rows": 3}');
SELECT emu('POST', '/_emulator/tables/events/bucket', '{"bucket": "b0", "status": "ACTIVE"}');
SELECT emu('POST', '/_emulator/tables/events/bucket', '{"bucket": "b1", "status": "Draining-Soon"}');
SELECT qfault('get_lsm_stats', '{"mutate": "missing:lsm_stats.buckets.0.memtables"}');
SELECT qfault('get_lsm_stats', '{"mutate": "null:lsm_stats.buckets.1.memtables"}');
SELECT shard_id, status, memtables, memtable_rows, memtable_bytes, l0_generations
  FROM lancelsm_stats('emu', 'events') ORDER BY shard_id COLLATE "C";
SELECT shard_id, status, memtables, memtable_rows, memtable_bytes, l0_generations
  FROM lancelsm_stats('emu', 'events') ORDER BY shard_id COLLATE "C";
SELECT qfault('get_lsm_stats', '{"mutate": "missing:lsm_stats.buckets.0.generations.1.rows"}');
SELECT shard_id, l0_generations, l0_rows FROM lancelsm_stats('emu', 'events', true)
 ORDER BY shard_id COLLATE "C";
SELECT qfault('get_lsm_stats', '{"mutate": "null:lsm_stats.buckets.1.generations.0.rows"}');
SELECT shard_id, generation, rows FROM lancelsm_generations('emu', 'events', true)
 ORDER BY shard_id COLLATE "C", generation;
SELECT qfault('get_lsm_stats', '{"mutate": "missing:lsm_stats"}');
SELECT count(*) FROM lancelsm_stats('emu', 'events');
SELECT qfault('get_lsm_stats', '{"mutate": "missing:lsm_stats"}');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'events')$$);
SELECT 1;
-- a redirect is not followed (its target, the emulator itself, sees no
-- second request)
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('events', 'flush_lsm', 302, 1,
  jsonb_build_object('action', 'redirect',
                     'location', 'http://127.0.0.1:' || port || '/v1/table/events/flush_lsm/?redirected=1'))
  FROM emu_conf;
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
SELECT emu_fault('events', 'get_lsm_stats', 307, 1,
  jsonb_build_object('action', 'redirect',
                     'location', 'http://127.0.0.1:' || port || '/v1/table/events/get_lsm_stats/?redirected=1'))
  FROM emu_conf;
SELECT try($$SELECT * FROM lancelsm_stats('emu', 'events')$$);
SELECT e->>'route' AS route, e->>'query' AS query, e->>'status' AS status
  FROM emu_log() e ORDER BY (e->>'seq')::int;
\set VERBOSITY terse
SELECT emu_fault('events', 'flush_lsm', 301, 1, '{"action": "redirect", "location": "http://127.0.0.1:1/"}');
SELECT lancelsm_flush('emu', 'events');
\set VERBOSITY default
SELECT 1;
-- an answer larger than lancelsm.max_response_size: 54000
SET lancelsm.max_response_size = '1kB';
SELECT emu('POST', '/_emulator/log/reset');
SELECT qfault('get_lsm_stats', '{"body_bytes": 4096}');
SELECT try($$SELECT * FROM lancelsm_stats('emu', 'events')$$);
SELECT qfault('get_lsm_stats', '{"body_bytes": 4096, "chunked": true}');
SELECT try($$SELECT * FROM lancelsm_stats('emu', 'events')$$);
SELECT emu_fault('events', 'flush_lsm', 500, 1, '{"body_bytes": 4096}');
SELECT try($$SELECT lancelsm_flush('emu', 'events')$$);
\set VERBOSITY terse
SELECT qfault('get_lsm_stats', '{"body_bytes": 4096}');
SELECT * FROM lancelsm_stats('emu', 'events');
\set VERBOSITY default
SELECT 1;
-- ... a body just under the limit is fine
SELECT qfault('get_lsm_stats', '{"body_bytes": 1000}');
SELECT count(*) FROM lancelsm_stats('emu', 'events');
RESET lancelsm.max_response_size;
SELECT qfault('get_lsm_stats', '{"body_bytes": 4096}');
SELECT count(*) FROM lancelsm_stats('emu', 'events');
SELECT calls('events');
-- renamed stats keys (a pending upstream rename: table_shards, sstables,
-- include_sstable_rows): both spellings decode to the same rows, and the
-- request key follows the spelling the server last answered with
SELECT emu_reset();
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 2, "rows": 5}');
CREATE FUNCTION stats_bodies() RETURNS SETOF text LANGUAGE sql AS
$$ SELECT e->>'body' FROM emu_log() e WHERE e->>'route' = 'get_lsm_stats'
   ORDER BY (e->>'seq')::int $$;
CREATE SERVER emu_keys FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'emu_url');
CREATE USER MAPPING FOR PUBLIC SERVER emu_keys OPTIONS (api_key :'emu_key');
CREATE SERVER emu_keys2 FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'emu_url');
CREATE USER MAPPING FOR PUBLIC SERVER emu_keys2 OPTIONS (api_key :'emu_key');
-- released spelling
SELECT * FROM lancelsm_generations('emu', 'events', true)
 ORDER BY shard_id COLLATE "C", generation;
SELECT emu('POST', '/_emulator/stats_keys', '{"keys": "sstables"}') ->> 'keys';
SELECT emu('POST', '/_emulator/log/reset');
-- a server not asked before is asked in the released spelling; its answer
-- comes renamed and without rows, so the request is sent again, once, in
-- the server's spelling: the same rows
SELECT * FROM lancelsm_generations('emu_keys', 'events', true)
 ORDER BY shard_id COLLATE "C", generation;
SELECT stats_bodies();
-- from then on that server is asked in its spelling
SELECT emu('POST', '/_emulator/log/reset');
SELECT shard_id, l0_generations, l0_bytes FROM lancelsm_stats('emu_keys', 'events')
 ORDER BY shard_id COLLATE "C";
SELECT * FROM lancelsm_generations('emu_keys', 'events', true)
 ORDER BY shard_id COLLATE "C", generation;
SELECT stats_bodies();
-- without rows the spelling of the request changes nothing: no resend
SELECT emu('POST', '/_emulator/log/reset');
SELECT count(*) FROM lancelsm_stats('emu_keys2', 'events');
SELECT stats_bodies();
-- a checkpoint drains L0 against the renamed answers
SELECT lancelsm_checkpoint('emu_keys', 'events');
SELECT count(*) FROM lancelsm_generations('emu_keys', 'events');
-- the server goes back: the request follows it again
SELECT emu('POST', '/_emulator/stats_keys', '{"keys": "generations"}') ->> 'keys';
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 1, "rows": 7}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT * FROM lancelsm_generations('emu_keys', 'events', true)
 ORDER BY shard_id COLLATE "C", generation;
SELECT stats_bodies();
-- an answer mixing the spellings is refused, naming the field
SELECT qfault('get_lsm_stats', jsonb_build_object('json', '{"lsm_stats": {"table_shards": [{"shard_id": "b0", "status": "Active", "writer_epoch": 1, "manifest_version": 1, "current_generation": 1, "replay_after_wal_entry_position": 0, "wal_entry_position_last_seen": 0, "generations": [], "compacting": false, "memtables": []}]}}'::jsonb));
SELECT try($$SELECT * FROM lancelsm_stats('emu_keys', 'events')$$);
SELECT qfault('get_lsm_stats', '{"json": {"lsm_stats": {"buckets": [], "table_shards": []}}}');
SELECT try($$SELECT * FROM lancelsm_stats('emu_keys', 'events')$$);
DROP SERVER emu_keys, emu_keys2 CASCADE;
-- Sealed buckets are targeted like any (the SDK's checkpoint never reads
-- status): their L0 is drained too
SELECT emu_reset();
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 2, "buckets": ["b0"]}');
SELECT emu('POST', '/_emulator/tables/events/bucket', '{"bucket": "b0", "status": "Sealed"}');
SELECT emu('POST', '/_emulator/log/reset');
SET statement_timeout = '20s';
SELECT try($$SELECT lancelsm_checkpoint('emu', 'events')$$);
SELECT emu_counts('events') ->> 'flush_lsm' AS flushes,
       emu_counts('events') ->> 'compact_lsm' AS compacts;
SELECT shard_id, status, l0_generations FROM lancelsm_stats('emu', 'events') ORDER BY shard_id COLLATE "C";
-- ... and a checkpoint stopped while it waits on one names it and its
-- status in the detail
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 1, "buckets": ["b0"]}');
SELECT emu('POST', '/_emulator/tables/events/latch', '{"bucket": "b0", "held": true}');
SET statement_timeout = '600ms';
SELECT lancelsm_checkpoint('emu', 'events');
SET statement_timeout = '20s';
SELECT emu('POST', '/_emulator/tables/events/latch', '{"bucket": "b0", "held": false}');
-- passes that end without draining anything (a server that keeps compacted
-- generations listed): the checkpoint waits, as the SDK's checkpoint_lsm
-- does; statement_timeout ends it, with the diagnosis in the detail
SELECT emu_reset();
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 2, "buckets": ["b1"]}');
SELECT emu('POST', '/_emulator/behaviour', '{"keep_compacted": true}') ->> 'keep_compacted';
SELECT emu('POST', '/_emulator/log/reset');
CREATE FUNCTION try_timeout(sql text) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  msg text; det text;
BEGIN
  EXECUTE sql;
  RETURN 'ok';
EXCEPTION WHEN query_canceled THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RETURN regexp_replace('57014 ' || msg || E'\nDETAIL: ' || det,
                        '[0-9]+ in a row', 'N in a row');
END $fn$;
SET statement_timeout = '1500ms';
SELECT try_timeout($$SELECT lancelsm_checkpoint('emu', 'events')$$);
SET statement_timeout = '20s';
DROP FUNCTION try_timeout(text);
SELECT (emu_counts('events') ->> 'compact_lsm')::int >= 3 AS three_passes_or_more;
-- ... lancelsm.max_idle_polls = 3, the one switch for failing fast: the
-- third pass in a row without a drop fails it (53400), after one flush and
-- three compacts (once the pass the timeout left running has ended)
DO $$
BEGIN
  FOR i IN 1..500 LOOP
    EXIT WHEN NOT (SELECT bool_or(compacting) FROM lancelsm_stats('emu', 'events'));
    PERFORM pg_sleep(0.01);
  END LOOP;
END $$;
SELECT emu('POST', '/_emulator/log/reset');
SET lancelsm.max_idle_polls = 3;
SELECT try($$SELECT lancelsm_checkpoint('emu', 'events')$$);
RESET lancelsm.max_idle_polls;
SELECT emu_counts('events') ->> 'flush_lsm' AS flushes,
       emu_counts('events') ->> 'compact_lsm' AS compacts;
SELECT emu('POST', '/_emulator/behaviour', '{"keep_compacted": false}') ->> 'keep_compacted';
-- a stall that heals: passes end with what they merged still listed for 12
-- stats reads, then it leaves the list; the checkpoint converges, after
-- exactly 13 stats reads (the 12th answer still lists them)
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 2, "buckets": ["b1"]}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu('POST', '/_emulator/behaviour', '{"stale_reads": 12}') ->> 'stale_reads';
SELECT try($$SELECT lancelsm_checkpoint('emu', 'events')$$);
SELECT emu_counts('events') ->> 'flush_lsm' AS flushes,
       emu_counts('events') ->> 'get_lsm_stats' AS stats_reads,
       (emu_counts('events') ->> 'compact_lsm')::int >= 3 AS three_passes_or_more;
SELECT shard_id, l0_generations FROM lancelsm_stats('emu', 'events') ORDER BY shard_id COLLATE "C";
-- one stalled table does not cost the others their rows: a call of many
-- tables stops waiting shortly before statement_timeout (1 s, or a tenth
-- of it when shorter) and returns a row per table, the stalled one not ok
-- (57014, with what it waited on), the converged one ok
SELECT emu('POST', '/_emulator/tables', '{"name": "calm", "buckets": 1}');
SELECT emu('POST', '/_emulator/tables/calm/generations', '{"count": 2}');
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 2, "buckets": ["b1"]}');
SELECT emu_fault('events', 'compact_lsm', 202, -1, '{"body": ""}');
SET statement_timeout = '2s';
SELECT table_name, ok, sqlstate,
       regexp_replace(message, '[0-9]+ in a row', 'N in a row') AS message,
       elapsed BETWEEN '1.5s' AND '1.9s' AS stopped_before_the_deadline
  FROM lancelsm_checkpoint('emu', ARRAY['events', 'calm']);
SET statement_timeout = '20s';
SELECT emu('POST', '/_emulator/faults/clear');
SELECT l0_generations FROM lancelsm_stats('emu', 'calm');
-- a compact that finds nothing to do, answered 429 or 202 (the server did
-- nothing): the checkpoint goes on and succeeds, one compact more
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('events', 'compact_lsm', 429, 1, '{"json": {"code": 6, "error": "nothing to compact"}}');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'events')$$);
SELECT emu_counts('events') ->> 'compact_lsm' AS compacts;
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 1, "buckets": ["b1"]}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('events', 'compact_lsm', 202, 1, '{"body": ""}');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'events')$$);
SELECT emu_counts('events') ->> 'compact_lsm' AS compacts;
-- ... and lancelsm_compact on an empty L0 answered 202 by such a server
SELECT emu('POST', '/_emulator/behaviour', '{"idle_compact_status": 202}') ->> 'idle_compact_status';
SELECT try($$SELECT lancelsm_compact('emu', 'events')$$);
SELECT emu('POST', '/_emulator/behaviour', '{"idle_compact_status": 429}') ->> 'idle_compact_status';
RESET statement_timeout;
DROP FUNCTION stats_bodies();
DROP FUNCTION mut(text);
DROP FUNCTION qfault(text, jsonb);
DROP FUNCTION try(text);
DROP FUNCTION calls(text);
