#!/usr/bin/env bash
# The test command (README.md): on a fresh Debian 12 machine, as root,
# installs what it needs and runs the suite on every supported PostgreSQL:
# 15 on this host, 16, 17, 18 and 19 each in its own Debian chroot
# (scripts/pg-chroot.sh; built once, then reused from /var/cache/lancelsm):
# 16 compiled there from the source tarball LANCELSM_PG16_SOURCE names
# (skipped, saying so, without it: nothing is ever downloaded), the others
# from Debian's packages.  For each version, against an emulator of its
# own: build with -Werror and install, pg_regress and TAP in a throwaway
# cluster (scripts/lab.sh, as the postgres user, in a mount namespace where
# the test names of scripts/with-names.sh resolve; pg_cron's TAP files on
# every version: Debian's pg_cron package where there is one, elsewhere
# (16, 19) pg_cron built from the tarball LANCELSM_PG_CRON_SOURCE names),
# the 1.0 -> current upgrade test, and the Debian package (not on 16: it
# needs Debian's postgresql-server-dev-16).  With 19: pg_upgrade from 18
# to 19 with lancelsm installed.  Once, with 15 on the host: the heavy
# suites (ASan + UBSan, 10,000 sqlsmith queries, contrib/'s exporter
# queries, alert rules and dashboard in the real postgres_exporter and
# Prometheus, the SDK conformance check), the emulator's own tests, and
# the C unit tests with the replay of every fuzz corpus.  Each suite's
# result with its time in seconds.
#
# LANCELSM_PG_VERSIONS picks the versions (default "15 16 17 18 19"); the
# heavy suites run when 15 is among them.  LANCELSM_TEST_JOBS (default 3):
# how many jobs run side by side (see below).  LANCELSM_SKIP_CONFORMANCE=1
# skips the npm-based SDK check.  LANCELSM_PG16_SOURCE and
# LANCELSM_PG_CRON_SOURCE: paths of PostgreSQL 16's and pg_cron's source
# tarballs (relative ones from the repository's top directory).
#
# Side by side: the work runs as jobs, each with its output in a log of
# its own, printed whole when the job ends (interleaved output cannot be
# read), with the job's start and end in seconds from the start.  One
# at a time, from the start: the environments (15's copy of the tree,
# then each chroot and its copy: 17's, 16's (which compiles PostgreSQL,
# the longest to make), the others).
# Beside them at most LANCELSM_TEST_JOBS (default 3) of, in this order:
# the checks and unit tests; PostgreSQL 15; ASan and UBSan; the other
# heavy suites; then each other version once its environment is ready.
# What must not overlap does not: only version 15's job installs
# lancelsm into the host's PostgreSQL (the heavy suites build their own
# copies of the tree into scratch DESTDIRs), a chroot serves one version,
# every cluster listens on a Unix socket in a directory of its own and
# every other server on a port the kernel handed out, and
# scripts/package-test.sh takes a lock around the host's apt-get and dpkg.  At the end, each job's start and end, one
# result line per version, then the count of suites passed and failed.
#
# Per-version steps: version_steps below lists functions, each called as
# STEP N for every version N, on the host and in a chroot alike; a step
# added there runs on every version.  In a step, $vroot is the version's
# chroot ("" on the host), $vtree the path of a copy of the tree as seen
# from there (owned by postgres), $port the emulator's port; run commands
# there with in_version (as root) or as_postgres, and count a result with
# suite.  A step returns non-zero only when the next steps cannot run.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
key=lsm-test-key-2f9c41
versions=${LANCELSM_PG_VERSIONS:-15 16 17 18 19}
heavy_version=15
jobs_at_once=${LANCELSM_TEST_JOBS:-3}
# majors without a Debian pg_cron package: pg_cron is built from
# LANCELSM_PG_CRON_SOURCE there (scripts/pg-chroot.sh)
pg_cron_from_source="16 19"
# the sources' paths, absolute for scripts/pg-chroot.sh
for var in LANCELSM_PG16_SOURCE LANCELSM_PG_CRON_SOURCE; do
	case ${!var:-} in
		"" | /*) ;;
		*) export "$var=$here/${!var}" ;;
	esac
done
cflags="-Werror -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers"
[ "$(id -u)" = 0 ] || { echo "scripts/test.sh: run as root" >&2; exit 1; }
[[ $jobs_at_once =~ ^[1-9][0-9]*$ ]] || { echo "scripts/test.sh: LANCELSM_TEST_JOBS must be a positive number" >&2; exit 1; }
"$here/scripts/deps.sh" || exit 1

work=$(mktemp -d /tmp/lancelsm-test.XXXXXX)
chmod 755 "$work"
mkdir "$work/jobs"
: >"$work/tally"
declare -A job_class job_after job_cmd job_state job_start job_end job_of_pid
# cleanup: stop the jobs still running (when interrupted), the emulators,
# remove the chroots' copies of the tree and unmount the /proc each chroot
# was given (scripts/pg-chroot.sh mounts it); the jobs list both in
# $work/chroot-dirs and $work/chroot-roots
cleanup() {
	local pid dir root
	for pid in "${!job_of_pid[@]}"; do
		kill -- "-$pid" 2>/dev/null
	done
	for pid in "$work"/*/emulator.pid; do
		[ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null
	done
	wait 2>/dev/null
	while read -r dir; do rm -rf "$dir"; done < <(cat "$work/chroot-dirs" 2>/dev/null)
	while read -r root; do
		mountpoint -q "$root/proc" && umount "$root/proc"
	done < <(sort -u "$work/chroot-roots" 2>/dev/null)
}
trap cleanup EXIT

# suite NAME CMD...: CMD as one suite, its result and time printed and
# added to $work/tally (jobs run in subshells of their own); passed and
# failed count the current job's suites
passed=0 failed=0
suite() {
	local name=$1 rc; shift
	local start=$SECONDS
	echo "=== $name"
	"$@"
	rc=$?
	if [ $rc = 0 ]; then passed=$((passed + 1)); echo "=== $name: ok ($((SECONDS - start)) s)"
	else failed=$((failed + 1)); echo "=== $name: FAILED ($((SECONDS - start)) s)"; fi
	echo "$([ $rc = 0 ] && echo ok || echo FAILED) $name" >>"$work/tally"
	return $rc
}

# copy_tree DIR: the source tree, without build outputs
# (scripts/source-tar.sh), into DIR
copy_tree() {
	mkdir -p "$1" && "$here/scripts/source-tar.sh" | tar -C "$1" -xf -
}

# in_version CMD / as_postgres CMD: a shell command, as root or as the
# postgres user, where the current version's PostgreSQL is installed; where
# the test names resolve (scripts/with-names.sh) when the caller sets
# with_names
in_version() {
	local run=(bash -c "$1")
	[ -z "$vroot" ] || run=(chroot "$vroot" "${run[@]}")
	[ -z "${with_names:-}" ] || run=("$here/scripts/with-names.sh" "${vroot:-/}" "${run[@]}")
	"${run[@]}"
}
as_postgres() {
	in_version "su postgres -c $(printf %q "$1")"
}

pg_config_of() { echo "/usr/lib/postgresql/$1/bin/pg_config"; }

step_build() {
	local make="make -C '$vtree' -s PG_CONFIG=$(pg_config_of "$1")"
	suite "PostgreSQL $1: build" in_version \
		"$make clean && $make PG_CFLAGS='$cflags' && $make install"
}

# installcheck N ENV: pg_regress and TAP, where the test names resolve
# (t/net_by_name.pl), showing the regression diffs when they fail
installcheck() {
	local with_names=1
	as_postgres "cd '$vtree' && $2 scripts/lab.sh run $(pg_config_of "$1") '' 'make installcheck PG_CONFIG=$(pg_config_of "$1")'"
	local rc=$?
	[ $rc = 0 ] || head -300 "$vroot$vtree/regression.diffs" 2>/dev/null
	return $rc
}
step_installcheck() {
	local env="LANCELSM_EMULATOR_PORT=$port LANCELSM_EMULATOR_KEY=$key LANCELSM_REQUIRE_NAMES=1"
	# nginx and squid are on the host only (scripts/deps.sh): there the
	# edge and proxy tests must run, in the chroots they skip
	[ -z "$vroot" ] && env="$env LANCELSM_REQUIRE_NETWORK=1"
	if [[ " $pg_cron_from_source " == *" $1 "* ]] && [ -z "${LANCELSM_PG_CRON_SOURCE:-}" ]; then
		echo "=== PostgreSQL $1: the pg_cron tests are skipped: there is no postgresql-$1-cron package and LANCELSM_PG_CRON_SOURCE names no pg_cron source"
	else
		env="$env LANCELSM_REQUIRE_PG_CRON=1"
	fi
	suite "PostgreSQL $1: pg_regress and TAP" installcheck "$1" "$env"
	return 0
}

step_upgrade() {
	suite "PostgreSQL $1: upgrade 1.0 to current" as_postgres \
		"PG_CONFIG=$(pg_config_of "$1") '$vtree/test/upgrade/run.sh'"
	return 0
}

# the Debian package of version N, built, linted, installed, tested and
# purged in N's own environment
step_package() {
	if [ "$1" = 16 ]; then
		echo "=== PostgreSQL 16: the Debian package step is skipped: it builds with Debian's postgresql-server-dev-16, which no Debian release carries"
		return 0
	fi
	# the package's installcheck: pg_regress and two TAP files, as every
	# TAP file has just run against this version in step_installcheck
	suite "PostgreSQL $1: Debian package" env LANCELSM_PACKAGE_TAP="t/call_deadline.pl t/security_secrets.pl" \
		"$here/scripts/package-test.sh" "$1" ${vroot:+"$vroot"}
	return 0
}

# pg_upgrade_test FROM TO: lancelsm built and installed for FROM (from a
# copy of the tree of its own), then t/cluster_pg_upgrade.pl from FROM to TO
pg_upgrade_test() {
	local tree="$vtree-$1"
	local make="make -C '$tree' -s PG_CONFIG=$(pg_config_of "$1")"
	copy_tree "$vroot$tree" &&
		in_version "chown -R postgres: '$tree' && $make clean && $make PG_CFLAGS='$cflags' && $make install" &&
		as_postgres "cd '$vtree' && LANCELSM_UPGRADE_FROM=/usr/lib/postgresql/$1 make installcheck REGRESS= PROVE_TESTS=t/cluster_pg_upgrade.pl PG_CONFIG=$(pg_config_of "$2")"
}

# with 19: pg_upgrade from 18, which the chroot of 19 carries too
step_pg_upgrade() {
	[ "$1" = 19 ] || return 0
	suite "PostgreSQL 18 to $1: pg_upgrade" pg_upgrade_test 18 "$1"
	return 0
}

version_steps=(step_build step_installcheck step_upgrade step_pg_upgrade step_package)

# version_env N: set vroot and vtree for version N (its chroot, made or
# reused, and a fresh copy of the tree in it)
version_env() {
	if [ "$1" = 15 ]; then
		vroot="" vtree="$work/tree"
		copy_tree "$vtree" && chown -R postgres: "$vtree"
		return
	fi
	vroot=$("$here/scripts/pg-chroot.sh" "$1") || return 1
	echo "$vroot" >>"$work/chroot-roots"
	local dir
	dir=$(chroot "$vroot" mktemp -d /tmp/lancelsm-test.XXXXXX) || return 1
	echo "$vroot$dir" >>"$work/chroot-dirs"
	chmod 755 "$vroot$dir"
	vtree=$dir/tree
	copy_tree "$vroot$vtree" && chroot "$vroot" chown -R postgres: "$vtree"
}

# job_environment N: version N's environment, as one suite; leaves
# $work/env-N for N's job: the suite's exit status, its time, vroot and
# vtree, a line each
job_environment() {
	local start=$SECONDS rc
	suite "PostgreSQL $1: environment" version_env "$1"
	rc=$?
	printf '%s\n' $rc $((SECONDS - start)) "${vroot:-}" "${vtree:-}" >"$work/env-$1"
}

# job_version N: every step of version_steps for PostgreSQL N, in the
# environment job_environment made, against an emulator of its own;
# leaves N's result line in $work/result-N (its time includes the
# environment's)
job_version() {
	local v=$1 start=$SECONDS env_rc env_time step
	{ read -r env_rc && read -r env_time && read -r vroot && read -r vtree; } <"$work/env-$v"
	[ "$env_rc" = 0 ] || failed=1
	if [ "$failed" = 0 ]; then
		mkdir -p "$work/emulator-$v"
		if "$here/scripts/regress-emulator.sh" "$work/emulator-$v" "$key"; then
			port=$(cat "$work/emulator-$v/emulator.port")
			for step in "${version_steps[@]}"; do
				"$step" "$v" || break
			done
			kill "$(cat "$work/emulator-$v/emulator.pid")" 2>/dev/null
		else
			suite "PostgreSQL $v: emulator" false
		fi
	fi
	local took=$((env_time + SECONDS - start))
	if [ "$failed" = 0 ]; then
		echo "PostgreSQL $v: ok ($took s)" >"$work/result-$v"
	else
		echo "PostgreSQL $v: FAILED, $failed suite(s) ($took s)" >"$work/result-$v"
	fi
	echo "=== $(cat "$work/result-$v")"
}

job_checks() {
	suite "version consistency" "$here/scripts/check-version.sh"
	suite "documentation links" "$here/scripts/check-links.sh"
	suite "layer rules" "$here/scripts/check-layers.sh"
	suite "older libcurl headers" "$here/scripts/check-old-curl.sh"
	suite "emulator unit tests" python3 -m unittest discover -s "$here/emulator" -p 'test_*.py'
	# the C unit tests (decoders, redaction, pass-end predictor) and the
	# replay of every fuzz corpus, built outside the tree
	suite "C unit tests and fuzz corpora" "$here/test/unit/run.sh"
	# the alerting rules of contrib/prometheus against their unit tests
	# (promtool, from Debian's prometheus package: scripts/deps.sh)
	suite "Prometheus rules" promtool test rules "$here/contrib/prometheus/lancelsm-rules.test.yaml"
}

# The heavy suites, against the host's PostgreSQL 15, each job in a copy
# of the tree of its own: each builds lancelsm into a scratch DESTDIR
# that its servers read through Debian's extension_destdir, never over
# the installed one, which version 15's job installs and purges meanwhile
job_sanitizers() {
	copy_tree "$work/sanitize"
	suite "ASan and UBSan" make -C "$work/sanitize" -s sanitize-check
}

job_heavy() {
	local tree=$work/heavy
	copy_tree "$tree"
	# about 100 s; bounded by SQLSMITH_TIMEOUT (300 s by default)
	suite "sqlsmith, 10,000 queries" env SQLSMITH_BUILD=1 "$tree/scripts/sqlsmith.sh" 10000
	# the exporter queries, the alert rules and the Grafana dashboard of
	# contrib/ in the real postgres_exporter and Prometheus (about 30 s)
	suite "Prometheus and postgres_exporter" env MONITORING_BUILD=1 "$tree/test/monitoring/run.sh"
	if [ "${LANCELSM_SKIP_CONFORMANCE:-0}" != 1 ] && [ -x "$here/test/conformance/run.sh" ]; then
		suite "SDK conformance" "$here/test/conformance/run.sh"
	fi
}

# Jobs.  job ID CLASS AFTER FUNCTION [ARGS...] queues FUNCTION ARGS as
# job ID of CLASS ("environment": one at a time; "test":
# LANCELSM_TEST_JOBS at a time), to start once every job in AFTER (a
# space-separated list of IDs) has ended.  run_jobs starts the queued
# jobs in order as they may start, each in the background in a process
# group of its own with its output in $work/jobs/ID.log, and prints that
# log whole when the job ends.  A job's suites count themselves; a job
# that dies (a signal) counts as one failed suite, and so does one that
# never ends.
declare -A class_limit=([environment]=1 [test]=$jobs_at_once)
queue=()
job() {
	local id=$1 class=$2 after=$3
	shift 3
	queue+=("$id")
	job_class[$id]=$class job_after[$id]=$after job_state[$id]=queued
	job_cmd[$id]=$(printf '%q ' "$@")
}

# may_start ID: whether job ID's AFTER jobs have ended and its class has
# room
may_start() {
	local id=$1 other running=0
	for other in ${job_after[$id]}; do
		[ "${job_state[$other]:-}" = ended ] || return 1
	done
	for other in "${queue[@]}"; do
		[ "${job_state[$other]}" = running ] && [ "${job_class[$other]}" = "${job_class[$id]}" ] &&
			running=$((running + 1))
	done
	[ $running -lt "${class_limit[${job_class[$id]}]}" ]
}

# gone_job: the process of a running job that has ended without wait
# reporting it (killed with its parent), if any
gone_job() {
	local pid
	for pid in "${!job_of_pid[@]}"; do
		kill -0 "$pid" 2>/dev/null || { echo "$pid"; return 0; }
	done
	return 1
}

start_job() {
	local id=$1
	set -m
	# the job in a subshell of its own, so that one killed by a signal
	# ends its parent normally: bash forgets a job killed by a signal
	# between two waits
	{ (eval "${job_cmd[$id]}"; exit 0); exit $?; } </dev/null >"$work/jobs/$id.log" 2>&1 &
	set +m
	job_of_pid[$!]=$id job_state[$id]=running job_start[$id]=$SECONDS
	echo "=== job $id: started at $SECONDS s"
}

run_jobs() {
	local id pid rc
	while :; do
		for id in "${queue[@]}"; do
			[ "${job_state[$id]}" = queued ] && may_start "$id" && start_job "$id"
		done
		[ ${#job_of_pid[@]} = 0 ] && break
		pid=
		wait -n -p pid
		rc=$?
		[ -n "$pid" ] || pid=$(gone_job) || break
		id=${job_of_pid[$pid]}
		unset "job_of_pid[$pid]"
		job_state[$id]=ended job_end[$id]=$SECONDS
		echo "=== job $id: ended at $SECONDS s ($((SECONDS - job_start[$id])) s), its output:"
		cat "$work/jobs/$id.log"
		if [ $rc != 0 ]; then
			echo "=== job $id: died (exit status $rc)"
			echo "FAILED job $id" >>"$work/tally"
		fi
	done
	for id in "${queue[@]}"; do
		[ "${job_state[$id]}" = ended ] && continue
		echo "=== job $id: never ended (${job_state[$id]}; after: ${job_after[$id]:-nothing})"
		echo "FAILED job $id" >>"$work/tally"
	done
}

# the environments one at a time: 15's (a copy of the tree), 17's (a
# chroot from packages, ready for the first free slot), then 16's, which
# compiles PostgreSQL and is the longest to make, then the others; each
# version once its own is made
env_first="15 17 16"
env_order=$(for v in $env_first; do [[ " $versions " != *" $v "* ]] || echo "$v"; done
	for v in $versions; do [[ " $env_first " == *" $v "* ]] || echo "$v"; done)
job checks test "" job_checks
for v in $env_order; do
	if [ "$v" = 16 ] && [ -z "${LANCELSM_PG16_SOURCE:-}" ]; then
		echo "PostgreSQL 16: skipped: no Debian release carries it and LANCELSM_PG16_SOURCE names no source tarball to build it from" >"$work/result-16"
		echo "=== $(cat "$work/result-16")"
		continue
	fi
	job "environment-$v" environment "" job_environment "$v"
	job "postgresql-$v" test "environment-$v" job_version "$v"
	# the heavy suites need no environment: after 15's all the same, so
	# that 15's job, which is long, starts first
	if [ "$v" = "$heavy_version" ]; then
		job sanitizers test "environment-$v" job_sanitizers
		job heavy-suites test "environment-$v" job_heavy
	fi
done
[[ " $versions " == *" $heavy_version "* ]] ||
	echo "=== heavy suites skipped: they run with PostgreSQL $heavy_version, not in LANCELSM_PG_VERSIONS=\"$versions\""
run_jobs

for id in "${queue[@]}"; do
	[ -z "${job_end[$id]:-}" ] ||
		echo "=== job $id: from $((job_start[$id])) s to $((job_end[$id])) s"
done
for v in $versions; do
	cat "$work/result-$v" 2>/dev/null
done
passed=$(grep -c '^ok ' "$work/tally")
failed=$(grep -c '^FAILED ' "$work/tally")
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
