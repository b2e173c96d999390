#!/usr/bin/env bash
# test/unit/run.sh: the C unit tests (test/unit/: decoders, the secrets'
# matcher, the pass-end predictor) and the replay of every fuzz corpus
# (fuzz/corpus/), built in a temporary directory against PG_CONFIG's
# PostgreSQL (default: pg_config); nothing is written into the tree.
# Exits non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d /tmp/lancelsm-unit.XXXXXX)
trap 'rm -rf "$out"' EXIT
make -C "$here" -s test PG_CONFIG="${PG_CONFIG:-pg_config}" BUILD="$out"
