-- checkpoint: the loop's reference call counts (docs/protocol.md, "The checkpoint loop")
SELECT emu_reset();
-- calls(tbl): flush/compact/stats call counts since the last log reset
CREATE FUNCTION calls(tbl text) RETURNS text LANGUAGE sql AS $$
  SELECT format('flush %s, compact %s, stats %s', c->>'flush_lsm',
                c->>'compact_lsm', c->>'get_lsm_stats')
    FROM emu_counts(tbl) c $$;
-- routes(): the routes called, in order, runs of stats reads collapsed
CREATE FUNCTION routes() RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(r || CASE WHEN s <> '202' AND s <> '200' THEN '(' || s || ')' ELSE '' END, ' ' ORDER BY seq)
    FROM (SELECT (e->>'seq')::int AS seq,
                 replace(replace(replace(e->>'route', '_lsm', ''), 'get_', ''), 'lsm_', '') AS r,
                 e->>'status' AS s,
                 lag(e->>'route') OVER (ORDER BY (e->>'seq')::int) AS prev,
                 lag(e->>'status') OVER (ORDER BY (e->>'seq')::int) AS prev_s
            FROM emu_log() e) q
   WHERE NOT (r = 'stats' AND prev = 'get_lsm_stats' AND s = '200' AND prev_s = '200') $$;
-- emu_later(seconds, calls): control requests [[path, body], ...] run in
-- the background after a delay, while this session waits in a checkpoint
CREATE FUNCTION emu_later(delay float8, calls jsonb) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  script text := format('sleep %s', delay);
  c jsonb;
BEGIN
  FOR c IN SELECT jsonb_array_elements(calls) LOOP
    script := script || format('; curl -sS --max-time 10 -X POST -H %s --data-binary %s http://127.0.0.1:%s%s',
      '''content-type: application/json''',
      '''' || replace((c->>1), '''', '''\''''') || '''',
      (SELECT port FROM emu_conf), c->>0);
  END LOOP;
  IF to_regclass('pg_temp.emu_out') IS NULL THEN
    CREATE TEMP TABLE emu_out (line text);
  END IF;
  EXECUTE format('COPY emu_out FROM PROGRAM %L', '(' || script || ') >/dev/null 2>&1 &');
END
$fn$;
-- try(sql): 'ok', or SQLSTATE, message and detail, request ids masked
CREATE FUNCTION try(sql text) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  st text; msg text; det text;
BEGIN
  EXECUTE sql;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
    det = PG_EXCEPTION_DETAIL;
  RETURN st || ' ' || msg || CASE WHEN det <> '' THEN E'\nDETAIL: ' ||
    regexp_replace(det, '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}', '<request-id>', 'g')
    ELSE '' END;
END
$fn$;
SET statement_timeout = '20s';
-- empty L0 after the flush: flush 1, stats 1, compact 0
SELECT emu('POST', '/_emulator/tables', '{"name": "ck", "buckets": 2}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck');
-- a checkpoint of a table with only unflushed rows: the flush makes them
-- L0 generation 1 in b0, one pass drains it
SELECT emu('POST', '/_emulator/tables/ck/write', '{"rows": 7, "bucket": "b0"}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck') ~ '^flush 1, compact 1, stats ' AS ok;
SELECT shard_id, current_generation, l0_generations, memtable_rows, compacting
  FROM lancelsm_stats('emu', 'ck') ORDER BY shard_id COLLATE "C";
-- three generations drained one per pass (prefix_max 1): three compacts
SELECT emu('POST', '/_emulator/tables', '{"name": "ck", "buckets": 1}');
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 3, "rows": 10}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck') ~ '^flush 1, compact 3, stats ' AS ok;
SELECT routes();
SELECT l0_generations FROM lancelsm_stats('emu', 'ck');
SELECT emu('GET', '/_emulator/tables/ck')->'passes_completed' AS passes;
-- the same on two buckets: one compact call dispatches a pass per bucket
SELECT emu('POST', '/_emulator/tables', '{"name": "ck", "buckets": 2}');
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 2, "rows": 10}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck') ~ '^flush 1, compact 2, stats ' AS ok;
-- every bucket compacting (passes dispatched by the server itself, held by
-- pinned latches) for many polls: zero compact calls; success once the
-- pins are released and the passes drain L0
SELECT emu('POST', '/_emulator/tables', '{"name": "ck", "buckets": 2}');
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/tables/ck/compact', '{"pass_ms": 300}');
SELECT emu('POST', '/_emulator/tables/ck/latch', '{"bucket": "b0", "held": true}');
SELECT emu('POST', '/_emulator/tables/ck/latch', '{"bucket": "b1", "held": true}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_later(1.0, '[["/_emulator/tables/ck/latch", "{\"bucket\": \"b0\", \"held\": false}"],
                        ["/_emulator/tables/ck/latch", "{\"bucket\": \"b1\", \"held\": false}"]]');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT (emu_counts('ck')->>'flush_lsm')::int AS flushes,
       (emu_counts('ck')->>'compact_lsm')::int AS compacts,
       (emu_counts('ck')->>'get_lsm_stats')::int >= 5 AS many_polls;
SELECT l0_generations, compacting FROM lancelsm_stats('emu', 'ck');
-- target 5 while writers add 6, 7, 8: one compact call, then done.  The
-- compact answer is delayed 400 ms; 150 ms into the checkpoint (after its
-- target was read) three generations arrive; the pass removes the oldest
-- five (prefix_max 5), which are the targets
SELECT emu('POST', '/_emulator/tables', '{"name": "ck", "buckets": 1}');
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 5, "rows": 10}');
SELECT emu('POST', '/_emulator/config', '{"prefix_max": 5}');
SELECT emu('POST', '/_emulator/latency', '{"table": "ck", "route": "compact_lsm", "ms": 400}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_later(0.15, '[["/_emulator/tables/ck/generations", "{\"count\": 3, \"rows\": 1}"]]');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck') ~ '^flush 1, compact 1, stats ' AS ok;
-- the target really was 5 (the watermark read), and 6, 7, 8 remain in L0
SELECT (SELECT jsonb_path_query_array((e->>'response')::jsonb, '$.lsm_stats.buckets[*].generations[*].generation')
          FROM emu_log() e WHERE e->>'route' = 'get_lsm_stats' ORDER BY (e->>'seq')::int LIMIT 1) AS watermark_read;
SELECT * FROM lancelsm_generations('emu', 'ck');
SELECT emu('POST', '/_emulator/faults/clear');
SELECT emu('POST', '/_emulator/config', '{"prefix_max": 1}');
-- five 429s on flush, then success: six flush calls, checkpoint succeeds
SELECT emu('POST', '/_emulator/tables', '{"name": "ck", "buckets": 1}');
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ck', 'flush_lsm', 429, 5, '{"json": {"code": 7, "error": "node is replaying its WAL"}}');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck') ~ '^flush 6, compact 1, stats ' AS ok;
SELECT routes();
-- every flush 429: 1 + 8 = 9 calls, the error is the 429
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ck', 'flush_lsm', 429, -1, '{"json": {"code": 6, "error": "compactor pool saturated"}}');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'ck')$$);
SELECT calls('ck');
SELECT emu('POST', '/_emulator/faults/clear');
-- ... the retry counter resets after every success: six 429s on the flush,
-- then six on the next stats read, never add up to the budget of 8
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ck', 'flush_lsm', 429, 6);
SELECT emu_fault('ck', 'get_lsm_stats', 429, 6);
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck') ~ '^flush 7, compact 1, stats ' AS ok;
-- 429 on the compact trigger is not retried in place: the next request
-- after it is a stats poll, and the checkpoint succeeds
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ck', 'compact_lsm', 429, 2, '{"json": {"code": 6, "error": "busy"}}');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck') ~ '^flush 1, compact 3, stats ' AS ok;
SELECT routes();
-- ... nor 503
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ck', 'compact_lsm', 503, 1);
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT routes();
-- 421 during the loop (on compact): re-issue from flush
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ck', 'compact_lsm', 421, 1, '{"json": {"code": 19, "error": "table not claimed"}}');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck') ~ '^flush 2, compact 2, stats ' AS ok;
SELECT routes();
-- ... on a stats poll as well
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ck', 'get_lsm_stats', 421, 1, '{"json": {"code": 19, "error": "table not claimed"}}');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck') ~ '^flush 2, compact 1, stats ' AS ok;
-- 421 forever: three re-issues, then 55P03 saying the node kept losing
-- its claim
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ck', 'flush_lsm', 421, -1, '{"json": {"code": 19, "error": "table not claimed"}}');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'ck')$$);
SELECT calls('ck');
SELECT emu('POST', '/_emulator/faults/clear');
-- ... and on every compact trigger: four flushes and four compacts
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ck', 'compact_lsm', 421, -1, '{"json": {"code": 19, "error": "table not claimed"}}');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'ck')$$);
SELECT calls('ck');
-- the budget is a setting: 0 re-issues fail on the first 421
SET lancelsm.reissue_budget = 0;
SELECT emu('POST', '/_emulator/log/reset');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'ck')$$);
SELECT calls('ck');
RESET lancelsm.reissue_budget;
SELECT emu('POST', '/_emulator/faults/clear');
-- a real lost claim (node restart): the flush re-claims, checkpoint works
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 2, "rows": 10}');
SELECT emu('POST', '/_emulator/node', '{"restart": true}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck') ~ '^flush 1, compact 2, stats ' AS ok;
SELECT shard_id, writer_epoch, l0_generations, compacting FROM lancelsm_stats('emu', 'ck');
-- ... a compact right after a restart is a lost claim (421, 55P03)
SELECT emu('POST', '/_emulator/node', '{"restart": true}');
SELECT try($$SELECT lancelsm_compact('emu', 'ck')$$);
SELECT lancelsm_flush('emu', 'ck');
-- lsm_stats null: the checkpoint returns after flush and one stats read
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ck', 'get_lsm_stats', 200, 1, '{"json": {"lsm_stats": null}}');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck');
-- ... or when it turns null during the loop
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ck', 'get_lsm_stats', 200, 1, '{"pass": true}');
SELECT emu_fault('ck', 'get_lsm_stats', 200, 1, '{"json": {"lsm_stats": null}}');
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT calls('ck');
SELECT emu('POST', '/_emulator/faults/clear');
-- a table without an LSM write path refuses the flush (400, 55000)
SELECT emu('POST', '/_emulator/tables', '{"name": "nolsm", "buckets": 1, "lsm": false}');
SELECT try($$SELECT lancelsm_checkpoint('emu', 'nolsm')$$);
-- lancelsm.max_idle_polls: polls with no progress and no pass running (the
-- compact trigger keeps answering 429) fail with 53400
SELECT emu('POST', '/_emulator/tables', '{"name": "ck", "buckets": 1}');
SELECT emu('POST', '/_emulator/tables/ck/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('ck', 'compact_lsm', 429, -1, '{"json": {"code": 6, "error": "busy"}}');
SET lancelsm.max_idle_polls = 5;
SELECT try($$SELECT lancelsm_checkpoint('emu', 'ck')$$);
SELECT calls('ck');
-- ... off (0, the default): statement_timeout is the bound
RESET lancelsm.max_idle_polls;
SET statement_timeout = '500ms';
SELECT lancelsm_checkpoint('emu', 'ck');
SET statement_timeout = '20s';
SELECT 1;
SELECT emu('POST', '/_emulator/faults/clear');
-- a saturated compactor pool: the pass is queued holding its latch
-- ("compacting": a pass owns the bucket), which is not idleness: the
-- idle bound does not fire, statement_timeout ends the checkpoint
SELECT emu('POST', '/_emulator/pool', '{"saturated": true}') - 'in_use' - 'waiting';
SET lancelsm.max_idle_polls = 3;
SET statement_timeout = '700ms';
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_checkpoint('emu', 'ck');
SET statement_timeout = '20s';
SELECT calls('ck') ~ '^flush 1, compact 1, stats ' AS ok;
SELECT 1;
-- once the pool frees up the same checkpoint completes
SELECT emu('POST', '/_emulator/pool', '{"saturated": false}') - 'in_use' - 'waiting';
SELECT lancelsm_checkpoint('emu', 'ck');
SELECT l0_generations, compacting FROM lancelsm_stats('emu', 'ck');
RESET lancelsm.max_idle_polls;
RESET statement_timeout;
DROP FUNCTION try(text);
DROP FUNCTION calls(text);
DROP FUNCTION routes();
DROP FUNCTION emu_later(float8, jsonb);
