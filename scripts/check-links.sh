#!/bin/bash
# scripts/check-links.sh: every relative link of the project's markdown
# resolves.  Checks README.md, CHANGELOG.md (if present), docs/*.md,
# bench/*.md, emulator/README.md and src/*/README.md: each inline link
# [text](target) and reference definition [name]: target that is not a URL
# (http:, https:, mailto:) must name a file or folder of the tree, and its
# #anchor, if any, a heading of that markdown file (GitHub's slugs: lower
# case, punctuation dropped, spaces to '-', a repeated heading suffixed
# -1, -2, ...).  Links inside code (fenced blocks, indented blocks, `spans`)
# are not links and are skipped.  Prints each broken link as
# FILE:LINE: TARGET (why) and exits 1 if there is any, or if README.md
# is over 16,000 bytes (a short entry page); run by scripts/test.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

files=(README.md)
[ -f CHANGELOG.md ] && files+=(CHANGELOG.md)
for f in docs/*.md bench/*.md emulator/README.md src/*/README.md; do
	[ -f "$f" ] && files+=("$f")
done

exec python3 - "${files[@]}" <<'EOF'
import os
import re
import sys
import unicodedata

FENCE = re.compile(r'^ {0,3}(`{3,}|~{3,})')
HEADING = re.compile(r'^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
INLINE = re.compile(r'\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)')
REFDEF = re.compile(r'^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$')


def lines_outside_code(path):
    """(line number, text) of each line not in a fenced or indented block."""
    out = []
    fence = None
    prev_blank = True
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            m = FENCE.match(line)
            if fence:
                if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                    fence = None
                continue
            if m:
                fence = m.group(1)
                continue
            if prev_blank and line.startswith('    ') and not re.match(r'\s*([-*+]|\d+\.|\|)', line):
                # an indented code block (not a list continuation or table)
                continue
            prev_blank = line.strip() == ''
            out.append((n, line))
    return out


def slug(text):
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)    # a link: its text
    text = text.strip().lower()
    text = ''.join(c for c in text
                   if c in ' -_' or unicodedata.category(c)[0] in 'LNM')
    return text.replace(' ', '-')


anchor_cache = {}


def anchors(path):
    if path not in anchor_cache:
        seen = {}
        found = set()
        for _, line in lines_outside_code(path):
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            if s in seen:
                seen[s] += 1
                s = '%s-%d' % (s, seen[s])
            else:
                seen[s] = 0
            found.add(s)
        anchor_cache[path] = found
    return anchor_cache[path]


broken = []
checked = 0
for src in sys.argv[1:]:
    for n, line in lines_outside_code(src):
        line = re.sub(r'(`+).*?\1', '', line)       # code spans hold no links
        targets = [m.group(2) for m in INLINE.finditer(line)]
        m = REFDEF.match(line)
        if m:
            targets.append(m.group(1))
        for t in targets:
            if re.match(r'[a-z][a-z0-9+.-]*:', t, re.I):
                continue                              # a URL
            checked += 1
            path, _, frag = t.partition('#')
            if path:
                target = os.path.normpath(os.path.join(os.path.dirname(src), path))
                if not os.path.exists(target):
                    broken.append('%s:%d: %s (no such file)' % (src, n, t))
                    continue
            else:
                target = src
            if frag:
                if not target.endswith('.md') or os.path.isdir(target):
                    broken.append('%s:%d: %s (an anchor into a non-markdown file)' % (src, n, t))
                elif frag not in anchors(target):
                    broken.append('%s:%d: %s (no heading #%s in %s)' % (src, n, t, frag, target))

# the README stays a short entry page: the rest lives under docs/
readme = os.path.getsize('README.md')
if readme > 16000:
    broken.append('README.md: %d bytes, more than 16,000: move detail into docs/' % readme)
for b in broken:
    print(b)
print('check-links: %d files, %d relative links, %d broken'
      % (len(sys.argv) - 1, checked, len(broken)))
sys.exit(1 if broken else 0)
EOF
