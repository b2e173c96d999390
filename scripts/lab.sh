#!/usr/bin/env bash
# scripts/lab.sh: the test lab's shell fixture: throwaway PostgreSQL
# clusters and the emulator for scripts/, bench/ and test/ (t/LsmTap.pm
# is its TAP side; both start the emulator through scripts/emulator.sh).
# Sourced (". scripts/lab.sh"), it defines the functions below; run as a
# command it is the fast loop of docs/development.md:
#
#	scripts/lab.sh check [make args...]
#		builds a copy of this tree for PG_CONFIG's PostgreSQL (default:
#		pg_config) into a scratch DESTDIR, starts an emulator and a
#		cluster that loads it, and runs `make installcheck` with the make
#		args twice side by side: pg_regress in that cluster, TAP in nodes
#		that load it through TEMP_CONFIG.  E.g. PROVE_TESTS='t/call_*.pl'
#		(one subject), REGRESS= (TAP alone), TAP_TESTS= (pg_regress
#		alone).  No root needed; as root the cluster and the suite run as
#		postgres.  The directory is removed unless something failed or
#		LAB_KEEP=1.
#	scripts/lab.sh run PG_CONFIG SETTINGS CMD
#		CMD (one shell string) in a throwaway cluster (lab_run).
#
# Functions (DIR: a directory of the caller's, readable by postgres):
#
# lab_as_postgres CMD: a shell command as the postgres user (su when run
#   as root), else as the current user.
# lab_emulator DIR [flags...]: the emulator in the background
#   (scripts/emulator.sh); sets lab_emulator_port.
# lab_build DIR PG_CONFIG: builds a copy of this tree (its source files
#   only, scripts/source-tar.sh) in DIR/src for PG_CONFIG's PostgreSQL and
#   installs it into the scratch DESTDIR DIR/dest, never over the system's
#   lancelsm; sets lab_conf to the settings that make a cluster load it
#   (Debian's extension_destdir and dynamic_library_path).  Shows the
#   build log and returns 1 when it fails.
# lab_cluster DIR PG_CONFIG [SETTINGS]: initdb in DIR/data, then starts
#   it: no TCP, its Unix socket in DIR (port lab_port, 5432), fsync off,
#   lab_conf (empty unless lab_build ran) and SETTINGS (postgresql.conf
#   lines; lab_lancelsm_conf preloads lancelsm with short polls and
#   backoff), the server's environment plus lab_server_env (VAR=value
#   words, e.g. the sanitizers' LD_PRELOAD); server log DIR/server.log.
#   Shows the log and returns 1 when it fails.
# lab_env DIR: exports PGHOST, PGPORT, PGUSER and PGDATABASE for it.
# lab_stop DIR PG_CONFIG: stops DIR's cluster (immediate) and emulator,
#   whichever runs; for the caller's EXIT trap.
# lab_run DIR PG_CONFIG SETTINGS CMD: lab_cluster, CMD (one shell string,
#   as lab_as_postgres, with lab_env's variables and PG_CONFIG's bindir
#   first in PATH), then stops the cluster; returns CMD's status.
lab_conf=
lab_server_env=
lab_port=5432
lab_emulator_port=
lab_lancelsm_conf="shared_preload_libraries = 'lancelsm'
lancelsm.poll_interval_min = '10ms'
lancelsm.poll_interval_max = '50ms'
lancelsm.backoff_base = '1ms'"

lab_as_postgres() {
	if [ "$(id -u)" = 0 ]; then su postgres -c "$1"; else bash -c "$1"; fi
}

lab_emulator() {
	local dir=$1
	shift
	"$(dirname "${BASH_SOURCE[0]}")/emulator.sh" "$dir" "$@" || return 1
	lab_emulator_port=$(cat "$dir/emulator.port")
}

lab_build() {
	local dir=$1 pg_config=$2
	local tree
	tree=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	mkdir -p "$dir/src" && "$tree/scripts/source-tar.sh" | tar -C "$dir/src" -xf - &&
		make -C "$dir/src" -s -j2 PG_CONFIG="$pg_config" >"$dir/build.log" 2>&1 &&
		make -C "$dir/src" -s PG_CONFIG="$pg_config" install DESTDIR="$dir/dest" >>"$dir/build.log" 2>&1 ||
		{ cat "$dir/build.log" >&2; return 1; }
	chmod -R a+rX "$dir/dest"
	# both settings, or the preloaded library and CREATE EXTENSION's
	# would be two different copies
	lab_conf="extension_destdir = '$dir/dest'
dynamic_library_path = '$dir/dest$("$pg_config" --pkglibdir):\$libdir'"
}

lab_cluster() {
	local dir=$1 bindir settings=${3:-}
	bindir=$("$2" --bindir)
	[ "$(id -u)" = 0 ] && chown postgres: "$dir"
	lab_as_postgres "'$bindir/initdb' -D '$dir/data' -U postgres -A trust --no-sync >'$dir/initdb.log' 2>&1" ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $lab_port
fsync = off
max_connections = 40
$lab_conf
$settings
CONF
	lab_as_postgres "$lab_server_env '$bindir/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -t 60 start >/dev/null" ||
		{ cat "$dir/server.log" >&2; return 1; }
}

lab_env() {
	export PGHOST=$1 PGPORT=$lab_port PGUSER=postgres PGDATABASE=postgres
}

lab_stop() {
	local dir=$1 bindir
	bindir=$("$2" --bindir)
	[ -f "$dir/data/postmaster.pid" ] &&
		lab_as_postgres "'$bindir/pg_ctl' -D '$dir/data' -m immediate -w stop" >/dev/null 2>&1
	[ -f "$dir/emulator.pid" ] && kill "$(cat "$dir/emulator.pid")" 2>/dev/null
	return 0
}

lab_run() {
	local dir=$1 pg_config=$2 rc=0 bindir
	bindir=$("$pg_config" --bindir)
	lab_cluster "$dir" "$pg_config" "$3" || return 1
	lab_as_postgres "export PGHOST='$dir' PGPORT=$lab_port PGUSER=postgres PGDATABASE=postgres \
		PATH='$bindir':\$PATH; $4" || rc=$?
	lab_as_postgres "'$bindir/pg_ctl' -D '$dir/data' -m fast -w stop" >/dev/null
	return $rc
}

# lab_check [make args...]: the fast loop (scripts/lab.sh check):
# pg_regress (in the lab cluster, against an emulator started here) and
# TAP (in nodes of its own, TEMP_CONFIG) side by side, each with its time.
# The key is sql/setup.sql's own: lancelsm masks every 4-byte piece of it
# in errors, and the expected outputs are written for that one.
lab_check() {
	local pg_config=${PG_CONFIG:-pg_config} work args rc=0 key=regress-emulator-key
	work=$(mktemp -d "${TMPDIR:-/tmp}/lancelsm-lab.XXXXXX")
	lab_work=$work
	chmod 755 "$work"
	lab_build "$work" "$pg_config" || return 1
	printf '%s\n' "$lab_conf" >"$work/temp.conf"
	"$(dirname "${BASH_SOURCE[0]}")/regress-emulator.sh" "$work" "$key" --max-lifetime 1800 || return 1
	[ "$(id -u)" = 0 ] && chown -R postgres: "$work"
	args=$(printf '%q ' "$@")
	cat >"$work/check.sh" <<CHECK
cd '$work/src'
half() {
	local name=\$1 start=\$SECONDS
	shift
	"\$@" >"$work/\$name.log" 2>&1
	echo \$? \$((SECONDS - start)) >"$work/\$name.status"
}
half regress env LANCELSM_EMULATOR_PORT=$(cat "$work/emulator.port") LANCELSM_EMULATOR_KEY=$key \\
	make installcheck PG_CONFIG='$pg_config' $args TAP_TESTS= &
half tap env TEMP_CONFIG='$work/temp.conf' make installcheck PG_CONFIG='$pg_config' $args REGRESS= &
wait
rc=0
for name in regress tap; do
	cat "$work/\$name.log"
	read -r status secs <"$work/\$name.status"
	echo "lab: \$name: \$( [ \$status = 0 ] && echo passed || echo FAILED ) (\$secs s)"
	[ \$status = 0 ] || rc=1
done
exit \$rc
CHECK
	lab_run "$work" "$pg_config" "" "bash '$work/check.sh'" || rc=$?
	[ $rc = 0 ] || head -200 "$work/src/regression.diffs" 2>/dev/null
	lab_stop "$work" "$pg_config"
	if [ "${LAB_KEEP:-0}" = 1 ] || [ $rc != 0 ]; then echo "lab: kept $work" >&2; else rm -rf "$work"; fi
	return $rc
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -uo pipefail
	case "${1:-}" in
	check) shift
		lab_work=
		trap '[ -z "$lab_work" ] || lab_stop "$lab_work" "${PG_CONFIG:-pg_config}"' EXIT
		lab_check "$@" ;;
	run) [ $# = 4 ] || { echo "usage: scripts/lab.sh run PG_CONFIG SETTINGS CMD" >&2; exit 2; }
		work=$(mktemp -d "${TMPDIR:-/tmp}/lancelsm-lab.XXXXXX")
		chmod 755 "$work"
		trap 'lab_stop "$work" "$2"; rm -rf "$work"' EXIT
		lab_run "$work" "$2" "$3" "$4" ;;
	*) echo "usage: scripts/lab.sh check [make args...] | run PG_CONFIG SETTINGS CMD" >&2; exit 2 ;;
	esac
fi
