#!/usr/bin/env bash
# test/pace/run.sh: build and run the unit tests of src/task/pace.c (the pass
# end predictor) against the server headers of PG_CONFIG (default
# pg_config); exits non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pg_config=${PG_CONFIG:-pg_config}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
${CC:-cc} -Wall -Werror -Wmissing-prototypes -O1 -I"$root/src" \
	-I"$("$pg_config" --includedir-server)" \
	-o "$out/test_pace" "$here/test_pace.c" "$root/src/task/pace.c"
"$out/test_pace"
