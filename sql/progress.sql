-- progress: lancelsm_progress, lancelsm_checkpoint_history,
-- lancelsm_run_history, lancelsm_table_counters and lancelsm_last_stats
-- without
-- shared_preload_libraries (this suite's cluster has none): every reader
-- raises 55000 with a hint saying what to change, checkpoints still work,
-- and the settings are fixed at server start.  With the preload, see
-- t/record_progress.pl.
SELECT emu_reset();
SELECT emu('POST', '/_emulator/tables/events/generations', '{"count": 1}');
SELECT lancelsm_checkpoint('emu', 'events');
SELECT (emu_counts('events') ->> 'flush_lsm')::int AS flushes,
       (emu_counts('events') ->> 'compact_lsm')::int >= 1 AS compacted,
       (SELECT sum(l0_generations) FROM lancelsm_stats('emu', 'events')) AS l0;
\set VERBOSITY default
SELECT * FROM lancelsm_progress;
SELECT * FROM lancelsm_checkpoint_history;
SELECT * FROM lancelsm_run_history;
SELECT * FROM lancelsm_table_counters;
SELECT lancelsm_table_counters_reset();
SELECT * FROM lancelsm_last_stats;
SELECT count(*) FROM lancelsm_progress();
-- lancelsm_info works without the preload: versions, preloaded false,
-- no counts (lancelsm_progress_skipped() is gone in 1.4)
SELECT * FROM lancelsm_info;
SELECT count(*) FROM pg_proc WHERE proname = 'lancelsm_progress_skipped';
SELECT lancelsm_checkpoint_history_reset();
\set VERBOSITY terse
-- the pool sizes are read at server start only
SHOW lancelsm.max_progress_entries;
SHOW lancelsm.max_history_entries;
SHOW lancelsm.max_run_history;
SHOW lancelsm.max_table_counters;
SET lancelsm.max_progress_entries = 10;
-- readers are for pg_read_all_stats, the reset for superusers
SELECT p.proname,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_exec,
       has_function_privilege('pg_read_all_stats', p.oid, 'EXECUTE') AS stats_exec,
       p.provolatile, p.proparallel
FROM pg_proc p
WHERE p.proname IN ('lancelsm_progress', 'lancelsm_info',
                    'lancelsm_checkpoint_history',
                    'lancelsm_checkpoint_history_reset',
                    'lancelsm_run_history', 'lancelsm_table_counters',
                    'lancelsm_table_counters_reset', 'lancelsm_last_stats')
ORDER BY p.proname COLLATE "C";
SELECT c.relname,
       has_table_privilege('pg_read_all_stats', c.oid, 'SELECT') AS stats_select,
       has_table_privilege('public', c.oid, 'SELECT') AS public_select
FROM pg_class c
WHERE c.relname IN ('lancelsm_progress', 'lancelsm_checkpoint_history',
                    'lancelsm_info', 'lancelsm_run_history',
                    'lancelsm_table_counters', 'lancelsm_last_stats')
ORDER BY c.relname COLLATE "C";
-- the views' columns, in order
SELECT attrelid::regclass AS view, string_agg(attname, ', ' ORDER BY attnum) AS columns
FROM pg_attribute
WHERE attrelid IN ('lancelsm_progress'::regclass,
                   'lancelsm_checkpoint_history'::regclass,
                   'lancelsm_info'::regclass,
                   'lancelsm_run_history'::regclass,
                   'lancelsm_table_counters'::regclass,
                   'lancelsm_last_stats'::regclass) AND attnum > 0
GROUP BY attrelid
ORDER BY attrelid::regclass::text COLLATE "C";

-- a function declared with a shape this library does not know: the hint
-- says which side is behind, from pg_extension's version against the
-- library's (the catalog rows changed in a transaction rolled back)
CREATE FUNCTION pg_temp.info_narrow() RETURNS TABLE (a text, b text)
  AS 'lancelsm', 'lancelsm_info' LANGUAGE C;
CREATE FUNCTION pg_temp.info_wide() RETURNS TABLE (a text, b text, c bool,
  d int, e int, f int, g int, h int, i int, j int8, k int8, l int8,
  m int, n int, o int8, p int, q int, r int8, s bool, t int, u int, v int8,
  w int8)
  AS 'lancelsm', 'lancelsm_info' LANGUAGE C;
\set VERBOSITY default
BEGIN;
UPDATE pg_extension SET extversion = '1.4' WHERE extname = 'lancelsm';
SELECT * FROM pg_temp.info_narrow();
ROLLBACK;
BEGIN;
UPDATE pg_extension SET extversion = '1.10' WHERE extname = 'lancelsm';
SELECT * FROM pg_temp.info_narrow();
ROLLBACK;
-- same versions: the shape decides
SELECT * FROM pg_temp.info_wide();
\set VERBOSITY terse
