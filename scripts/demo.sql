-- scripts/demo.sql: run by scripts/demo.sh in a throwaway cluster.
\getenv port LANCELSM_EMULATOR_PORT
\getenv key LANCELSM_EMULATOR_KEY
\set url 'http://127.0.0.1:' :port
\pset footer off
CREATE EXTENSION lancelsm;
CREATE SERVER lance FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'url');
CREATE USER MAPPING FOR CURRENT_USER SERVER lance OPTIONS (api_key :'key');

\echo
\echo '== Before: "events" has no LSM write path: no write spec, no stats'
SELECT count(*) AS write_specs FROM lancelsm_write_spec('lance', 'events');
SELECT count(*) AS buckets FROM lancelsm_stats('lance', 'events');

\echo '== Turn it on: 4 buckets on the primary key, every index maintained'
SELECT lancelsm_set_write_spec('lance', 'events', 'bucket', 'id', 4,
                               writer_config_defaults => '{"max_memtable_rows": "200"}');
SELECT * FROM lancelsm_write_spec('lance', 'events');

\echo '== Writers fill the memtables; sealed ones wait in L0 (3 seconds later)'
SELECT pg_sleep(3);
SELECT shard_id, l0_generations, l0_bytes, oldest_l0_generation AS oldest,
       newest_l0_generation AS newest, memtable_rows, wal_lag, compacting
  FROM lancelsm_stats('lance', 'events') ORDER BY shard_id COLLATE "C";

\echo '== Checkpoint: flush, set the watermark, compact until it is drained (300 ms per pass)'
\timing on
SELECT lancelsm_checkpoint('lance', 'events');
\timing off

\echo '== After: the L0 at or below the watermark is gone; writers keep filling the memtables'
SELECT shard_id, l0_generations, l0_bytes, manifest_version, memtable_rows,
       current_generation, compacting
  FROM lancelsm_stats('lance', 'events') ORDER BY shard_id COLLATE "C";

\echo '== The memtables and the indexes they maintain'
SELECT * FROM lancelsm_memtables('lance', 'events') ORDER BY shard_id COLLATE "C", generation;
