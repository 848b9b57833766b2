#!/usr/bin/env python3
"""Extracts the shell blocks of Markdown files for tests/integration/docs_commands.sh.

Usage: doc_blocks.py OUTDIR FILE.md...

Every fenced block whose info string is `sh`, `bash` or `shell` becomes OUTDIR/NNN.sh, with a line
in OUTDIR/index.tsv: "NNN<TAB>kind<TAB>file:line<TAB>first command". kind is "cluster" when one of
the two non-blank lines before the fence is the marker <!-- needs a cluster -->, else "local".
Prints the number of blocks. Blocks in other languages (yaml, plain ```) are not commands.
"""

import os
import re
import sys

FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([A-Za-z0-9_+-]*)")
MARKER = "<!-- needs a cluster -->"
SHELLS = {"sh", "bash", "shell"}


def blocks(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(2), m.group(3).lower()
        start = i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1
        if lang not in SHELLS:
            continue
        before = [l.strip() for l in lines[max(0, start - 3):start] if l.strip()][-2:]
        kind = "cluster" if MARKER in before else "local"
        yield start + 1, kind, body


def first_command(body):
    for line in body:
        s = line.strip()
        if s and not s.startswith("#"):
            return s.rstrip("\\").strip()
    return ""


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    out = argv[0]
    os.makedirs(out, exist_ok=True)
    n = 0
    with open(os.path.join(out, "index.tsv"), "w", encoding="utf-8") as idx:
        for path in argv[1:]:
            for line, kind, body in blocks(path):
                n += 1
                name = "%03d" % n
                with open(os.path.join(out, name + ".sh"), "w", encoding="utf-8") as f:
                    f.write("\n".join(body) + "\n")
                idx.write("%s\t%s\t%s:%d\t%s\n" % (name, kind, os.path.basename(path), line,
                                                    first_command(body)))
    print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
