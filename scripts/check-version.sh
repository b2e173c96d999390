#!/usr/bin/env bash
# The version lives in lancelsm.control; META.json and debian/changelog
# (its newest entry's upstream part) must follow it, and an update path of
# SQL scripts must lead from 1.0 to it.
set -euo pipefail
cd "$(dirname "$0")/.."
control=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" lancelsm.control)
meta=$(python3 -c 'import json; m = json.load(open("META.json")); print(m["version"], m["provides"]["lancelsm"]["version"])')
for v in $meta; do
	[ "$v" = "$control.0" ] || { echo "META.json says $v, lancelsm.control says $control"; exit 1; }
done
deb=$(sed -n '1s/^lancelsm (\(.*\)).*/\1/p' debian/changelog)
upstream=${deb#*:}
upstream=${upstream%-*}
[ "$upstream" = "$control.0" ] ||
	{ echo "debian/changelog says $deb, lancelsm.control says $control"; exit 1; }
v=1.0
while [ "$v" != "$control" ]; do
	next=$(ls sql/lancelsm--"$v"--*.sql 2>/dev/null | sed -n 's/.*--\(.*\)\.sql/\1/p' | head -1)
	[ -n "$next" ] || { echo "no update script from $v towards $control"; exit 1; }
	v=$next
done
for f in sql/lancelsm--*.sql; do
	head -5 "$f" | grep -q '^\\echo Use ".*" to load this file\. \\quit' ||
		{ echo "$f lacks the \\echo ... \\quit guard"; exit 1; }
done
echo "version $control: control, META.json, debian/changelog ($deb) and the update path agree"
