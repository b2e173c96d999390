#!/usr/bin/env bash
# bench/h2.sh: HTTP/2 against HTTP/1.1 through a real nginx TLS edge
# (bench/h2.pl): wall time as a ratio to HTTP/1.1 in the same run,
# requests, TCP connections and requests per connection; and the backend's
# CPU per request over HTTPS with HTTP/2 against bench/curl_floor.c through
# the same edge (needs unshare, util-linux).  Needs nginx
# (scripts/deps.sh) and lancelsm installed for PostgreSQL 15 (make
# install); runs as postgres in a copy of the tree, in a throwaway
# directory, with its own emulator, cluster and nginx, all stopped at the
# end.  Run as root: bash bench/h2.sh   (BENCH_REPS, default 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench/h2.sh: run as root" >&2; exit 1; }
pgbin=/usr/lib/postgresql/15/bin
pgxs=/usr/lib/postgresql/15/lib/pgxs
perl_lib=$pgxs/src/test/perl
work=$(mktemp -d /tmp/lancelsm-h2.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
tar -C "$root" --exclude=node_modules --exclude=.git -cf - t bench emulator | tar -C "$work" -xf -
chown -R postgres: "$work"
su postgres -c "cd '$work' && PATH='$pgbin:$PATH' PG_REGRESS='$pgxs/src/test/regress/pg_regress' BENCH_REPS='${BENCH_REPS:-3}' \
	timeout 600 prove -I '$perl_lib' bench/h2.pl" 2>&1 | grep -v '^\s*$'
