#!/bin/bash
# scripts/check-layers.sh: the rules of src/'s layers, checked from the
# #include lines and from the calls between files, and the folders' maps
# (bash, grep, awk and nm; it builds the objects it reads in a temporary
# copy of the tree, unoptimised, about 10 s of CPU on two cores).
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
#   7. docs/development.md's "Layout" section names every file of src/;
#   8. no file calls a function (or reads a variable) of a file of a layer
#      above its own, read from the objects' symbols: each undefined
#      symbol of an object (nm) resolved to the object that defines it;
#   9. no circle of calls: between files (a.c calls b.c, which calls back
#      into a.c, directly or round a longer loop) nor between folders;
#  10. every folder of src/ has a README.md, and every README.md of a
#      folder (src/*/, t/, bench/, emulator/, and any other that has one)
#      names every file directly in it.
# Prints each breach and a summary (files, include lines, depth of the
# include graph, calls between files, depth of the call graph); exits 1 on
# any breach.  There are no exceptions.  PG_CONFIG names the pg_config to
# build with (default: pg_config).
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
trap 'rm -rf "${TMPDIR:-/tmp}/check-layers.$$".*' EXIT

# the layers, from the top (for the include and the call rules): a file's
# folder ("" for the root files) and its rank
layers_awk='
function folder(p) { return index(p, "/") ? substr(p, 1, index(p, "/") - 1) : "" }
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
'

# rules 1-3 and 6 (header cycles), and the graph's depth
summary=$( { printf '%s\n' "$includes"; } | awk -F'\t' \
	-v filelist="${TMPDIR:-/tmp}/check-layers.$$.files" "$layers_awk"'
function base(p) { sub(/.*\//, "", p); return p }
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

# rules 8 and 9: the calls between files, from the symbols of objects built
# unoptimised (no call is inlined away) in a copy of the tree's sources
build="${TMPDIR:-/tmp}/check-layers.$$.build"
mkdir -p "$build"
"$here/scripts/source-tar.sh" | tar -C "$build" -xf -
objects=$(for f in $files; do case "$f" in *.c) echo "src/${f%.c}.o" ;; esac; done)
# shellcheck disable=SC2086 # one target per object
if ! make -C "$build" -s -j"$(nproc)" PG_CONFIG="${PG_CONFIG:-pg_config}" \
	PG_CFLAGS="-O0 -g0 -w" $objects >"$build/build.log" 2>&1; then
	cat "$build/build.log"
	breach "the objects could not be built: no call was checked"
fi
# file<TAB>U|D<TAB>symbol: what each object needs, and what it defines
symbols=$(cd "$build/src" && for f in $files; do
	case "$f" in *.c) ;; *) continue ;; esac
	[ -f "${f%.c}.o" ] || continue
	nm -g "${f%.c}.o" | awk -v f="$f" '
		NF == 2 && $1 == "U" { print f "\tU\t" $2 }
		NF == 3 && $2 ~ /^[TDBRGSVW]$/ { print f "\tD\t" $3 }'
done)
calls=$(printf '%s\n' "$symbols" | awk -F'\t' "$layers_awk"'
# the folder of p for the circles between folders: the module entry and
# the root files below every folder are two rooms of their own
function room(p) {
	if (p == "lancelsm.c") return p
	return folder(p) == "" ? "(root files)" : folder(p) "/"
}
# a depth-first walk of graph g (nodes in gn, edges g[u, i] for i up to
# gc[u]), printing each circle it closes once; returns the depth below u
function walk(u, label,   i, v, d, best, k, path) {
	if (u in done) return done[u]
	state[u] = 1; stack[++top] = u; best = 0
	for (i = 1; i <= gc[u]; i++) {
		v = g[u, i]
		if (state[v] == 1) {
			path = v
			for (k = top; k >= 1 && stack[k] != v; k--) ;
			for (k++; k <= top; k++) path = path " -> " stack[k]
			printf "check-layers: a circle of calls between %s: %s -> %s\n", label, path, v
			circles++
			continue
		}
		d = 1 + walk(v, label)
		if (d > best) best = d
	}
	top--; state[u] = 2; done[u] = best
	return best
}
$2 == "D" { def[$3] = $1; next }
$2 == "U" { need[++n] = $1 "\t" $3 }
END {
	for (i = 1; i <= n; i++) {
		split(need[i], p, "\t"); f = p[1]; s = p[2]
		if (!(s in def) || def[s] == f) continue
		t = def[s]
		if (!((f, t) in edge)) {
			edge[f, t] = s; nedges++
			gc[f]++; g[f, gc[f]] = t; gn[f] = 1; gn[t] = 1
			if (rank(t) > rank(f))
				printf "check-layers: %s calls %s of %s, a file of a layer above its own\n", f, s, t
		}
		a = room(f); b = room(t)
		if (a != b && !((a, b) in fedge)) {
			fedge[a, b] = 1; fc[a]++; fg[a, fc[a]] = b; fn[a] = 1
		}
	}
	maxd = 0
	for (u in gn) { d = walk(u, "files"); if (d > maxd) maxd = d }
	filecircles = circles
	split("", state); split("", done); split("", g); split("", gc); top = 0
	for (u in fn) for (i = 1; i <= fc[u]; i++) { gc[u]++; g[u, gc[u]] = fg[u, i] }
	for (u in fn) walk(u, "folders")
	printf "%d %d %d\n", nedges, maxd, circles
}')
read -r ncalls calldepth ncircles <<<"$(tail -n 1 <<<"$calls")"
head -n -1 <<<"$calls" | grep . && bad=1
if [ -z "$symbols" ] || [ "${ncalls:-0}" = 0 ]; then
	breach "no call between files was read from the objects' symbols"
fi

# rule 10: every folder's README names every file in it
listed() {	# listed DIR: the files directly in DIR, tracked or new
	if git -C "$here" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$here" ls-files --cached --others --exclude-standard -- "$1" |
			awk -v d="$1/" 'index($0, d) == 1 && index(substr($0, length(d) + 1), "/") == 0'
	else
		find "$here/$1" -maxdepth 1 -type f | sed "s|^$here/||"
	fi
}
readme_dirs=$( (for f in $files; do case "$f" in */*) echo "src/${f%%/*}" ;; esac; done
	cd "$here" && find . -mindepth 2 -name README.md -not -path './.git/*' \
		-not -path '*/node_modules/*' | sed 's|^\./||; s|/README.md$||') | LC_ALL=C sort -u)
for d in $readme_dirs; do
	if [ ! -f "$here/$d/README.md" ]; then
		breach "$d/ has no README.md"
		continue
	fi
	for f in $(listed "$d"); do
		b=${f##*/}
		case "$b" in README.md | .*) continue ;; esac
		grep -qE "(^|[^A-Za-z0-9_.-])$(sed 's/[.]/[.]/g' <<<"$b")([^A-Za-z0-9_-]|$)" "$here/$d/README.md" ||
			breach "$d/README.md does not name $b"
	done
done

echo "check-layers: $(wc -l <<<"$files") files, $nlines project include lines, include graph $maxdepth deep"
echo "check-layers: $ncalls calls between files, call graph $calldepth deep, $ncircles circles"
if [ "$bad" != 0 ]; then
	echo "check-layers: FAILED"
	exit 1
fi
echo "check-layers: ok"
