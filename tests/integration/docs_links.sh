#!/usr/bin/env bash
# Every relative link in README.md and docs/*.md points at a file that exists, and every
# #anchor into README.md or docs/*.md at a heading of that file (GitHub's slugs: lower case,
# punctuation dropped, spaces to hyphens). Anchors into other files (bench/RESULTS.md, written by
# the benchmarks) are not checked, only that the file exists.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null || { echo "python3 is missing (scripts/install-deps.sh test)"; exit 1; }
python3 - "$ROOT" <<'PY'
import os, re, sys
root = sys.argv[1]
files = [os.path.join(root, "README.md")] + sorted(
    os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))

def slugs(path):
    out, seen = set(), {}
    in_code = False
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else "%s-%d" % (s, n))
    return out

bad, checked = [], 0
for f in files:
    text = open(f, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue
        checked += 1
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        rel = os.path.relpath(f, root)
        if not os.path.exists(dest):
            bad.append("%s: %s: no such file" % (rel, target))
        elif anchor and dest in files and anchor not in slugs(dest):
            bad.append("%s: %s: no heading #%s in %s" % (rel, target, anchor, os.path.relpath(dest, root)))
for b in bad:
    print("FAIL " + b)
print("%d links checked in %d files, %d broken" % (checked, len(files), len(bad)))
sys.exit(1 if bad else 0)
PY
