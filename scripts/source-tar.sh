#!/usr/bin/env bash
# scripts/source-tar.sh: the source tree, as a tar archive on stdout, never
# with build outputs: objects a build for one PostgreSQL major left in the
# tree look up to date to PGXS in a copy built for another, and get linked.
# In a git checkout, the files git lists (tracked, and new ones it does not
# ignore), as they are in the working tree; without git, everything but
# .git, node_modules and the build outputs .gitignore names.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
if git -c safe.directory="$here" rev-parse --git-dir >/dev/null 2>&1; then
	git -c safe.directory="$here" ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done |
		tar --null -T - -cf -
else
	tar --exclude=.git --exclude=node_modules --exclude=__pycache__ \
		--exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude=.deps \
		--exclude=./results --exclude=./tmp_check --exclude=./log \
		--exclude=./regression.diffs --exclude=./regression.out \
		--exclude=./fuzz/build -cf - .
fi
