-- declared: the catalog of declared tables, the views lancelsm_bucket_stats
-- and lancelsm_table_stats over it, and lancelsm_checkpoint_all()
SELECT port AS emu_port FROM emu_conf \gset
\set emu_url 'http://127.0.0.1:' :emu_port
SELECT emu_reset();
SET statement_timeout = '20s';
-- dt_try(sql): 'ok', or the SQLSTATE and message of the error
CREATE FUNCTION dt_try(sql text) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  st text; msg text;
BEGIN
  EXECUTE sql;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
  RETURN st || ' ' || msg;
END
$fn$;
-- dt_calls(tbl): the route calls of a table since the last log reset
CREATE FUNCTION dt_calls(tbl text) RETURNS text LANGUAGE sql AS $$
  SELECT format('flush %s, compact %s, stats %s', c->>'flush_lsm',
                c->>'compact_lsm', c->>'get_lsm_stats')
    FROM emu_counts(tbl) c $$;

-- nothing declared: no rows anywhere, nothing raised
SELECT * FROM lancelsm_table;
SELECT * FROM lancelsm_table_stats;
SELECT * FROM lancelsm_bucket_stats;
SELECT * FROM lancelsm_checkpoint_all();

-- servers: one that refuses connections, one without a user mapping, one
-- of another wrapper
CREATE SERVER dt_dead FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override 'http://127.0.0.1:1');
CREATE USER MAPPING FOR PUBLIC SERVER dt_dead OPTIONS (api_key 'dt-dead-key');
CREATE SERVER dt_nomap FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'emu_url');
CREATE FOREIGN DATA WRAPPER dt_other_fdw;
CREATE SERVER dt_other FOREIGN DATA WRAPPER dt_other_fdw;

-- add and remove
SELECT lancelsm_add_table('emu', 'dt_a', validate => false);
SELECT lancelsm_add_table('emu', 'dt_a', validate => false);
SELECT server, table_name, added_at <= now() AS added FROM lancelsm_table;
SELECT lancelsm_remove_table('emu', 'dt_a');
SELECT lancelsm_remove_table('emu', 'dt_a');
SELECT count(*) FROM lancelsm_table;
-- errors: unknown server, another wrapper, refused names; nothing stored
SELECT dt_try($$SELECT lancelsm_add_table('dt_nosuch', 'dt_a', validate => false)$$);
SELECT dt_try($$SELECT lancelsm_add_table('dt_other', 'dt_a', validate => false)$$);
SELECT dt_try($$SELECT lancelsm_add_table('emu', '', validate => false)$$);
SELECT dt_try($$SELECT lancelsm_add_table('emu', repeat('x', 1025), validate => false)$$);
SELECT lancelsm_add_table(NULL, 'dt_a', validate => false) IS NULL AS strict;
SELECT count(*) FROM lancelsm_table;

-- grants: reading is public, changing is not
CREATE ROLE regress_dt_reader;
SET ROLE regress_dt_reader;
SELECT count(*) FROM lancelsm_table;
SELECT dt_try($$SELECT lancelsm_add_table('emu', 'dt_a', validate => false)$$);
SELECT dt_try($$SELECT lancelsm_remove_table('emu', 'dt_a')$$);
SELECT dt_try($$INSERT INTO lancelsm_table VALUES ('emu', 'dt_a')$$);
SELECT dt_try($$DELETE FROM lancelsm_table$$);
RESET ROLE;
SELECT f, has_function_privilege('regress_dt_reader', f, 'EXECUTE') AS execute
  FROM unnest(ARRAY['lancelsm_add_table(text, text, bigint, bigint, bigint, bigint, interval, boolean, interval)',
                    'lancelsm_remove_table(text, text)',
                    'lancelsm_checkpoint_all(boolean)',
                    'lancelsm_declared_bucket_stats()',
                    'lancelsm_declared_table_stats()']) f;
SELECT r, has_table_privilege('regress_dt_reader', r, 'SELECT') AS select,
       has_table_privilege('regress_dt_reader', r, 'INSERT, UPDATE, DELETE, TRUNCATE') AS change
  FROM unnest(ARRAY['lancelsm_table', 'lancelsm_bucket_stats',
                    'lancelsm_table_stats']) r;

-- the emulator's tables: dt_a has two generations of 10 rows in b0 and
-- 5 unflushed rows in b1 (one WAL entry after the last flush); dt_b has
-- no LSM write path; dt_gone does not exist
SELECT emu('POST', '/_emulator/tables', '{"name": "dt_a", "buckets": 2}');
SELECT emu('POST', '/_emulator/tables/dt_a/generations', '{"count": 2, "rows": 10, "buckets": ["b0"]}');
SELECT emu('POST', '/_emulator/tables/dt_a/write', '{"rows": 5, "bucket": "b1"}');
SELECT emu('POST', '/_emulator/tables', '{"name": "dt_b", "buckets": 1, "lsm": false}');
-- declaring reads the table's stats once: dt_a and dt_b (no write path,
-- still a table) are declared; a typo is refused with HV00R and so is an
-- unreachable server's table, and nothing is declared; validate => false
-- declares a table that does not exist (yet) without a request
SELECT emu('POST', '/_emulator/log/reset');
SELECT lancelsm_add_table('emu', 'dt_a');
SELECT lancelsm_add_table('emu', 'dt_b');
SELECT dt_calls('dt_a'), dt_calls('dt_b');
SELECT dt_try($$SELECT lancelsm_add_table('emu', 'dt_gnoe')$$);
SELECT dt_try($$SELECT lancelsm_add_table('dt_dead', 'events')$$);
SELECT dt_try($$SELECT lancelsm_add_table('emu', 'dt_x', validate => NULL)$$);
SELECT count(*) FROM lancelsm_table
 WHERE table_name IN ('dt_gnoe', 'events', 'dt_x');
SELECT dt_calls('dt_gnoe');
SELECT lancelsm_add_table('emu', 'dt_gone', validate => false);
SELECT dt_calls('dt_gone');
SELECT lancelsm_add_table('dt_dead', 'events', validate => false);
SELECT lancelsm_add_table('dt_nomap', 'events', validate => false);
-- a name the functions refuse, stored by hand
INSERT INTO lancelsm_table (server, table_name) VALUES ('emu', '');

-- one row per declared table; the failures are rows, not errors; the
-- message is shown up to its detail (which carries request ids)
SELECT emu('POST', '/_emulator/log/reset');
SELECT server, table_name, lsm_enabled, buckets, l0_generations, l0_bytes,
       memtable_rows, wal_lag_total, wal_lag_max, compacting_buckets,
       error_sqlstate, split_part(error, ': ', 1) AS error
  FROM lancelsm_table_stats;
-- exactly one stats request per table, no other call
SELECT dt_calls('dt_a'), dt_calls('dt_b'), dt_calls('dt_gone');
SELECT count(*) FROM emu_log() e WHERE e->>'table' = 'events';

-- one row per bucket of the tables that answered
SELECT emu('POST', '/_emulator/log/reset');
SELECT server, table_name, shard_id, status, writer_epoch, manifest_version,
       current_generation, replay_after_wal_entry_position,
       wal_entry_position_last_seen, compacting, wal_lag, l0_generations,
       l0_bytes, oldest_l0_generation, newest_l0_generation, l0_rows,
       memtables, memtable_rows, memtable_bytes
  FROM lancelsm_bucket_stats;
SELECT dt_calls('dt_a'), dt_calls('dt_b'), dt_calls('dt_gone');

-- a compacting bucket and the WAL lag of two buckets
SELECT emu('POST', '/_emulator/tables/dt_a/latch', '{"bucket": "b0", "held": true}');
SELECT emu('POST', '/_emulator/tables/dt_a/write', '{"rows": 3, "bucket": "b0"}');
SELECT emu('POST', '/_emulator/tables/dt_a/write', '{"rows": 3, "bucket": "b0"}');
SELECT table_name, l0_generations, memtable_rows, wal_lag_total,
       wal_lag_max, compacting_buckets
  FROM lancelsm_table_stats WHERE table_name = 'dt_a';
SELECT emu('POST', '/_emulator/tables/dt_a/latch', '{"bucket": "b0", "held": false}');

-- a role without USAGE on the servers sees its failure on each row
SET ROLE regress_dt_reader;
SELECT server, table_name, error_sqlstate, error FROM lancelsm_table_stats;
SELECT count(*) FROM lancelsm_bucket_stats;
RESET ROLE;

-- checkpoint every declared table at once: dt_a drains four generations
-- (three in b0, the one flushed from b1) with three compact calls, one
-- pass per bucket and then two more in b0; every other table fails alone,
-- dt_b (no LSM write path) at its flush
SELECT emu('POST', '/_emulator/log/reset');
SELECT server, table_name, ok, sqlstate, split_part(message, ': ', 1) AS message,
       elapsed IS NOT NULL AS started, passes, polls > 0 AS polled
  FROM lancelsm_checkpoint_all();
SELECT dt_calls('dt_a') ~ '^flush 1, compact 3, stats ' AS dt_a_calls,
       dt_calls('dt_b'), dt_calls('dt_gone');
SELECT table_name, l0_generations, memtable_rows, wal_lag_total
  FROM lancelsm_table_stats WHERE error IS NULL;

-- a statistic out of range for bigint fails its table alone, as a row:
-- dt_big answers (through a queued fault) with two buckets that each have
-- one L0 generation of the given bytes; dt_a's rows are normal in the same
-- call, and only lancelsm_stats on dt_big alone raises
SELECT emu('POST', '/_emulator/tables', '{"name": "dt_big", "buckets": 2}');
SELECT lancelsm_add_table('emu', 'dt_big', validate => false);
CREATE FUNCTION dt_big_answer(b0_bytes numeric, b1_bytes numeric)
RETURNS void LANGUAGE sql AS $$
  SELECT emu('POST', '/_emulator/faults', jsonb_build_object(
    'table', 'dt_big', 'route', 'get_lsm_stats',
    'json', jsonb_build_object('lsm_stats', jsonb_build_object('buckets',
      (SELECT jsonb_agg(jsonb_build_object(
         'shard_id', shard, 'status', 'Active', 'writer_epoch', 1,
         'manifest_version', 2, 'current_generation', 2,
         'replay_after_wal_entry_position', 1,
         'wal_entry_position_last_seen', 1,
         'generations', jsonb_build_array(
           jsonb_build_object('generation', 1, 'bytes', bytes)),
         'compacting', false, 'memtables', '[]'::jsonb) ORDER BY shard)
         FROM (VALUES ('b0', b0_bytes), ('b1', b1_bytes)) b(shard, bytes))))))
$$;
SELECT dt_big_answer(18446744073709551615, 1);
SELECT table_name, lsm_enabled, buckets, l0_generations, l0_bytes,
       wal_lag_max, error_sqlstate, error
  FROM lancelsm_table_stats WHERE table_name IN ('dt_a', 'dt_big');
SELECT dt_big_answer(18446744073709551615, 1);
SELECT table_name, count(*) AS buckets FROM lancelsm_bucket_stats
 WHERE table_name IN ('dt_a', 'dt_big') GROUP BY 1 ORDER BY table_name COLLATE "C";
SELECT dt_big_answer(18446744073709551615, 1);
SELECT table_name, ok, sqlstate, message, due, action
  FROM lancelsm_checkpoint_due() WHERE table_name IN ('dt_a', 'dt_big');
SELECT dt_big_answer(18446744073709551615, 1);
SELECT emu_try($$SELECT * FROM lancelsm_stats('emu', 'dt_big')$$);
-- each bucket within range, their sum not: the table fails, the buckets
-- of lancelsm_stats do not
SELECT dt_big_answer(9223372036854775807, 1);
SELECT table_name, l0_bytes, error_sqlstate, error
  FROM lancelsm_table_stats WHERE table_name IN ('dt_a', 'dt_big');
SELECT dt_big_answer(9223372036854775807, 1);
SELECT shard_id, l0_bytes FROM lancelsm_stats('emu', 'dt_big');
SELECT dt_calls('dt_big');

-- clean up
SELECT lancelsm_remove_table(server, table_name) FROM lancelsm_table
 ORDER BY server COLLATE "C", table_name COLLATE "C";
SELECT count(*) FROM lancelsm_table;
DROP SERVER dt_dead CASCADE;
DROP SERVER dt_nomap;
DROP SERVER dt_other;
DROP FOREIGN DATA WRAPPER dt_other_fdw;
DROP ROLE regress_dt_reader;

-- internal SQL ignores the caller's search_path: a schema first in it
-- defines now(), date_trunc, the text = and timestamptz - operators and a
-- type text with a cast to it, each recording its calls; every
-- function that runs SQL inside is called, and none of them runs
SELECT emu('POST', '/_emulator/tables', '{"name": "dt_sp", "buckets": 1}');
CREATE SCHEMA dt_hostile;
CREATE TABLE dt_hostile.calls (f text);
CREATE FUNCTION dt_hostile.now() RETURNS timestamptz LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO dt_hostile.calls VALUES ('now'); RETURN pg_catalog.now(); END$$;
CREATE FUNCTION dt_hostile.date_trunc(text, interval) RETURNS interval
  LANGUAGE plpgsql AS $$BEGIN INSERT INTO dt_hostile.calls VALUES ('date_trunc');
  RETURN pg_catalog.date_trunc($1, $2); END$$;
CREATE FUNCTION dt_hostile.eq(text, text) RETURNS boolean LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO dt_hostile.calls VALUES ('=');
  RETURN $1 OPERATOR(pg_catalog.=) $2; END$$;
CREATE OPERATOR dt_hostile.= (LEFTARG = text, RIGHTARG = text,
  FUNCTION = dt_hostile.eq);
CREATE FUNCTION dt_hostile.minus(timestamptz, timestamptz) RETURNS interval
  LANGUAGE plpgsql AS $$BEGIN INSERT INTO dt_hostile.calls VALUES ('-');
  RETURN $1 OPERATOR(pg_catalog.-) $2; END$$;
CREATE OPERATOR dt_hostile.- (LEFTARG = timestamptz, RIGHTARG = timestamptz,
  FUNCTION = dt_hostile.minus);
CREATE TYPE dt_hostile.text AS (v pg_catalog.text);
CREATE FUNCTION dt_hostile.to_text(interval) RETURNS dt_hostile.text
  LANGUAGE plpgsql AS $$BEGIN INSERT INTO dt_hostile.calls VALUES ('::text');
  RETURN ROW($1::pg_catalog.text); END$$;
CREATE CAST (interval AS dt_hostile.text) WITH FUNCTION dt_hostile.to_text(interval);
-- the trap works: called by name, each records
SET search_path = dt_hostile, pg_catalog, public;
SELECT now() IS NOT NULL AS now, date_trunc('second', interval '1 s') IS NOT NULL AS trunc,
       'a' = 'a' AS eq, now() - now() IS NOT NULL AS minus,
       ('1 s'::interval)::text IS NOT NULL AS cast;
RESET search_path;
SELECT f, count(*) FROM dt_hostile.calls GROUP BY f ORDER BY f COLLATE "C";
TRUNCATE dt_hostile.calls;
-- every function of the declared tables, with the trap first in the path
SET search_path = dt_hostile, pg_catalog, public;
SELECT lancelsm_add_table('emu', 'dt_sp', max_checkpoint_age => '1 day', validate => false);
SELECT lancelsm_add_table('emu', 'dt_sp2', validate => false);
SELECT lancelsm_alter_table('emu', 'dt_sp2', max_checkpoint_age => '2 days');
SELECT lancelsm_remove_table('emu', 'dt_sp2');
SELECT table_name, lsm_enabled, error_sqlstate, max_checkpoint_age, due,
       due_reason, due_action
  FROM lancelsm_table_stats;
SELECT table_name, shard_id FROM lancelsm_bucket_stats;
SELECT table_name, ok, sqlstate, passes FROM lancelsm_checkpoint_all();
SELECT table_name, ok, sqlstate, due, action FROM lancelsm_checkpoint_due();
RESET search_path;
SELECT f, count(*) FROM dt_hostile.calls GROUP BY f ORDER BY f COLLATE "C";
SELECT table_name, last_checkpoint_at IS NOT NULL AS recorded FROM lancelsm_table;
SELECT lancelsm_remove_table('emu', 'dt_sp');
SET client_min_messages = warning;
DROP SCHEMA dt_hostile CASCADE;
RESET client_min_messages;
