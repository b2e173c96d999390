#!/usr/bin/env bash
# The version lives in lancelsm.control (default_version X.Y); META.json
# (its version, provides' version and file, and the release fields),
# debian/changelog (its newest entry, X.Y.Z-N), CHANGELOG.md (its newest
# heading, "## X.Y.Z — YYYY-MM-DD") and debian/watch (the vX.Y.Z tags)
# must follow it, and an update path of SQL scripts must lead from 1.0 to
# it.  The scheme: docs/development.md, "Releases".
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "check-version: $*"; exit 1; }

control=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" lancelsm.control)
[[ $control =~ ^[0-9]+\.[0-9]+$ ]] || fail "lancelsm.control's default_version '$control' is not X.Y"

# META.json: one release version X.Y.Z of the control's X.Y, the file it
# provides present, and the fields PGXN shows
release=$(python3 - "$control" <<'EOF'
import json
import os
import re
import sys

control = sys.argv[1]
m = json.load(open("META.json"))
p = m["provides"]["lancelsm"]
problems = []
if m["version"] != p["version"]:
    problems.append("version %s but provides.lancelsm.version %s" % (m["version"], p["version"]))
if not re.fullmatch(re.escape(control) + r"\.\d+", m["version"]):
    problems.append("version %s is not %s.Z (lancelsm.control)" % (m["version"], control))
f = p.get("file", "")
if not os.path.isfile(f):
    problems.append("provides.lancelsm.file %r is no file" % f)
elif f != "lancelsm.control" and not re.search(r"--%s\.sql$" % re.escape(control), f):
    problems.append("provides.lancelsm.file %s is neither lancelsm.control nor a script of %s" % (f, control))
if not os.path.isfile(p.get("docfile", "")):
    problems.append("provides.lancelsm.docfile %r is no file" % p.get("docfile"))
if m.get("release_status") not in ("stable", "testing", "unstable"):
    problems.append("release_status %r" % m.get("release_status"))
r = m.get("resources", {})
for key, val in (("homepage", r.get("homepage")),
                 ("bugtracker.web", r.get("bugtracker", {}).get("web")),
                 ("repository.url", r.get("repository", {}).get("url"))):
    if not (val or "").startswith("https://"):
        problems.append("resources.%s %r is not an https URL" % (key, val))
if "pg_cron" not in m.get("prereqs", {}).get("runtime", {}).get("recommends", {}):
    problems.append("prereqs.runtime.recommends names no pg_cron")
for p in problems:
    print("META.json: " + p, file=sys.stderr)
print(m["version"])
sys.exit(1 if problems else 0)
EOF
) || fail "META.json disagrees (above)"

# debian/changelog: the newest entry is the release, revision -N
deb=$(sed -n '1s/^lancelsm (\(.*\)).*/\1/p' debian/changelog)
upstream=${deb#*:}
revision=${upstream##*-}
upstream=${upstream%-*}
[ "$upstream" = "$release" ] ||
	fail "debian/changelog says $deb, META.json $release"
[[ $revision =~ ^[0-9]+$ ]] || fail "debian/changelog's revision '$revision' is not a number"

# CHANGELOG.md: the newest version heading is the release, with a date
newest=$(sed -n 's/^## \([0-9][0-9.]*\) — \([0-9]\{4\}-[0-9]\{2\}-[0-9]\{2\}\)$/\1/p' CHANGELOG.md | head -1)
[ "$newest" = "$release" ] ||
	fail "CHANGELOG.md's newest '## X.Y.Z — YYYY-MM-DD' heading is '$newest', META.json says $release"

# debian/watch: version 4, looking for vX.Y.Z tags
[ "$(sed -n 's/^version=\([0-9]*\)$/\1/p' debian/watch)" = 4 ] || fail "debian/watch is not version=4"
grep -q '/tags ' debian/watch && grep -q 'v(' debian/watch ||
	fail "debian/watch does not look for the vX.Y.Z tags"

v=1.0
while [ "$v" != "$control" ]; do
	next=$(ls sql/lancelsm--"$v"--*.sql 2>/dev/null | sed -n 's/.*--\(.*\)\.sql/\1/p' | head -1)
	[ -n "$next" ] || fail "no update script from $v towards $control"
	v=$next
done
for f in sql/lancelsm--*.sql; do
	head -5 "$f" | grep -q '^\\echo Use ".*" to load this file\. \\quit' ||
		fail "$f lacks the \\echo ... \\quit guard"
done
echo "version $release (SQL $control): control, META.json, debian/changelog ($deb), CHANGELOG.md, debian/watch and the update path agree"
