-- functions: every function and column on deterministic tables, the
-- request each one sends, identifiers and their encoding.
SELECT key AS emu_key FROM emu_conf \gset
SELECT emu_reset();
-- fx: two buckets, no writer; b0 gets two L0 generations of 10 rows, b1
-- an unflushed memtable of 5 rows
SELECT emu('POST', '/_emulator/tables', '{"name": "fx", "buckets": 2, "indexes": ["vec_idx", "txt_idx"]}');
SELECT emu('POST', '/_emulator/tables/fx/generations', '{"count": 2, "rows": 10, "buckets": ["b0"]}');
SELECT emu('POST', '/_emulator/tables/fx/write', '{"rows": 5, "bucket": "b1"}');
SELECT emu('POST', '/_emulator/log/reset');
\x on
SELECT * FROM lancelsm_stats('emu', 'fx') ORDER BY shard_id COLLATE "C";
SELECT * FROM lancelsm_stats('emu', 'fx', true) ORDER BY shard_id COLLATE "C";
\x off
SELECT * FROM lancelsm_generations('emu', 'fx');
SELECT * FROM lancelsm_generations('emu', 'fx', include_generation_rows => true);
SELECT * FROM lancelsm_memtables('emu', 'fx');
-- what was sent: five stats reads; rows asked for only when requested
SELECT e->>'method' AS method, e->>'path' AS path, e->>'route' AS route,
       e->>'body' AS body, e->>'status' AS status
  FROM emu_log() e ORDER BY (e->>'seq')::int;
SELECT emu_counts('fx');
-- headers: key masked, database, user agent, a fresh UUID v4 per request,
-- content-type only where there is a body
SELECT lancelsm_flush('emu', 'fx');
SELECT lancelsm_compact('emu', 'fx');
SELECT e->>'route' AS route,
       e->'headers'->>'x-api-key' AS api_key,
       e->'headers'->>'x-lancedb-database' AS database,
       e->'headers'->>'user-agent' LIKE 'lancelsm/' || (SELECT library_version FROM lancelsm_info) || ' (PostgreSQL %)' AS ua,
       e->'headers'->>'x-request-id' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' AS uuid_v4,
       e->'headers'->>'content-type' AS content_type,
       e->>'body' AS body
  FROM emu_log() e ORDER BY (e->>'seq')::int;
SELECT count(*) AS requests, count(DISTINCT e->'headers'->>'x-request-id') AS distinct_ids
  FROM emu_log() e;
-- flush sealed b1's memtable (generation 1); compact latched both
-- buckets; once the passes are done (prefix_max 1) each bucket lost its
-- oldest generation
DO $$
BEGIN
  FOR i IN 1..200 LOOP
    EXIT WHEN (emu('GET', '/_emulator/tables/fx')->>'passes_completed')::int = 2;
    PERFORM pg_sleep(0.02);
  END LOOP;
END $$;
SELECT shard_id, current_generation, manifest_version, wal_lag, l0_generations,
       oldest_l0_generation, newest_l0_generation, l0_bytes, memtables,
       memtable_rows, compacting
  FROM lancelsm_stats('emu', 'fx') ORDER BY shard_id COLLATE "C";
SELECT * FROM lancelsm_generations('emu', 'fx', true);
SELECT * FROM lancelsm_memtables('emu', 'fx');
-- a Sealed bucket (a drop in flight) has no memtables: NULL summaries
SELECT emu('POST', '/_emulator/tables/fx/bucket', '{"bucket": "b1", "status": "Sealed"}');
SELECT shard_id, status, memtables, memtable_rows, memtable_bytes
  FROM lancelsm_stats('emu', 'fx') ORDER BY shard_id COLLATE "C";
SELECT * FROM lancelsm_memtables('emu', 'fx');
-- lsm_stats null: zero rows from every function, never a row of zeros
SELECT emu('POST', '/_emulator/tables', '{"name": "nolsm", "buckets": 2, "lsm": false}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT count(*) FROM lancelsm_stats('emu', 'nolsm');
SELECT count(*) FROM lancelsm_stats('emu', 'nolsm', true);
SELECT count(*) FROM lancelsm_generations('emu', 'nolsm');
SELECT count(*) FROM lancelsm_memtables('emu', 'nolsm');
SELECT e->>'route' AS route, e->>'status' AS status, e->>'response' AS response
  FROM emu_log() e ORDER BY (e->>'seq')::int;
-- namespaced identifiers: '$' is percent-encoded, no ?delimiter=
SELECT emu('POST', '/_emulator/tables/analytics%24events/write', '{"rows": 4}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_flush('emu', 'analytics$events');
SELECT lancelsm_compact('emu', 'analytics$events');
SELECT shard_id FROM lancelsm_stats('emu', 'analytics$events');
SELECT e->>'path' AS path, e->>'query' AS query, e->>'table' AS tbl, e->>'status' AS status
  FROM emu_log() e ORDER BY (e->>'seq')::int;
-- any name is one encoded path segment
SELECT emu('POST', '/_emulator/log/reset');
\set VERBOSITY terse
SELECT lancelsm_flush('emu', 'a/b');
SELECT lancelsm_flush('emu', 'a?b=c');
SELECT lancelsm_flush('emu', 'a#b');
SELECT lancelsm_flush('emu', '100%');
SELECT lancelsm_flush('emu', '..');
SELECT lancelsm_flush('emu', '.');
SELECT lancelsm_flush('emu', 'my table');
SELECT lancelsm_flush('emu', 'it''s "q"');
SELECT lancelsm_flush('emu', 'tëst_表');
SELECT lancelsm_flush('emu', 'A-Z_a~9.x+y');
\set VERBOSITY default
SELECT e->>'path' AS path, e->>'query' AS query, e->>'table' AS tbl, e->>'status' AS status
  FROM emu_log() e ORDER BY (e->>'seq')::int;
-- a delimiter other than '$' is sent as ?delimiter=, encoded

SELECT 'http://127.0.0.1:' || port AS emu_url FROM emu_conf \gset
CREATE SERVER emu_dots FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'otherdb', host_override :'emu_url', id_delimiter '.');
CREATE SERVER emu_colons FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'otherdb', host_override :'emu_url', id_delimiter '::');
CREATE SERVER emu_dollar FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'otherdb', host_override :'emu_url', id_delimiter '$');
CREATE USER MAPPING FOR PUBLIC SERVER emu_dots OPTIONS (api_key :'emu_key');
CREATE USER MAPPING FOR PUBLIC SERVER emu_colons OPTIONS (api_key :'emu_key');
CREATE USER MAPPING FOR PUBLIC SERVER emu_dollar OPTIONS (api_key :'emu_key');
SELECT emu('POST', '/_emulator/tables', '{"name": "ns.t", "buckets": 1}');
SELECT emu('POST', '/_emulator/tables', '{"name": "ns::t", "buckets": 1}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_flush('emu_dots', 'ns.t');
SELECT count(*) FROM lancelsm_stats('emu_colons', 'ns::t');
SELECT lancelsm_flush('emu_dollar', 'analytics$events');
SELECT e->>'path' AS path, e->>'query' AS query, e->>'table' AS tbl,
       e->'headers'->>'x-lancedb-database' AS database, e->>'status' AS status
  FROM emu_log() e ORDER BY (e->>'seq')::int;
DROP SERVER emu_dots, emu_colons, emu_dollar CASCADE;
-- empty and over-long names are refused before any request
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_flush('emu', '');
SELECT lancelsm_compact('emu', '');
SELECT lancelsm_checkpoint('emu', '');
SELECT * FROM lancelsm_stats('emu', '');
SELECT * FROM lancelsm_generations('emu', '');
SELECT * FROM lancelsm_memtables('emu', '');
SELECT lancelsm_flush('emu', repeat('x', 1025));
SELECT * FROM lancelsm_stats('emu', repeat('é', 513));
-- 1024 bytes is accepted (and unknown here)
DO $$
BEGIN
  PERFORM lancelsm_flush('emu', repeat('x', 1024));
EXCEPTION WHEN fdw_table_not_found THEN
  RAISE NOTICE 'HV00R, as expected';
END $$;
SELECT e->>'route' AS route, length(e->>'table') AS name_length, e->>'status' AS status
  FROM emu_log() e ORDER BY (e->>'seq')::int;
-- NULL arguments: STRICT, nothing sent
SELECT lancelsm_flush(NULL, 'fx') IS NULL AS is_null;
SELECT lancelsm_compact('emu', NULL) IS NULL AS is_null;
SELECT lancelsm_checkpoint(NULL, NULL) IS NULL AS is_null;
SELECT count(*) FROM lancelsm_stats('emu', NULL);
SELECT count(*) FROM lancelsm_stats('emu', 'fx', NULL);
SELECT count(*) FROM lancelsm_generations(NULL, 'fx');
SELECT count(*) FROM lancelsm_generations('emu', 'fx', NULL);
SELECT count(*) FROM lancelsm_memtables('emu', NULL);
SELECT emu_counts('fx');
-- checkpoint through the public function: drains fx's L0, then stats
SELECT emu('POST', '/_emulator/tables/fx/bucket', '{"bucket": "b1", "status": "Active"}');
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_checkpoint('emu', 'fx');
SELECT emu_counts('fx') - 'compact_lsm' - 'get_lsm_stats' - 'total' AS flushes;
-- checkpoint polls never ask for generation rows
SELECT DISTINCT e->>'body' AS stats_body FROM emu_log() e
 WHERE e->>'route' = 'get_lsm_stats';
SELECT shard_id, l0_generations, compacting FROM lancelsm_stats('emu', 'fx')
 ORDER BY shard_id COLLATE "C";
