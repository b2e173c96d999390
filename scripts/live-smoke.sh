#!/usr/bin/env bash
# Live smoke test against a real LanceDB Cloud or Enterprise table
# (docs/development.md, "Live smoke test").  Runs only when these are set:
#   LANCELSM_LIVE_DATABASE   the LanceDB database name
#   LANCELSM_LIVE_API_KEY    an API key with access to it
#   LANCELSM_LIVE_TABLE      an existing table (namespaced: ns$table)
# optional:
#   LANCELSM_LIVE_REGION         LanceDB Cloud region (default us-east-1)
#   LANCELSM_LIVE_HOST_OVERRIDE  Enterprise (or emulator) URL instead of Cloud
#   LANCELSM_LIVE_TIMEOUT        statement_timeout of each step (default 10min)
# and the usual libpq variables (PGHOST, PGPORT, PGDATABASE, PGUSER) for a
# PostgreSQL where lancelsm is installed; the role must be allowed to
# create a foreign server (a superuser, or USAGE on the wrapper).
#
# First the protocol fingerprint (scripts/live-fingerprint.py, Python's
# standard library; LANCELSM_LIVE_FINGERPRINT_WAIT bounds its wait for
# compaction passes, default 120 s): what the server answers where the
# SDKs' source is silent, in a block to paste back.  Then, through
# lancelsm, it reads the table's LSM stats, flushes, checkpoints, reads
# the stats again and reads the write spec, printing counts.  It changes
# nothing else: the server, the user mapping (and the extension, if it was
# not there) are created in one transaction that is rolled back.  The API
# key goes through the environment, never on a command line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if [ -z "${LANCELSM_LIVE_DATABASE:-}" ] || [ -z "${LANCELSM_LIVE_API_KEY:-}" ] ||
	[ -z "${LANCELSM_LIVE_TABLE:-}" ]; then
	echo "live smoke test skipped: set LANCELSM_LIVE_DATABASE, LANCELSM_LIVE_API_KEY and LANCELSM_LIVE_TABLE"
	exit 0
fi
export LANCELSM_LIVE_REGION=${LANCELSM_LIVE_REGION:-us-east-1}
export LANCELSM_LIVE_HOST_OVERRIDE=${LANCELSM_LIVE_HOST_OVERRIDE:-}
export LANCELSM_LIVE_TIMEOUT=${LANCELSM_LIVE_TIMEOUT:-10min}

fingerprint=0
python3 "$here/live-fingerprint.py" || fingerprint=$?

psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
\set VERBOSITY verbose
\pset footer off
\getenv db LANCELSM_LIVE_DATABASE
\getenv key LANCELSM_LIVE_API_KEY
\getenv tbl LANCELSM_LIVE_TABLE
\getenv region LANCELSM_LIVE_REGION
\getenv host LANCELSM_LIVE_HOST_OVERRIDE
\getenv timeout LANCELSM_LIVE_TIMEOUT
SELECT version() AS postgresql;
BEGIN;
CREATE EXTENSION IF NOT EXISTS lancelsm;
SELECT extversion AS lancelsm FROM pg_extension WHERE extname = 'lancelsm';
SELECT :'host' = '' AS cloud \gset
\if :cloud
CREATE SERVER lancelsm_live_smoke FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database :'db', region :'region');
\else
CREATE SERVER lancelsm_live_smoke FOREIGN DATA WRAPPER lancelsm
  OPTIONS (database :'db', host_override :'host');
\endif
CREATE USER MAPPING FOR CURRENT_USER SERVER lancelsm_live_smoke OPTIONS (api_key :'key');
\unset key
SET LOCAL statement_timeout = :'timeout';
\timing on
\echo '== 1. stats'
SELECT count(*) AS buckets, coalesce(sum(l0_generations), 0) AS l0_generations,
       coalesce(sum(l0_bytes), 0) AS l0_bytes,
       coalesce(sum(memtable_rows), 0) AS memtable_rows,
       count(*) FILTER (WHERE compacting) AS compacting
  FROM lancelsm_stats('lancelsm_live_smoke', :'tbl');
\echo '== 2. flush'
SELECT lancelsm_flush('lancelsm_live_smoke', :'tbl');
\echo '== 3. checkpoint'
SELECT lancelsm_checkpoint('lancelsm_live_smoke', :'tbl');
SELECT count(*) AS buckets, coalesce(sum(l0_generations), 0) AS l0_generations_after,
       coalesce(sum(memtable_rows), 0) AS memtable_rows_after
  FROM lancelsm_stats('lancelsm_live_smoke', :'tbl');
\echo '== 4. write spec'
SELECT count(*) AS write_specs FROM lancelsm_write_spec('lancelsm_live_smoke', :'tbl');
SELECT sharding, sharding_column, num_buckets,
       cardinality(maintained_indexes) AS maintained_indexes,
       (SELECT count(*) FROM jsonb_object_keys(writer_config_defaults)) AS writer_config_defaults
  FROM lancelsm_write_spec('lancelsm_live_smoke', :'tbl');
\timing off
ROLLBACK;
\echo '== live smoke test passed'
SQL
if [ "$fingerprint" -ne 0 ]; then
	echo "the protocol fingerprint stopped early (see its block)"
	exit 1
fi
