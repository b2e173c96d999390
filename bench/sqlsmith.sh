#!/usr/bin/env bash
# bench/sqlsmith.sh [QUERIES]: the long sqlsmith run, 100,000 queries by
# default (the test command runs 10,000 of them: scripts/sqlsmith.sh, which
# does the work and describes the setup).  Builds this tree and loads it
# from a scratch DESTDIR (SQLSMITH_BUILD=1; set 0 to use the lancelsm
# installed in the host's PostgreSQL 15); needs the sqlsmith package; as
# root or postgres.  Prints the queries, the time, the errors by SQLSTATE class,
# the emulator's requests, the crashed backends and the postmaster
# restarts (both must be 0: the exit status is non-zero otherwise).
# Figures: bench/results.md, "sqlsmith".  About 15 minutes on 2 cores.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
SQLSMITH_BUILD=${SQLSMITH_BUILD:-1} SQLSMITH_TIMEOUT=${SQLSMITH_TIMEOUT:-3600} exec "$here/scripts/sqlsmith.sh" "${1:-100000}"
