-- due: per-table thresholds, lancelsm_alter_table, the thresholds in
-- lancelsm_table_stats and lancelsm_checkpoint_due(): every threshold's
-- action, several at once, reasons, NULL thresholds, error rows, the
-- recorded last checkpoint, permissions, slices
SELECT port AS emu_port FROM emu_conf \gset
\set emu_url 'http://127.0.0.1:' :emu_port
SELECT emu_reset();
SET statement_timeout = '20s';
-- dt_try(sql), from declared.sql: 'ok', or the SQLSTATE and message
-- du_calls(): the route calls of every du_ table since the last log reset
CREATE FUNCTION du_calls() RETURNS TABLE (tbl text, flush text, compact text, stats text)
LANGUAGE sql AS $$
  SELECT t, c->>'flush_lsm', c->>'compact_lsm', c->>'get_lsm_stats'
    FROM unnest(ARRAY['du_age', 'du_both', 'du_bytes', 'du_gone', 'du_l0',
                      'du_latched', 'du_null', 'du_quiet', 'du_rows', 'du_wal']) t,
         emu_counts(t) c ORDER BY t COLLATE "C" $$;

-- declaring with thresholds; two arguments still work; NULL server or
-- name does nothing; a duplicate keeps its thresholds
SELECT lancelsm_add_table('emu', 'du_l0', max_l0_generations => 2, validate => false);
SELECT lancelsm_add_table('emu', 'du_bytes', max_l0_bytes => 1000, validate => false);
SELECT lancelsm_add_table('emu', 'du_wal', max_wal_lag => 1, validate => false);
SELECT lancelsm_add_table('emu', 'du_rows', max_memtable_rows => 4, validate => false);
SELECT lancelsm_add_table('emu', 'du_age', max_checkpoint_age => '1 hour', validate => false);
SELECT lancelsm_add_table('emu', 'du_both', 1, NULL, 0, validate => false);
SELECT lancelsm_add_table('emu', 'du_quiet', 10, 100000, 10, 100, '1 day', validate => false);
SELECT lancelsm_add_table('emu', 'du_null', validate => false);
SELECT lancelsm_add_table('emu', 'du_gone', max_memtable_rows => 0, validate => false);
SELECT lancelsm_add_table('emu', 'du_latched', max_l0_generations => 0, validate => false);
-- declaring a table again is an error (42710) and changes nothing
SELECT dt_try($$SELECT lancelsm_add_table('emu', 'du_l0', max_l0_generations => 7, validate => false)$$);
SELECT lancelsm_add_table(NULL, 'du_x', 1, validate => false) IS NULL AS null_server,
       lancelsm_add_table('emu', NULL, 1, validate => false) IS NULL AS null_name;
SELECT server, table_name, max_l0_generations, max_l0_bytes, max_wal_lag,
       max_memtable_rows, max_checkpoint_age, last_checkpoint_at
  FROM lancelsm_table ORDER BY table_name COLLATE "C";

-- thresholds the CHECK constraints refuse; nothing stored
SELECT dt_try($$SELECT lancelsm_add_table('emu', 'du_x', max_l0_generations => -1, validate => false)$$);
SELECT dt_try($$SELECT lancelsm_add_table('emu', 'du_x', max_l0_bytes => -1, validate => false)$$);
SELECT dt_try($$SELECT lancelsm_add_table('emu', 'du_x', max_wal_lag => -1, validate => false)$$);
SELECT dt_try($$SELECT lancelsm_add_table('emu', 'du_x', max_memtable_rows => -1, validate => false)$$);
SELECT dt_try($$SELECT lancelsm_add_table('emu', 'du_x', max_checkpoint_age => '0', validate => false)$$);
SELECT dt_try($$SELECT lancelsm_add_table('emu', 'du_x', max_checkpoint_age => '-1 minute', validate => false)$$);
SELECT count(*) FROM lancelsm_table WHERE table_name = 'du_x';

-- alter: sets exactly the given thresholds (an omitted one is NULL)
SELECT lancelsm_alter_table('emu', 'du_null', 5, 6, 7, 8, '9 minutes');
SELECT max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows,
       max_checkpoint_age FROM lancelsm_table WHERE table_name = 'du_null';
-- a threshold given is set, one omitted or NULL keeps its value (as
-- cron.alter_job), one named in clear is set to NULL
SELECT lancelsm_alter_table('emu', 'du_null', max_wal_lag => 3);
SELECT max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows,
       max_checkpoint_age FROM lancelsm_table WHERE table_name = 'du_null';
SELECT lancelsm_alter_table('emu', 'du_null', max_l0_bytes => NULL,
                            clear => '{max_l0_generations, max_checkpoint_age}');
SELECT max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows,
       max_checkpoint_age FROM lancelsm_table WHERE table_name = 'du_null';
SELECT lancelsm_alter_table('emu', 'du_null');
SELECT max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows,
       max_checkpoint_age FROM lancelsm_table WHERE table_name = 'du_null';
SELECT dt_try($$SELECT lancelsm_alter_table('emu', 'du_null', clear => '{max_wal_lag, wal_lag}')$$);
SELECT dt_try($$SELECT lancelsm_alter_table('emu', 'du_null', max_wal_lag => 4, clear => '{max_wal_lag}')$$);
SELECT dt_try($$SELECT lancelsm_alter_table('emu', 'du_null', clear => '{NULL}')$$);
SELECT lancelsm_alter_table('emu', 'du_null',
                            clear => '{max_l0_bytes, max_wal_lag, max_memtable_rows}');
SELECT max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows,
       max_checkpoint_age FROM lancelsm_table WHERE table_name = 'du_null';
SELECT dt_try($$SELECT lancelsm_alter_table('emu', 'du_x', 1)$$);
SELECT dt_try($$SELECT lancelsm_alter_table('emu', 'du_null', max_wal_lag => -5)$$);
SELECT lancelsm_alter_table(NULL, 'du_null', 1) IS NULL AS null_server;

-- the emulator's tables (1 bucket each unless said): du_l0 3 L0
-- generations of 10 rows; du_bytes 2 of 10 rows (1280 bytes); du_wal 2
-- writes (WAL lag 2); du_rows 5 unflushed rows; du_age 1 generation and
-- its last checkpoint 2 hours ago; du_both 2 buckets, 2 generations in b0
-- and 1 write in b1; du_quiet below every threshold; du_null 4
-- generations and no thresholds; du_latched 1 generation, latch pinned;
-- du_gone does not exist
SELECT emu('POST', '/_emulator/tables', jsonb_build_object('name', t, 'buckets', b))
  FROM (VALUES ('du_l0', 1), ('du_bytes', 1), ('du_wal', 1), ('du_rows', 1),
               ('du_age', 1), ('du_both', 2), ('du_quiet', 1), ('du_null', 1),
               ('du_latched', 1)) v(t, b);
SELECT emu('POST', '/_emulator/tables/du_l0/generations', '{"count": 3, "rows": 10}');
SELECT emu('POST', '/_emulator/tables/du_bytes/generations', '{"count": 2, "rows": 10}');
SELECT emu('POST', '/_emulator/tables/du_wal/write', '{"rows": 1, "bucket": "b0"}');
SELECT emu('POST', '/_emulator/tables/du_wal/write', '{"rows": 1, "bucket": "b0"}');
SELECT emu('POST', '/_emulator/tables/du_rows/write', '{"rows": 5, "bucket": "b0"}');
SELECT emu('POST', '/_emulator/tables/du_age/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/tables/du_both/generations', '{"count": 2, "rows": 10, "buckets": ["b0"]}');
SELECT emu('POST', '/_emulator/tables/du_both/write', '{"rows": 1, "bucket": "b1"}');
SELECT emu('POST', '/_emulator/tables/du_quiet/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/tables/du_quiet/write', '{"rows": 3, "bucket": "b0"}');
SELECT emu('POST', '/_emulator/tables/du_null/generations', '{"count": 4, "rows": 10}');
SELECT emu('POST', '/_emulator/tables/du_latched/generations', '{"count": 1, "rows": 10}');
SELECT emu('POST', '/_emulator/tables/du_latched/latch', '{"bucket": "b0", "held": true}');
UPDATE lancelsm_table SET last_checkpoint_at = now() - interval '2 hours'
 WHERE table_name = 'du_age';
-- du_age: the age is measured when the function runs, a few statements
-- later; seconds a loaded machine adds to the 2 hours are left out
CREATE FUNCTION du_age(reason text) RETURNS text LANGUAGE sql AS
$$SELECT regexp_replace(reason, '(checkpoint_age @ 2 hours)( [0-9]{1,2} secs?)? ', '\1 ')$$;

-- the view shows the thresholds and what is due, one stats read each
SELECT emu('POST', '/_emulator/log/reset');
SELECT table_name, l0_generations, l0_bytes, wal_lag_max, memtable_rows,
       max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows,
       max_checkpoint_age, due, du_age(due_reason) AS due_reason, due_action,
       error_sqlstate
  FROM lancelsm_table_stats ORDER BY table_name COLLATE "C";
SELECT * FROM du_calls();

-- act: each due table gets exactly the action its thresholds map to, a
-- quiet table (or one without thresholds) only its stats read; du_latched
-- is due for compaction but its only bucket is compacting: the trigger
-- answers 429, which ends the action as a success without a pass
SELECT emu('POST', '/_emulator/log/reset');
SELECT server, table_name, ok, sqlstate, split_part(message, ': ', 1) AS message,
       elapsed IS NOT NULL AS acted, passes, polls, due, du_age(reason) AS reason,
       action
  FROM lancelsm_checkpoint_due();
SELECT * FROM du_calls();
-- the checkpoint actions (du_age, du_both) are recorded, as the time
-- they started; flush and compact actions are not checkpoints
SELECT table_name, last_checkpoint_at > now() - interval '1 minute' AS recent
  FROM lancelsm_table WHERE last_checkpoint_at IS NOT NULL
 ORDER BY table_name COLLATE "C";

-- durable outcomes: each action of the run is its table's outcome, by
-- checkpoint_due, with its times; a table that cannot be read (du_gone)
-- records its failed stats read; quiet tables (du_quiet, du_null) record
-- nothing
SELECT table_name, last_action, last_source, last_ok, last_sqlstate,
       split_part(last_message, ': ', 1) AS last_message,
       last_started_at <= last_finished_at AS ordered,
       last_finished_at BETWEEN now() - interval '1 minute' AND now() AS recent
  FROM lancelsm_status ORDER BY table_name COLLATE "C";
-- a checkpoint's outcome starts when last_checkpoint_at says
SELECT table_name, last_started_at = last_checkpoint_at AS same_start
  FROM lancelsm_table WHERE last_action = 'checkpoint'
 ORDER BY table_name COLLATE "C";
-- lancelsm_status: one row per declared table, without requests; not
-- preloaded here, so no phase (and no error)
SELECT emu('POST', '/_emulator/log/reset');
SELECT server, table_name, max_l0_generations, max_l0_bytes, max_wal_lag,
       max_memtable_rows, max_checkpoint_age, last_action, last_source,
       last_ok, last_sqlstate, last_finished_at IS NOT NULL AS finished,
       running_phase, running_pid, running_since
  FROM lancelsm_status ORDER BY server COLLATE "C", table_name COLLATE "C";
SELECT * FROM du_calls() WHERE flush <> '0' OR compact <> '0' OR stats <> '0';
SELECT count(*) AS status_rows, (SELECT count(*) FROM lancelsm_table) AS declared
  FROM lancelsm_status;

-- the tables whose compaction now runs in the background leave, so that
-- what follows is exact
SELECT count(lancelsm_remove_table('emu', t))
  FROM unnest(ARRAY['du_l0', 'du_bytes', 'du_both', 'du_rows', 'du_quiet', 'du_null']) t;

-- a checkpoint action on a table whose every bucket is compacting: flush
-- and the watermark read, no compact call
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_alter_table('emu', 'du_latched', max_memtable_rows => 0, max_l0_generations => 0);
SELECT emu('POST', '/_emulator/tables/du_latched/write', '{"rows": 2, "bucket": "b0"}');
SELECT table_name, ok, passes, polls, reason, action
  FROM lancelsm_checkpoint_due() WHERE due;
SELECT * FROM du_calls() WHERE tbl = 'du_latched';
SELECT emu('POST', '/_emulator/tables/du_latched/latch', '{"bucket": "b0", "held": false}');
SELECT lancelsm_remove_table('emu', 'du_latched');

-- a flush that fails is the action's failure row; due and reason stay
SELECT emu('POST', '/_emulator/log/reset');
SELECT emu_fault('du_wal', 'flush_lsm', 500);
SELECT emu('POST', '/_emulator/tables/du_wal/write', '{"rows": 1, "bucket": "b0"}');
SELECT emu('POST', '/_emulator/tables/du_wal/write', '{"rows": 1, "bucket": "b0"}');
SELECT table_name, ok, sqlstate, split_part(message, ': ', 1) AS message,
       passes, polls, reason, action
  FROM lancelsm_checkpoint_due() WHERE table_name = 'du_wal';
-- the failed flush is du_wal's outcome, with its SQLSTATE and message
SELECT table_name, last_action, last_source, last_ok, last_sqlstate,
       split_part(last_message, ': ', 1) AS last_message,
       last_message LIKE '%HTTP status 500%' AS detail
  FROM lancelsm_status WHERE table_name = 'du_wal';

-- the recorded time: not written by a read-only transaction (a WARNING,
-- the rows all the same), lost when the transaction rolls back, written
-- by lancelsm_checkpoint_all() too
SELECT lancelsm_alter_table('emu', 'du_age', max_checkpoint_age => '1 hour');
UPDATE lancelsm_table SET last_checkpoint_at = '2026-01-01 00:00:00+00'
 WHERE table_name = 'du_age';
\set VERBOSITY terse
BEGIN READ ONLY;
SELECT table_name, ok, action FROM lancelsm_checkpoint_due() WHERE due;
COMMIT;
\set VERBOSITY default
SELECT last_checkpoint_at = '2026-01-01 00:00:00+00' AS unchanged
  FROM lancelsm_table WHERE table_name = 'du_age';
BEGIN;
SELECT count(*) FROM lancelsm_checkpoint_due() WHERE action = 'checkpoint' AND ok;
ROLLBACK;
SELECT last_checkpoint_at = '2026-01-01 00:00:00+00' AS unchanged
  FROM lancelsm_table WHERE table_name = 'du_age';
SELECT table_name, ok FROM lancelsm_checkpoint_all() WHERE table_name = 'du_age';
SELECT last_checkpoint_at > now() - interval '1 minute' AS recorded,
       last_action, last_source, last_ok, last_checkpoint_at = last_started_at AS same_start
  FROM lancelsm_table WHERE table_name = 'du_age';
-- the age of a table never checkpointed runs from added_at
UPDATE lancelsm_table SET last_checkpoint_at = NULL, added_at = now() - interval '3 hours'
 WHERE table_name = 'du_age';
SELECT table_name, due_reason, due_action FROM lancelsm_table_stats
 WHERE table_name = 'du_age';

-- errors are rows: a table that does not exist (above), a server without
-- a user mapping, a name the functions refuse
CREATE SERVER du_nomap FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'emu_url');
SELECT lancelsm_add_table('du_nomap', 'events', max_wal_lag => 0, validate => false);
INSERT INTO lancelsm_table (server, table_name, max_wal_lag) VALUES ('emu', '', 0);
SELECT server, table_name, ok, sqlstate, due, reason, action, elapsed
  FROM lancelsm_checkpoint_due() WHERE NOT ok;

-- permissions: reading and acting are public (the server is the gate),
-- changing thresholds is not; a role that may not record (no UPDATE on
-- lancelsm_table.last_checkpoint_at) gets an ERROR from the due job
-- before any request, and reads no server message
CREATE ROLE regress_du_reader;
GRANT USAGE ON FOREIGN SERVER emu TO regress_du_reader;
UPDATE lancelsm_table SET last_checkpoint_at = NULL WHERE table_name = 'du_age';
SELECT f, has_function_privilege('regress_du_reader', f, 'EXECUTE') AS execute
  FROM unnest(ARRAY['lancelsm_add_table(text, text, bigint, bigint, bigint, bigint, interval, boolean, interval)',
                    'lancelsm_alter_table(text, text, bigint, bigint, bigint, bigint, interval, text[], interval)',
                    'lancelsm_checkpoint_due(integer, integer, boolean)',
                    'lancelsm_declared_table_stats()']) f;
SET ROLE regress_du_reader;
SELECT dt_try($$SELECT lancelsm_alter_table('emu', 'du_l0', 1)$$);
SELECT dt_try($$UPDATE lancelsm_table SET max_l0_generations = 1$$);
SELECT table_name, ok, action FROM lancelsm_checkpoint_due()
 WHERE action = 'checkpoint';
SELECT dt_try($$SELECT * FROM lancelsm_checkpoint_all()$$);
SELECT dt_try($$SELECT * FROM lancelsm_table_message$$);
SELECT count(*) AS tables, count(last_message) AS messages_shown
  FROM lancelsm_status;
RESET ROLE;
SELECT count(last_message) > 0 AS messages_shown FROM lancelsm_status;
-- with UPDATE on the one column, a delegate records: the outcome columns
-- and the message too, written as the owner of lancelsm_table
GRANT UPDATE (last_checkpoint_at) ON lancelsm_table TO regress_du_reader;
SELECT last_checkpoint_at IS NULL AS not_recorded
  FROM lancelsm_table WHERE table_name = 'du_age';
SET ROLE regress_du_reader;
SELECT table_name, ok, action FROM lancelsm_checkpoint_due()
 WHERE action = 'checkpoint';
RESET ROLE;
SELECT last_checkpoint_at IS NOT NULL AS recorded, last_action, last_source,
       last_ok, last_finished_at > now() - interval '1 minute' AS recent
  FROM lancelsm_table WHERE table_name = 'du_age';

-- outcomes over time: du_born is declared before it exists (its failed
-- stats read is recorded), then comes into being: its good stats read
-- replaces the failure (a recovered table must not read as failing); a
-- quiet table whose last outcome is ok (du_age) records nothing
SELECT lancelsm_add_table('emu', 'du_born', max_memtable_rows => 0, validate => false);
SELECT table_name, ok, sqlstate, action FROM lancelsm_checkpoint_due()
 WHERE table_name = 'du_born';
SELECT table_name, last_action, last_source, last_ok, last_sqlstate,
       split_part(last_message, ': ', 1) AS last_message
  FROM lancelsm_status WHERE table_name = 'du_born';
SELECT emu('POST', '/_emulator/tables', '{"name": "du_born", "buckets": 1}');
UPDATE lancelsm_table SET last_finished_at = '2026-01-01 00:00:00+00'
 WHERE table_name = 'du_age';
SELECT table_name, ok, action FROM lancelsm_checkpoint_due()
 WHERE table_name IN ('du_age', 'du_born');
SELECT table_name, last_action, last_source, last_ok, last_sqlstate,
       last_message, last_finished_at = '2026-01-01 00:00:00+00' AS unchanged
  FROM lancelsm_status WHERE table_name IN ('du_age', 'du_born')
 ORDER BY table_name COLLATE "C";
-- a direct call on a declared table records its outcome as direct (a
-- success; a failure raises, and the rollback takes any record back); a
-- table not declared records nothing, and no error
SELECT lancelsm_flush('emu', 'du_born');
SELECT table_name, last_action, last_source, last_ok, last_sqlstate,
       last_started_at <= last_finished_at AS ordered
  FROM lancelsm_table WHERE table_name = 'du_born';
SELECT emu_fault('du_born', 'compact_lsm', 500);
SELECT dt_try($$SELECT lancelsm_compact('emu', 'du_born')$$);
SELECT table_name, last_action, last_source, last_ok
  FROM lancelsm_table WHERE table_name = 'du_born';
SELECT lancelsm_checkpoint('emu', 'du_born');
SELECT table_name, last_action, last_source, last_ok,
       last_checkpoint_at = last_started_at AS checkpointed
  FROM lancelsm_table WHERE table_name = 'du_born';
SELECT emu_fault('du_born', 'flush_lsm', 500);
SELECT table_name, ok, sqlstate
  FROM lancelsm_checkpoint('emu', ARRAY['du_born', 'du_nothere']);
SELECT table_name, last_action, last_source, last_ok, last_sqlstate,
       split_part(last_message, ': ', 1) AS last_message
  FROM lancelsm_status WHERE table_name = 'du_born';
SELECT count(*) AS undeclared FROM lancelsm_table WHERE table_name = 'du_nothere';
-- in a read-only transaction a direct call records nothing, silently
BEGIN READ ONLY;
SELECT lancelsm_flush('emu', 'du_born');
COMMIT;
SELECT table_name, last_action, last_ok FROM lancelsm_table
 WHERE table_name = 'du_born';
SELECT lancelsm_remove_table('emu', 'du_born');

-- clean up
SELECT count(lancelsm_remove_table(server, table_name)) FROM lancelsm_table;

-- slices: 12 quiet tables of emu (1 L0 generation each, threshold 5) and
-- 3 of du_nomap (rows failing 42704 without a user mapping: a table of
-- any server belongs to a slice)
SELECT emu('POST', '/_emulator/tables', jsonb_build_object('name', 'sl_' || i, 'buckets', 1))
  FROM generate_series(1, 12) i;
SELECT emu('POST', '/_emulator/tables/sl_' || i || '/generations', '{"count": 1, "rows": 10}')
  FROM generate_series(1, 12) i;
SELECT count(lancelsm_add_table('emu', 'sl_' || i, max_l0_generations => 5, validate => false))
  FROM generate_series(1, 12) i;
SELECT count(lancelsm_add_table('du_nomap', 'sl_' || i, max_l0_generations => 5, validate => false))
  FROM generate_series(1, 3) i;
-- for n = 1..5, the n slices together return every declared table exactly
-- once; the defaults are slice 0 of 1, the whole set
SELECT n, count(*) AS rows, count(DISTINCT (c.server, c.table_name)) AS tables,
       count(*) FILTER (WHERE c.ok) AS ok
  FROM generate_series(1, 5) n, generate_series(0, n - 1) i,
       LATERAL lancelsm_checkpoint_due(i, n) c
 GROUP BY n ORDER BY n;
SELECT count(*) AS rows FROM lancelsm_checkpoint_due();
SELECT count(*) AS rows FROM lancelsm_checkpoint_due(slices => 1);
-- which slice each table is in, by the documented hash: fmix64(FNV-1a 64
-- of server, a zero byte and table name) modulo slices
SELECT i AS slice, string_agg(c.server || '.' || c.table_name, ' '
                              ORDER BY c.server COLLATE "C", c.table_name COLLATE "C") AS tables
  FROM generate_series(0, 2) i, LATERAL lancelsm_checkpoint_due(slice => i, slices => 3) c
 GROUP BY i ORDER BY i;
CREATE TEMP TABLE sl_member AS
  SELECT i AS slice, c.server, c.table_name
    FROM generate_series(0, 2) i, LATERAL lancelsm_checkpoint_due(i, 3) c;
-- every table due (a compaction trigger): slice 1 of 3 reads and acts on
-- its own tables only, and returns their rows only
SELECT count(lancelsm_alter_table(server, table_name, max_l0_generations => 0))
  FROM lancelsm_table;
SELECT emu('POST', '/_emulator/log/reset');
CREATE TEMP TABLE sl_run AS SELECT * FROM lancelsm_checkpoint_due(1, 3);
SELECT count(*) AS rows, count(*) FILTER (WHERE action = 'compact' AND ok) AS compacted,
       count(*) FILTER (WHERE NOT ok AND sqlstate = '42704') AS no_mapping,
       bool_and((server, table_name) IN (SELECT server, table_name FROM sl_member
                                          WHERE slice = 1)) AS own_only
  FROM sl_run;
SELECT m.slice, m.table_name, c->>'get_lsm_stats' AS stats, c->>'compact_lsm' AS compact,
       c->>'flush_lsm' AS flush
  FROM sl_member m, emu_counts(m.table_name) c
 WHERE m.server = 'emu' ORDER BY m.table_name COLLATE "C";
-- argument errors: 22023 with a fixed message; NULL: 22004 (1.5: not
-- STRICT, so that a pg_cron job with a NULL argument fails)
SELECT dt_try($$SELECT * FROM lancelsm_checkpoint_due(0, 0)$$);
SELECT dt_try($$SELECT * FROM lancelsm_checkpoint_due(0, -3)$$);
SELECT dt_try($$SELECT * FROM lancelsm_checkpoint_due(-1, 3)$$);
SELECT dt_try($$SELECT * FROM lancelsm_checkpoint_due(3, 3)$$);
SELECT dt_try($$SELECT * FROM lancelsm_checkpoint_due(slice => 1)$$);
SELECT dt_try($$SELECT * FROM lancelsm_checkpoint_due(NULL, 3)$$);
SELECT dt_try($$SELECT * FROM lancelsm_checkpoint_due(0, 1, NULL)$$);
DROP TABLE sl_member, sl_run;
SELECT count(lancelsm_remove_table(server, table_name)) FROM lancelsm_table;

-- max_requests_in_flight: a server that allows 2 gets at most 2 requests
-- at once from one call, so its 12 stats reads (each held 100 ms by the
-- emulator's round trip) come on exactly 2 new connections
CREATE SERVER du_two FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'emu_url', max_requests_in_flight '2');
SELECT key AS emu_key FROM emu_conf \gset
CREATE USER MAPPING FOR CURRENT_USER SERVER du_two OPTIONS (api_key :'emu_key');
SELECT count(lancelsm_add_table('du_two', 'sl_' || i, max_l0_generations => 5, validate => false))
  FROM generate_series(1, 12) i;
SELECT emu('POST', '/_emulator/config', '{"rtt_ms": 100}') ->> 'rtt_ms' AS rtt_ms;
SELECT emu('POST', '/_emulator/log/reset');
SELECT count(*) FILTER (WHERE ok AND NOT due) AS quiet FROM lancelsm_checkpoint_due();
SELECT c->>'get_lsm_stats' AS stats, c->>'connections' AS connections
  FROM emu('GET', '/_emulator/counts') c;
SELECT emu('POST', '/_emulator/config', '{"rtt_ms": 0}') ->> 'rtt_ms' AS rtt_ms;
SELECT count(lancelsm_remove_table(server, table_name)) FROM lancelsm_table;
DROP SERVER du_two CASCADE;
DROP SERVER du_nomap;
REVOKE ALL ON lancelsm_table FROM regress_du_reader;
REVOKE USAGE ON FOREIGN SERVER emu FROM regress_du_reader;
DROP ROLE regress_du_reader;
