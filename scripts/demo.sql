-- scripts/demo.sql: run by scripts/demo.sh, as the superuser postgres, in
-- database postgres of a throwaway cluster with lancelsm and pg_cron
-- preloaded.  The README's quick start, against the local emulator.
\getenv port LANCELSM_EMULATOR_PORT
\getenv key LANCELSM_EMULATOR_KEY
\set url 'http://127.0.0.1:' :port
\pset footer off

-- wait_until(condition, bound): polls the SQL condition every 50 ms
-- until it holds, and says how long that took; an error past the bound
CREATE FUNCTION pg_temp.wait_until(cond text, bound interval) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  t0 timestamptz := clock_timestamp();
  ok boolean;
BEGIN
  LOOP
    EXECUTE 'SELECT ' || cond INTO ok;
    IF ok THEN
      RETURN format('after %s s', round(extract(epoch FROM clock_timestamp() - t0)::numeric, 1));
    END IF;
    IF clock_timestamp() - t0 > bound THEN
      RAISE EXCEPTION 'waited % for: %', bound, cond;
    END IF;
    PERFORM pg_sleep(0.05);
  END LOOP;
END
$$;

\echo
\echo '== The extensions, a server, and the key for you and for the job''s role'
CREATE EXTENSION lancelsm;
CREATE EXTENSION pg_cron;
CREATE SERVER lance FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'url');
CREATE USER MAPPING FOR CURRENT_USER SERVER lance OPTIONS (api_key :'key');
CREATE ROLE lsm_job LOGIN;
CREATE USER MAPPING FOR lsm_job SERVER lance OPTIONS (api_key :'key');
GRANT USAGE ON FOREIGN SERVER lance TO lsm_job;
GRANT UPDATE (last_checkpoint_at) ON lancelsm_table TO lsm_job;
SELECT name, setting FROM pg_settings
 WHERE name IN ('shared_preload_libraries', 'cron.database_name') ORDER BY name;

\echo '== "analytics$clicks" has no write spec (no row): install one: 2 buckets on its primary key'
SELECT * FROM lancelsm_write_spec('lance', 'analytics$clicks');
SELECT lancelsm_set_write_spec('lance', 'analytics$clicks', 'bucket', 'id', 2);
SELECT * FROM lancelsm_write_spec('lance', 'analytics$clicks');

\echo '== A first look at "events": one row per bucket (writers fill memtables; sealed ones wait in L0)'
SELECT shard_id, l0_generations, l0_bytes, wal_lag, memtable_rows
  FROM lancelsm_stats('lance', 'events') ORDER BY shard_id COLLATE "C";

\echo '== Declare both tables with the thresholds past which the due job acts (small: the first run has work); each is read once, so a misspelt name is refused'
SELECT lancelsm_add_table('lance', 'events', max_l0_generations => 4,
                          max_checkpoint_age => '1 second');
SELECT lancelsm_add_table('lance', 'analytics$clicks', max_memtable_rows => 50);
-- the writers at work until both tables are past a threshold
SELECT pg_temp.wait_until('(SELECT bool_and(due) FROM lancelsm_table_stats)',
                          '30 seconds') AS both_due;
SELECT table_name, l0_generations, memtable_rows, due, due_reason, due_action
  FROM lancelsm_table_stats ORDER BY table_name COLLATE "C";

\echo '== Schedule the due job every minute as lsm_job, and wait for pg_cron to run it'
SELECT cron.schedule_in_database('lsm-due', '* * * * *',
  $$SET statement_timeout = '50s'; SELECT * FROM lancelsm_checkpoint_due(strict => true)$$,
  'postgres', 'lsm_job') AS jobid \gset
SELECT to_char(now(), 'HH24:MI:SS') AS scheduled_at;
SELECT pg_temp.wait_until(format(
  $$EXISTS (SELECT FROM cron.job_run_details WHERE jobid = %s
              AND status IN ('succeeded', 'failed'))$$, :jobid), '90 seconds') AS first_run;
SELECT j.jobname, d.username, d.status, d.return_message,
       to_char(d.start_time, 'HH24:MI:SS') AS started,
       round(extract(epoch FROM d.end_time - d.start_time)::numeric, 2) AS seconds
  FROM cron.job_run_details d JOIN cron.job j USING (jobid);

\echo '== What it left: each table''s outcome in lancelsm_status, and the tables now'
SELECT table_name, last_action, last_source, last_ok, last_sqlstate,
       last_checkpoint_at IS NOT NULL AS checkpointed
  FROM lancelsm_status ORDER BY table_name COLLATE "C";
SELECT table_name, l0_generations, memtable_rows, due, due_action
  FROM lancelsm_table_stats ORDER BY table_name COLLATE "C";
SELECT table_name, shard_id, l0_generations, compacting
  FROM lancelsm_bucket_stats ORDER BY table_name COLLATE "C", shard_id COLLATE "C";
SELECT cron.unschedule(:jobid);

\echo '== A checkpoint of every declared table, in another session, seen from here'
\! psql -X -q -d postgres -c 'SELECT count(*) FROM lancelsm_checkpoint_all()' >/dev/null &
SELECT pg_temp.wait_until('EXISTS (SELECT FROM lancelsm_progress)', '20 seconds') AS started;
SELECT database, table_name, phase, target_generations, outstanding_generations, passes, polls
  FROM lancelsm_progress ORDER BY table_name COLLATE "C";
SELECT pg_temp.wait_until('(SELECT count(*) = 2 FROM lancelsm_checkpoint_history)',
                          '60 seconds') AS finished;
SELECT database, table_name, ok, sqlstate, passes, elapsed > interval '0' AS took_time
  FROM lancelsm_checkpoint_history ORDER BY table_name COLLATE "C";
SELECT name, setting FROM pg_settings WHERE name LIKE 'lancelsm.max_%_entries' ORDER BY name;

\echo '== lancelsm itself: versions, preload, shared-memory entries in use'
SELECT library_version, catalog_version, preloaded, progress_entries,
       max_progress_entries, history_entries, max_history_entries,
       outcomes_survive_rollback, pending_outcomes
  FROM lancelsm_info;
