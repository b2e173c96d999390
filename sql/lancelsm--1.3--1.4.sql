/* lancelsm--1.3--1.4.sql: the 1.4 objects (see CHANGELOG.md). */

\echo Use "ALTER EXTENSION lancelsm UPDATE TO '1.4'" to load this file. \quit

-- BEGIN comments
-- Help in psql (\df+, \dv+, \d+ lancelsm_table, \dew+): what each object
-- does, its units and what one call costs.  sql/comments.sql checks that
-- every object of the extension and every column of lancelsm_table has
-- one, and that no two are alike.  Functions whose name is unique are
-- named without their arguments, so that a later signature keeps its help.
COMMENT ON FOREIGN DATA WRAPPER lancelsm IS
  'LanceDB LSM write path: a server per LanceDB database (database, region or host_override), the API key in a user mapping; no foreign tables, and creating a server contacts nothing';
COMMENT ON FUNCTION @extschema@.lancelsm_fdw_validator IS
  'Validates the options of lancelsm servers and user mappings at CREATE and ALTER (names, URLs, timeouts in seconds, headers) and suggests the closest name for a misspelt one; no network request';

COMMENT ON FUNCTION @extschema@.lancelsm_flush IS
  'Seals the active memtable of every bucket of one LanceDB table into a new L0 generation; one flush request, idempotent, returns once sealed';
COMMENT ON FUNCTION @extschema@.lancelsm_compact IS
  'Starts one background compaction pass per bucket the server can latch and returns at once, without waiting for L0 to drain; one compact request';
COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint(pg_catalog.text, pg_catalog.text) IS
  'Flushes one table, then compacts and polls until no L0 generation at or below the flush''s watermark remains; a flush, a compact per pass and a stats request per poll (50 ms to 5 s apart), bounded by statement_timeout';
COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint(pg_catalog.text, pg_catalog.text[]) IS
  'Checkpoints every table of the array concurrently from this backend under the statement''s one deadline; one row per distinct table (ok, sqlstate, message, elapsed, passes, polls); at most 32 connections per server and user mapping';
COMMENT ON FUNCTION @extschema@.lancelsm_stats IS
  'One row per bucket of one table: WAL positions and lag (entries), L0 generations and bytes, memtable rows and bytes; one stats request (include_generation_rows makes the server open every L0 dataset to count rows)';
COMMENT ON FUNCTION @extschema@.lancelsm_generations IS
  'One row per L0 generation of one table (shard_id, generation, bytes, rows; rows NULL unless include_generation_rows); one stats request';
COMMENT ON FUNCTION @extschema@.lancelsm_memtables IS
  'One row per memtable of one table, oldest first and the active one last (rows, bytes, batches, the indexes it maintains); one stats request';

COMMENT ON FUNCTION @extschema@.lancelsm_set_write_spec IS
  'Turns a table''s LSM write path on: installs its write spec (bucket, identity or unsharded; maintained indexes, NULL for every one; writer defaults as a JSON object of strings); one request on a fresh connection; EXECUTE revoked from PUBLIC';
COMMENT ON FUNCTION @extschema@.lancelsm_unset_write_spec IS
  'Turns a table''s LSM write path off: removes its write spec (55000 when none is set); one request on a fresh connection, not retried after a 5xx; EXECUTE revoked from PUBLIC';
COMMENT ON FUNCTION @extschema@.lancelsm_write_spec IS
  'Reads one table''s LSM write spec: one row (sharding, column, number of buckets, the indexes the server resolved, writer defaults), or none when the path is off; one request';

COMMENT ON TABLE @extschema@.lancelsm_table IS
  'The declared LanceDB tables, one row per (server, table_name), with their due thresholds; read by the stats views and the due job, changed by lancelsm_add_table, lancelsm_alter_table and lancelsm_remove_table, and dumped by pg_dump';
COMMENT ON COLUMN @extschema@.lancelsm_table.server IS
  'Name of the lancelsm foreign server that reaches the table';
COMMENT ON COLUMN @extschema@.lancelsm_table.table_name IS
  'Full LanceDB table identifier, namespace levels joined by the server''s id_delimiter (default $)';
COMMENT ON COLUMN @extschema@.lancelsm_table.added_at IS
  'When the table was declared; max_checkpoint_age counts from it until the first successful checkpoint';
COMMENT ON COLUMN @extschema@.lancelsm_table.max_l0_generations IS
  'Compact when the L0 generations summed over the buckets exceed this count; NULL: not used';
COMMENT ON COLUMN @extschema@.lancelsm_table.max_l0_bytes IS
  'Compact when the L0 bytes summed over the buckets exceed this many bytes; NULL: not used';
COMMENT ON COLUMN @extschema@.lancelsm_table.max_wal_lag IS
  'Flush when the WAL lag of any one bucket exceeds this many WAL entries; NULL: not used';
COMMENT ON COLUMN @extschema@.lancelsm_table.max_memtable_rows IS
  'Flush when the memtable rows summed over the buckets exceed this count; NULL: not used';
COMMENT ON COLUMN @extschema@.lancelsm_table.max_checkpoint_age IS
  'Checkpoint when last_checkpoint_at (else added_at) is older than this interval; NULL: not used';
COMMENT ON COLUMN @extschema@.lancelsm_table.last_checkpoint_at IS
  'Start of the table''s last successful checkpoint by lancelsm_checkpoint_due() or lancelsm_checkpoint_all(); never moves back; NULL before the first';

COMMENT ON FUNCTION @extschema@.lancelsm_add_table IS
  'Declares a LanceDB table in lancelsm_table, with optional due thresholds (NULL: not used); checks the server and the name, contacts no server; EXECUTE revoked from PUBLIC';
COMMENT ON FUNCTION @extschema@.lancelsm_alter_table IS
  'Changes the due thresholds (max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows, max_checkpoint_age) of a declared table, 42704 for one not declared; one row updated, contacts no server; EXECUTE revoked from PUBLIC';
COMMENT ON FUNCTION @extschema@.lancelsm_remove_table IS
  'Forgets a declared table: deletes its row of lancelsm_table and returns whether there was one; the LanceDB table is untouched and no server is contacted';

COMMENT ON FUNCTION @extschema@.lancelsm_declared_bucket_stats IS
  'The rows of the view lancelsm_bucket_stats: the stats of every declared table, read concurrently, one row per bucket; one stats request per declared table';
COMMENT ON FUNCTION @extschema@.lancelsm_declared_table_stats IS
  'The rows of the view lancelsm_table_stats: one row per declared table with bucket totals, thresholds and the due verdict, or the error that kept its stats from being read; one stats request per declared table';
COMMENT ON VIEW @extschema@.lancelsm_bucket_stats IS
  'Per bucket of every declared table: lancelsm_stats'' columns after server and table_name (l0_rows NULL); a table whose stats fail has no rows here; each query sends one stats request per declared table';
COMMENT ON VIEW @extschema@.lancelsm_table_stats IS
  'Per declared table: L0 and memtable totals, WAL lag, its thresholds, last_checkpoint_at, and whether lancelsm_checkpoint_due() would act now (due, due_reason, due_action), or error_sqlstate and error; each query sends one stats request per declared table';

COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint_all IS
  'Checkpoints every declared table concurrently until drained, one row per table (a failure is a row with ok false, never an error); records last_checkpoint_at; with share_checkpoints, skips a table another session is checkpointing';
COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint_due IS
  'The due job: reads every declared table''s stats concurrently, then flushes, compacts or checkpoints only the tables past a threshold, without waiting for a drain; one stats request per table plus one action per due table; records last_checkpoint_at';

COMMENT ON FUNCTION @extschema@.lancelsm_progress() IS
  'The rows of the view lancelsm_progress, read from shared memory; no network request; 55000 unless lancelsm is in shared_preload_libraries; EXECUTE granted to pg_read_all_stats';
COMMENT ON VIEW @extschema@.lancelsm_progress IS
  'One row per table being checkpointed now in any database of the cluster: phase, the bucket waited on, target and outstanding L0 generations, passes, polls, retries, reissues; reads shared memory only; needs lancelsm preloaded';
COMMENT ON FUNCTION @extschema@.lancelsm_progress_skipped IS
  'Counts the checkpoints since server start that ran without a row in lancelsm_progress because all lancelsm.max_progress_entries entries were taken; reads shared memory only';
COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint_history() IS
  'The rows of the view lancelsm_checkpoint_history, read from shared memory; no network request; 55000 unless lancelsm is in shared_preload_libraries; EXECUTE granted to pg_read_all_stats';
COMMENT ON VIEW @extschema@.lancelsm_checkpoint_history IS
  'The last checkpoint outcome of each table, cluster-wide (finished_at, ok, sqlstate, message, elapsed, passes), at most lancelsm.max_history_entries tables, kept across clean restarts; reads shared memory only; needs lancelsm preloaded';
COMMENT ON FUNCTION @extschema@.lancelsm_checkpoint_history_reset IS
  'Empties the checkpoint history of every database of the cluster; writes shared memory only, no network request; superusers only unless granted';
-- END comments
