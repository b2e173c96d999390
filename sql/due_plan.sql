-- due_plan: the read plans of lancelsm_checkpoint_due() (1.5): a table is
-- read only when its next read is due; the plan's reasons (never read,
-- first read, bound, age, projected, fell, started growing, acted,
-- altered), the rows of the tables not read, lancelsm_status's columns,
-- max_read_interval and its CHECK, lancelsm.due_plan = off
SELECT emu_reset();
SET statement_timeout = '20s';
LOAD 'lancelsm';
SHOW lancelsm.due_plan;
SHOW lancelsm.max_read_interval;
-- dp_calls(): stats reads of the dp_ tables since the last log reset
CREATE FUNCTION dp_calls() RETURNS TABLE (tbl text, stats text, compact text)
LANGUAGE sql AS $$
  SELECT t, c->>'get_lsm_stats', c->>'compact_lsm'
    FROM unnest(ARRAY['dp_age', 'dp_quiet']) t, emu_counts(t) c
   ORDER BY t COLLATE "C" $$;
CREATE FUNCTION dp_plan() RETURNS TABLE (tbl text, reason text, next_read text,
                                         l0_generations bigint)
LANGUAGE sql AS $$
  SELECT table_name, next_read_reason,
         CASE WHEN next_read_at IS NULL THEN 'next run'
              WHEN next_read_at = plan_read_at + coalesce(max_read_interval, '15 min')
                THEN 'read + bound'
              WHEN next_read_at = added_at + max_checkpoint_age THEN 'added + age'
              WHEN next_read_at >= plan_read_at + coalesce(max_read_interval, '15 min') / 2
               AND next_read_at < plan_read_at + coalesce(max_read_interval, '15 min')
                THEN 'read + spread bound'
              ELSE 'other' END,
         plan_read_values[1]
    FROM lancelsm_table ORDER BY table_name COLLATE "C" $$;

SELECT emu('POST', '/_emulator/tables', '{"name": "dp_quiet", "buckets": 1}');
SELECT emu('POST', '/_emulator/tables', '{"name": "dp_age", "buckets": 1}');
SELECT emu('POST', '/_emulator/tables/dp_quiet/generations', '{"count": 1, "rows": 10}');
SELECT lancelsm_add_table('emu', 'dp_quiet', max_l0_generations => 5,
                          validate => false, max_read_interval => '1 hour');
SELECT lancelsm_add_table('emu', 'dp_age', max_checkpoint_age => '10 minutes',
                          validate => false);
-- max_read_interval must be above zero (23514), as an age threshold
SELECT dt_try($$SELECT lancelsm_add_table('emu', 'dp_x', validate => false, max_read_interval => '0')$$);
SELECT dt_try($$SELECT lancelsm_alter_table('emu', 'dp_quiet', max_read_interval => '-1 s')$$);
SELECT table_name, max_read_interval, next_read_at, next_read_reason,
       plan_read_at, plan_read_values
  FROM lancelsm_table ORDER BY table_name COLLATE "C";

-- run 1: both never read, both read; dp_age (only an age threshold) is
-- planned at its age (before the bound, the setting's 15 minutes);
-- dp_quiet holds an L0 generation under its L0 threshold, so it may be
-- written now: its first read plans a read at the next run
SELECT emu('POST', '/_emulator/log/reset');
SELECT table_name, ok, due, reason, action FROM lancelsm_checkpoint_due()
 ORDER BY table_name COLLATE "C";
SELECT * FROM dp_plan();
-- run 2: dp_quiet read again, unchanged: planned at its first bound,
-- spread over the bound's second half by its names; dp_age not read:
-- ok, due NULL, action none, reason "not read: "
SELECT table_name, ok, due, reason, action FROM lancelsm_checkpoint_due()
 ORDER BY table_name COLLATE "C";
SELECT * FROM dp_plan();
-- run 3: nothing read
SELECT table_name, ok, due, reason, action FROM lancelsm_checkpoint_due()
 ORDER BY table_name COLLATE "C";
SELECT * FROM dp_calls();
-- lancelsm_status shows the plan
SELECT table_name, next_read_at IS NOT NULL AS planned, next_read_reason
  FROM lancelsm_status WHERE table_name LIKE 'dp%' ORDER BY table_name COLLATE "C";

-- lancelsm.due_plan = off reads every table, and still plans (the
-- bound after a bound is not spread)
SELECT emu('POST', '/_emulator/log/reset');
SET lancelsm.due_plan = off;
SELECT table_name, ok, due, action FROM lancelsm_checkpoint_due()
 ORDER BY table_name COLLATE "C";
RESET lancelsm.due_plan;
SELECT * FROM dp_calls();
SELECT * FROM dp_plan();

-- a smaller lancelsm.max_read_interval takes effect at once: dp_age's
-- bound has passed (dp_quiet has its own)
SELECT emu('POST', '/_emulator/log/reset');
UPDATE lancelsm_table SET plan_read_at = now() - interval '20 minutes'
 WHERE table_name = 'dp_age';
SET lancelsm.max_read_interval = '10min';
SELECT table_name, reason FROM lancelsm_checkpoint_due()
 ORDER BY table_name COLLATE "C";
RESET lancelsm.max_read_interval;
SELECT * FROM dp_calls();

-- lancelsm_alter_table forgets the plan: read at the next run; clear
-- takes max_read_interval back to the setting
SELECT lancelsm_alter_table('emu', 'dp_quiet', clear => '{max_read_interval}');
SELECT table_name, max_read_interval, next_read_at, next_read_reason
  FROM lancelsm_table WHERE table_name = 'dp_quiet';
SELECT dt_try($$SELECT lancelsm_alter_table('emu', 'dp_quiet', max_read_interval => '1 hour', clear => '{max_read_interval}')$$);
SELECT dt_try($$SELECT lancelsm_alter_table('emu', 'dp_quiet', clear => '{max_read_intervals}')$$);
SELECT table_name, reason FROM lancelsm_checkpoint_due()
 WHERE table_name = 'dp_quiet';
SELECT * FROM dp_plan();

-- growth after a read at the next run: projected.  The last read is made
-- to say 0 L0 generations 10 minutes ago; now 1, threshold 5.  L0 grows
-- in whole generations, so up to one more may have been written by each
-- read: at the fastest rate the two reads allow (2 in 10 minutes), from
-- one above what was read (2), the threshold is exceeded (6 generations)
-- 4 generations later, in 20 minutes at the earliest; the next read is at
-- half that (within its bound, 1 hour).  The reason gives the rate seen.
UPDATE lancelsm_table SET plan_read_values = '{0,0,0,0}',
       plan_read_at = now() - interval '10 minutes', next_read_at = NULL,
       next_read_reason = 'first read', max_read_interval = '1 hour'
 WHERE table_name = 'dp_quiet';
SELECT table_name, reason FROM lancelsm_checkpoint_due()
 WHERE table_name = 'dp_quiet';
SELECT next_read_reason ~ '^projected l0_generations at 0\.00167/s$' AS projected,
       next_read_at - plan_read_at BETWEEN interval '10 minutes'
                                       AND interval '10 minutes 30 seconds' AS at_half
  FROM lancelsm_table WHERE table_name = 'dp_quiet';
-- the same growth after a read at the bound: it may have started just
-- before, so the rate is unknown: read at the next run
UPDATE lancelsm_table SET plan_read_values = '{0,0,0,0}',
       plan_read_at = now() - interval '10 minutes', next_read_at = NULL,
       next_read_reason = 'bound'
 WHERE table_name = 'dp_quiet';
SELECT table_name, reason FROM lancelsm_checkpoint_due()
 WHERE table_name = 'dp_quiet';
SELECT * FROM dp_plan() WHERE tbl = 'dp_quiet';
-- a measure that fell (a flush, the server's compaction): what was
-- written meanwhile is unknown: read at the next run
UPDATE lancelsm_table SET plan_read_values = '{3,0,0,0}', next_read_at = NULL
 WHERE table_name = 'dp_quiet';
SELECT table_name, reason FROM lancelsm_checkpoint_due()
 WHERE table_name = 'dp_quiet';
SELECT * FROM dp_plan() WHERE tbl = 'dp_quiet';
-- a table acted on is read at the next run
SELECT lancelsm_alter_table('emu', 'dp_quiet', max_l0_generations => 0);
SELECT table_name, due, action FROM lancelsm_checkpoint_due()
 WHERE table_name = 'dp_quiet';
SELECT * FROM dp_plan() WHERE tbl = 'dp_quiet';

SELECT count(lancelsm_remove_table(server, table_name)) FROM lancelsm_table;
DROP FUNCTION dp_calls(), dp_plan();
