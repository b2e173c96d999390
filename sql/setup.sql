-- setup: the extension, a server pointing at the emulator, and helpers
-- that drive the emulator's control API (emulator/README.md) from SQL.
-- The emulator is the one LANCELSM_EMULATOR_PORT and LANCELSM_EMULATOR_KEY
-- name when they are set (scripts/test.sh), else one started here under
-- tmp_check/ for this run alone: sql/teardown.sql stops it, and its
-- --max-lifetime ends it should the run stop before that.  emu_conf keeps
-- its port and key for the scripts that follow.
\getenv emu_port LANCELSM_EMULATOR_PORT
\getenv emu_key LANCELSM_EMULATOR_KEY
\set emu_started false
\if :{?emu_port}
\else
\! rm -rf tmp_check/regress-emulator && mkdir -p tmp_check/regress-emulator && scripts/regress-emulator.sh tmp_check/regress-emulator regress-emulator-key --max-lifetime 1800 >/dev/null
\set emu_port `cat tmp_check/regress-emulator/emulator.port`
\set emu_key regress-emulator-key
\set emu_started true
\endif
CREATE EXTENSION lancelsm;
CREATE TABLE emu_conf (port int NOT NULL, key text NOT NULL, started bool NOT NULL);
INSERT INTO emu_conf VALUES (:'emu_port', :'emu_key', :'emu_started');
-- emu(method, path, body): one control request, its JSON answer.
CREATE FUNCTION emu(method text, path text, body jsonb DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  cmd text;
  answer text;
BEGIN
  cmd := format('curl -sS --max-time 30 -X %s -H %s %s http://127.0.0.1:%s%s',
                method, '''content-type: application/json''',
                CASE WHEN body IS NULL THEN ''
                     ELSE '--data-binary ''' || replace(body::text, '''', '''\''''') || '''' END,
                (SELECT port FROM emu_conf), path);
  IF to_regclass('pg_temp.emu_out') IS NULL THEN
    CREATE TEMP TABLE emu_out (line text);
  END IF;
  TRUNCATE emu_out;
  EXECUTE format('COPY emu_out FROM PROGRAM %L WITH (FORMAT csv, DELIMITER E''\x01'', QUOTE E''\x02'')', cmd);
  SELECT string_agg(line, E'\n') INTO answer FROM emu_out;
  RETURN answer::jsonb;
END
$fn$;
-- emu_reset(): the emulator back to its start state, log cleared.
CREATE FUNCTION emu_reset() RETURNS void LANGUAGE sql AS
$$ SELECT emu('POST', '/_emulator/reset') $$;
-- emu_fault(route, status, count, extra): queue faults on table "events".
CREATE FUNCTION emu_fault(tbl text, route text, status int, count int DEFAULT 1,
                          extra jsonb DEFAULT '{}')
RETURNS void LANGUAGE sql AS
$$ SELECT emu('POST', '/_emulator/faults',
              jsonb_build_object('table', tbl, 'route', route, 'status', status,
                                 'count', count) || extra) $$;
-- emu_counts(table): calls per route since the last reset.
CREATE FUNCTION emu_counts(tbl text) RETURNS jsonb LANGUAGE sql AS
$$ SELECT emu('GET', '/_emulator/counts?table=' || tbl) - 'connections' $$;
-- emu_log(): the request log.
CREATE FUNCTION emu_log() RETURNS SETOF jsonb LANGUAGE sql AS
$$ SELECT jsonb_array_elements(emu('GET', '/_emulator/log') -> 'requests') $$;
SELECT emu_reset();
\set emu_url 'http://127.0.0.1:' :emu_port
CREATE SERVER emu FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database 'mydb', host_override :'emu_url');
CREATE USER MAPPING FOR PUBLIC SERVER emu OPTIONS (api_key :'emu_key');
-- fast retries in tests: call counts, not timing, are what they pin
ALTER DATABASE contrib_regression SET lancelsm.backoff_base = '1ms';
ALTER DATABASE contrib_regression SET lancelsm.backoff_max = '20ms';
ALTER DATABASE contrib_regression SET lancelsm.poll_interval_min = '10ms';
ALTER DATABASE contrib_regression SET lancelsm.poll_interval_max = '100ms';
-- emu_try(sql): 'ok', or SQLSTATE, message, detail and hint, with the
-- request id and the cluster's data directory replaced (stable output)
CREATE FUNCTION emu_try(sql text) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  st text; msg text; det text; hin text;
BEGIN
  EXECUTE sql;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
    det = PG_EXCEPTION_DETAIL, hin = PG_EXCEPTION_HINT;
  det := replace(regexp_replace(det, 'Request ID: [0-9a-f-]+\.', 'Request ID: <id>.'),
                 current_setting('data_directory'), '<data>');
  msg := replace(msg, current_setting('data_directory'), '<data>');
  RETURN st || ' ' || msg
         || CASE WHEN det <> '' THEN E'\nDETAIL: ' || det ELSE '' END
         || CASE WHEN hin <> '' THEN E'\nHINT: ' || hin ELSE '' END;
END
$fn$;
