#!/bin/bash
# scripts/check-layers.sh: the rules of src/'s layers, checked from the
# #include lines (bash, grep and awk; well under a second).
#
# src/ stacks, from the top: the module entry lancelsm.c, then the folders
# functions/, task/, record/, protocol/, net/, then the other root files
# (settings, deadline, pg_compat.h).  The rules:
#   1. a header of a folder is included by its folder path ("net/net.h"),
#      a root header by its bare name;
#   2. no file includes a header of a layer above its own;
#   3. across folders only the face header <folder>/<folder>.h is included;
#      the other headers of a folder are private to it;
#   4. PG_FUNCTION_INFO_V1 and funcapi.h only in functions/, jansson only
#      in protocol/, libcurl only in net/;
#   5. base names are unique across folders (PGXS keeps its dependency
#      files by base name);
#   6. no two files depend on each other: no cycle of header includes, and
#      no two .c files each including the other's private header;
#   7. docs/development.md's "Layout" section names every file of src/.
# Prints each breach and a summary (files, include lines, depth of the
# include graph); exits 1 on any breach.  There are no exceptions.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here/src"

files=$(find . -name '*.[ch]' | sed 's|^\./||' | LC_ALL=C sort)

# file<TAB>included name, one line per project-relevant #include "..."
includes=$(for f in $files; do
	awk -v f="$f" 'match($0, /^[ \t]*#[ \t]*include[ \t]*"[^"]+"/) {
		s = substr($0, RSTART, RLENGTH); sub(/^[^"]*"/, "", s); sub(/"$/, "", s)
		print f "\t" s }' "$f"
done)
# the same for <...> includes (libraries)
system_includes=$(for f in $files; do
	awk -v f="$f" 'match($0, /^[ \t]*#[ \t]*include[ \t]*<[^>]+>/) {
		s = substr($0, RSTART, RLENGTH); sub(/^[^<]*</, "", s); sub(/>$/, "", s)
		print f "\t" s }' "$f"
done)

printf '%s\n' "$files" >"${TMPDIR:-/tmp}/check-layers.$$.files"
trap 'rm -f "${TMPDIR:-/tmp}/check-layers.$$".*' EXIT

# rules 1-3 and 6 (header cycles), and the graph's depth
summary=$( { printf '%s\n' "$includes"; } | awk -F'\t' \
	-v filelist="${TMPDIR:-/tmp}/check-layers.$$.files" '
function folder(p) { return index(p, "/") ? substr(p, 1, index(p, "/") - 1) : "" }
function base(p) { sub(/.*\//, "", p); return p }
function rank(p,   d) {
	if (p == "lancelsm.c") return 6
	d = folder(p)
	if (d == "functions") return 5
	if (d == "task") return 4
	if (d == "record") return 3
	if (d == "protocol") return 2
	if (d == "net") return 1
	return 0
}
function depth(p,   i, d, best) {
	if (p in memo) return memo[p]
	if (p in onstack) { cycle[p] = 1; return 0 }
	onstack[p] = 1; best = 0
	for (i = 1; i <= nout[p]; i++) {
		d = 1 + depth(out[p, i])
		if (d > best) best = d
	}
	delete onstack[p]
	memo[p] = best
	return best
}
BEGIN {
	while ((getline line < filelist) > 0) { known[line] = 1; byname[base(line)] = byname[base(line)] " " line }
	bad = 0
}
{
	f = $1; h = $2
	if (h in known) target = h
	else if (base(h) in byname && h == base(h)) {
		# a bare name that is a folder header: rule 1
		target = substr(byname[base(h)], 2)
		if (folder(target) != "") {
			printf "check-layers: %s includes \"%s\": include it by its folder path (\"%s\")\n", f, h, target
			bad = 1
		}
	} else next
	nlines++
	nout[f]++; out[f, nout[f]] = target
	if (rank(target) > rank(f)) {
		printf "check-layers: %s includes %s, a header of a layer above its own\n", f, target
		bad = 1
	}
	tf = folder(target)
	if (tf != "" && tf != folder(f) && base(target) != tf ".h") {
		printf "check-layers: %s includes %s, private to %s/ (include %s/%s.h)\n", f, target, tf, tf, tf
		bad = 1
	}
}
END {
	maxd = 0
	for (f in known) { d = depth(f); if (d > maxd) maxd = d }
	for (p in cycle) { printf "check-layers: %s is part of a cycle of header includes\n", p; bad = 1 }
	printf "%d %d %d\n", nlines, maxd, bad
}')
read -r nlines maxdepth bad <<<"$(tail -n 1 <<<"$summary")"
head -n -1 <<<"$summary" | grep . || true

breach() { echo "check-layers: $*"; bad=1; }

# rule 4: what only one folder may use
for f in $files; do
	d=${f%%/*}; [ "$d" = "$f" ] && d=""
	if grep -q 'PG_FUNCTION_INFO_V1' "$f" && [ "$d" != functions ]; then
		breach "$f uses PG_FUNCTION_INFO_V1: SQL functions live in functions/"
	fi
done
while IFS=$'\t' read -r f h; do
	[ -n "$f" ] || continue
	d=${f%%/*}; [ "$d" = "$f" ] && d=""
	case "$h" in
	funcapi.h) [ "$d" = functions ] ||
		breach "$f includes funcapi.h: only functions/ may" ;;
	esac
done <<<"$includes"
while IFS=$'\t' read -r f h; do
	[ -n "$f" ] || continue
	d=${f%%/*}; [ "$d" = "$f" ] && d=""
	case "$h" in
	jansson.h) [ "$d" = protocol ] || breach "$f includes jansson.h: only protocol/ may" ;;
	curl/*) [ "$d" = net ] || breach "$f includes <$h>: only net/ may" ;;
	esac
done <<<"$system_includes"

# rule 5: unique base names across folders
dups=$(for f in $files; do basename "$f"; done | sort | uniq -d)
for b in $dups; do
	breach "base name $b is used more than once: $(grep -E "(^|/)$b\$" <<<"$files" | tr '\n' ' ')"
done

# rule 6: two .c files that include each other's private header
while IFS=$'\t' read -r f h; do
	case "$f" in *.c) ;; *) continue ;; esac
	other=${h%.h}.c
	if [ "$other" != "$f" ] && [ -f "$other" ] &&
		grep -qxF "$other"$'\t'"${f%.c}.h" <<<"$includes"; then
		breach "$f and $other include each other's header: they call each other"
	fi
done <<<"$includes"

# rule 7: docs/development.md's Layout names every file of src/
layout=$(awk '/^## Layout/ { on = 1; next } /^## / { on = 0 } on' "$here/docs/development.md")
[ -n "$layout" ] || breach "docs/development.md has no \"## Layout\" section"
for f in $files; do
	grep -qF "src/$f" <<<"$layout" || breach "docs/development.md's Layout does not name src/$f"
done

echo "check-layers: $(wc -l <<<"$files") files, $nlines project include lines, include graph $maxdepth deep"
if [ "$bad" != 0 ]; then
	echo "check-layers: FAILED"
	exit 1
fi
echo "check-layers: ok"
