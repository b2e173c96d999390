# scripts/scratch-cluster.sh: sourced (". scripts/scratch-cluster.sh") by
# scripts/sqlsmith.sh and test/monitoring/run.sh, for a throwaway cluster
# with lancelsm preloaded.  Defines:
#
# scratch_as_postgres CMD: a shell command as the postgres user (su when
#   run as root).
# scratch_build DIR PG_CONFIG: builds a copy of this tree (its source
#   files only, scripts/source-tar.sh) in DIR/src for PG_CONFIG's
#   PostgreSQL and installs it into the scratch DESTDIR DIR/dest, never
#   over the system's lancelsm; sets scratch_conf to the settings that
#   make a cluster load it (Debian's extension_destdir, as
#   scripts/sanitize.sh does).  Shows the build log and returns 1 when it
#   fails.
# scratch_cluster DIR PG_CONFIG PORT [SETTINGS]: initdb in DIR/data as
#   postgres, then starts it: lancelsm in shared_preload_libraries, no TCP
#   (its Unix socket in DIR, port PORT), fsync off, lancelsm's polls and
#   backoff short, scratch_conf (empty unless scratch_build ran) and
#   SETTINGS (postgresql.conf lines); server log DIR/server.log.  Shows the
#   log and returns 1 when it fails.  The caller stops it
#   (pg_ctl -D DIR/data -m immediate stop).
scratch_conf=

scratch_as_postgres() {
	if [ "$(id -u)" = 0 ]; then su postgres -c "$1"; else bash -c "$1"; fi
}

scratch_build() {
	local dir=$1 pg_config=$2
	local tree
	tree=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	mkdir -p "$dir/src" && "$tree/scripts/source-tar.sh" | tar -C "$dir/src" -xf - &&
		make -C "$dir/src" -s PG_CONFIG="$pg_config" >"$dir/build.log" 2>&1 &&
		make -C "$dir/src" -s PG_CONFIG="$pg_config" install DESTDIR="$dir/dest" >>"$dir/build.log" 2>&1 ||
		{ cat "$dir/build.log" >&2; return 1; }
	chmod -R a+rX "$dir/dest"
	# both settings, or the preloaded library and CREATE EXTENSION's
	# would be two different copies
	scratch_conf="extension_destdir = '$dir/dest'
dynamic_library_path = '$dir/dest$("$pg_config" --pkglibdir):\$libdir'"
}

scratch_cluster() {
	local dir=$1 bindir port=$3 settings=${4:-}
	bindir=$("$2" --bindir)
	scratch_as_postgres "'$bindir/initdb' -D '$dir/data' -A trust --no-sync >'$dir/initdb.log' 2>&1" ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	cat >>"$dir/data/postgresql.conf" <<EOF
shared_preload_libraries = 'lancelsm'
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
fsync = off
max_connections = 20
lancelsm.poll_interval_min = '10ms'
lancelsm.poll_interval_max = '50ms'
lancelsm.backoff_base = '1ms'
$scratch_conf
$settings
EOF
	scratch_as_postgres "'$bindir/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -t 60 start >/dev/null" ||
		{ cat "$dir/server.log" >&2; return 1; }
}
