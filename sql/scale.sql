-- scale: the multi-table checkpoint, connection reuse and invalidation,
-- and the adaptive poller's lightness (polls per pass within bounds).
SELECT emu_reset();
-- the shipped poll intervals, not the fast ones of the test database
SET lancelsm.poll_interval_min = '50ms';
SET lancelsm.poll_interval_max = '5s';
SELECT count(emu('POST', '/_emulator/tables', jsonb_build_object('name', 't' || i, 'buckets', 1)))
  FROM generate_series(1, 4) i;
SELECT count(emu('POST', '/_emulator/tables/t' || i || '/generations', '{"count": 3}'))
  FROM generate_series(1, 4) i;
-- four tables drained concurrently, one missing, one refused, one NULL,
-- one duplicate: a row per distinct name, in order, nothing raised
SELECT table_name, ok, sqlstate, passes,
       polls BETWEEN passes AND 4 * passes + 2 AS light,
       elapsed IS NOT NULL AS timed
  FROM lancelsm_checkpoint('emu', ARRAY['t1', 't2', 'nope', 't3', '', NULL, 't4', 't1']);
-- exactly three compaction passes per table, one flush per table
SELECT emu_counts('t' || i) - 'get_lsm_stats' - 'total' AS counts
  FROM generate_series(1, 4) i;
SELECT count(*) AS l0_left
  FROM generate_series(1, 4) i, lancelsm_generations('emu', 't' || i);
-- the failing table's message carries the status and the request id
SELECT message ~ '^could not checkpoint LanceDB table "nope": The server answered HTTP status 404, code 3: .* Request ID: [0-9a-f-]{36}\.$' AS detailed
  FROM lancelsm_checkpoint('emu', ARRAY['nope']);
-- all of it on the connections first opened: five tables at once need five
SELECT (emu('GET', '/_emulator/counts') ->> 'connections')::int BETWEEN 1 AND 5 AS reused;
-- 200 calls in one session reuse one keep-alive connection
SELECT emu_reset();
SELECT count(lancelsm_flush('emu', 'events')) FROM generate_series(1, 200);
SELECT emu('GET', '/_emulator/counts?table=events') -> 'connections' AS connections;
-- changing the server's options drops its cached connections
ALTER SERVER emu OPTIONS (ADD connect_timeout '30');
SELECT lancelsm_flush('emu', 'events');
SELECT emu('GET', '/_emulator/counts?table=events') -> 'connections' AS connections;
-- and so does changing the user mapping
SELECT key AS emu_key FROM emu_conf \gset
ALTER USER MAPPING FOR PUBLIC SERVER emu OPTIONS (SET api_key :'emu_key');
SELECT lancelsm_flush('emu', 'events');
SELECT lancelsm_flush('emu', 'events');
SELECT emu('GET', '/_emulator/counts?table=events') -> 'connections' AS connections;
ALTER SERVER emu OPTIONS (DROP connect_timeout);
-- an empty array, and an array of NULLs: no rows
SELECT count(*) FROM lancelsm_checkpoint('emu', ARRAY[]::text[]);
SELECT count(*) FROM lancelsm_checkpoint('emu', ARRAY[NULL]::text[]);
-- a Sealed bucket (a drop in flight, which may still roll back) is targeted
-- like any other, as the SDK's checkpoint does: its L0 is drained, one
-- compact per generation
SELECT emu_reset();
SELECT emu('POST', '/_emulator/tables', '{"name": "sl", "buckets": 2}') IS NOT NULL AS created;
SELECT emu('POST', '/_emulator/tables/sl/generations', '{"count": 2, "buckets": ["b0"]}') IS NOT NULL AS sealed_l0;
SELECT emu('POST', '/_emulator/tables/sl/bucket', '{"bucket": "b0", "status": "Sealed"}') IS NOT NULL AS sealed;
SET statement_timeout = '20s';
SELECT lancelsm_checkpoint('emu', 'sl');
RESET statement_timeout;
SELECT emu_counts('sl') - 'get_lsm_stats' - 'total' AS counts;
SELECT shard_id, status, l0_generations FROM lancelsm_stats('emu', 'sl') ORDER BY shard_id COLLATE "C";
-- 20,000 over-long names and 100,000 duplicates: refused or merged fast,
-- in order, with no request sent
SELECT (emu('GET', '/_emulator/counts') ->> 'total')::int AS calls_before \gset
SELECT sqlstate, count(*) FROM lancelsm_checkpoint('emu',
  (SELECT array_agg(repeat('y', 1100) || g) FROM generate_series(1, 20000) g)) GROUP BY 1;
SELECT length(table_name), sqlstate FROM lancelsm_checkpoint('emu',
  (SELECT array_agg(repeat('z', 1100)) FROM generate_series(1, 100000) g));
SELECT (emu('GET', '/_emulator/counts') ->> 'total')::int - :calls_before AS calls_sent;
