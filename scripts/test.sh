#!/usr/bin/env bash
# The test command (README.md): on a fresh Debian 12 machine, as root,
# installs what it needs, builds lancelsm with -Werror, starts the emulator,
# runs pg_regress and TAP in a throwaway cluster (pg_virtualenv, as the
# postgres user), the emulator's own tests, the decoder tests and the SDK
# conformance check, then stops what it started.
# Set LANCELSM_SKIP_CONFORMANCE=1 to skip the npm-based SDK check.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
key=lsm-test-key-2f9c41
[ "$(id -u)" = 0 ] || { echo "scripts/test.sh: run as root" >&2; exit 1; }
"$here/scripts/deps.sh" || exit 1

work=$(mktemp -d /tmp/lancelsm-test.XXXXXX)
chmod 755 "$work"
cleanup() {
	[ -f "$work/emulator.pid" ] && kill "$(cat "$work/emulator.pid")" 2>/dev/null
	wait 2>/dev/null
}
trap cleanup EXIT

# pg_regress and TAP run as postgres: they get their own copy of the tree
tar -C "$here" --exclude=node_modules --exclude=.git -cf - . | (mkdir "$work/tree" && tar -C "$work/tree" -xf -)
chown -R postgres: "$work/tree"

passed=0 failed=0
suite() {
	local name=$1; shift
	echo "=== $name"
	if "$@"; then passed=$((passed + 1)); echo "=== $name: ok"
	else failed=$((failed + 1)); echo "=== $name: FAILED"; fi
}

build() {
	make -C "$work/tree" -s clean &&
	make -C "$work/tree" -s PG_CFLAGS="-Werror -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers" &&
	make -C "$work/tree" -s install
}
suite build build || { echo "0 passed, 1 failed"; exit 1; }
suite "version consistency" "$here/scripts/check-version.sh"

"$here/scripts/regress-emulator.sh" "$work" "$key" || exit 1
port=$(cat "$work/emulator.port")

installcheck() {
	su postgres -c "cd '$work/tree' && LANCELSM_EMULATOR_PORT=$port LANCELSM_EMULATOR_KEY=$key pg_virtualenv -v 15 make installcheck"
	local rc=$?
	[ $rc = 0 ] || cat "$work/tree/regression.diffs" 2>/dev/null | head -300
	return $rc
}
suite "pg_regress and TAP" installcheck
suite "upgrade 1.0 to 1.1" su postgres -c "$work/tree/test/upgrade/run.sh"
suite "ASan and UBSan" make -C "$work/tree" -s sanitize-check
suite "emulator unit tests" python3 -m unittest discover -s "$here/emulator" -p 'test_*.py'
[ -f "$here/fuzz/Makefile" ] && suite "decoder tests" make -C "$work/tree/fuzz" -s test
if [ "${LANCELSM_SKIP_CONFORMANCE:-0}" != 1 ] && [ -x "$here/test/conformance/run.sh" ]; then
	suite "SDK conformance" "$here/test/conformance/run.sh"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
