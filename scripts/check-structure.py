#!/usr/bin/env python3
"""The structure figures of issue 15, printed and enforced (scripts/check-structure.sh runs this).

Usage: check-structure.py [ROOT]   (default: the repository; ROOT/src is checked)

Four checks, each printing its figure; the exit status is 1 when any fails:
  size     every src/ file over MAX_LINES lines carries its reason in its opening comment: a line
           of the first comment block containing "Size:" (e.g. "Size: one state machine, ...").
  layers   no #include "layer/..." of a higher layer (core < profile < load < sweep < advise <
           output < local,kube < operator < cli; local and kube are one rank and may not include
           each other). main.c is the top.
  clock    CLOCK_MONOTONIC is named only in src/core.
  cjson    no unchecked cJSON result: a call to cJSON_Add*/cJSON_Create* whose value is thrown
           away, i.e. the call is the whole expression statement (alone, or after an if/else/for/
           while head). A result that is assigned, tested, returned or passed as an argument
           counts as checked; the builder src/core/jb.h records every failure of its own calls.
  long     functions over LONG_FUNC_LINES lines, counted from the first line of the signature to
           the closing brace (clang-format puts a function's braces alone in column 0, and only a
           function's), at most LONG_FUNCS_MAX of them: the figure may only go down. A parser may
           stay long, with its reason in the comment above it.
"""
import os
import re
import sys

MAX_LINES = 800
LONG_FUNC_LINES = 80
# 32 when this figure was first counted (2026-12-03, main af1a076); 17 once the rooms outside
# src/advise and src/output split theirs: 9 parsers, long with their reason above them, and 8 in
# src/advise, src/output and cli/cmd_sweep.c (issue 30's other half). Lower it as they split.
LONG_FUNCS_MAX = 9
RANK = {"core": 0, "profile": 1, "load": 2, "sweep": 3, "advise": 4, "output": 5,
        "local": 6, "kube": 6, "operator": 7, "cli": 8}


def strip_c(text):
    """Comments and string/char literals blanked (newlines kept, so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def opening_comment(text):
    m = re.match(r"\s*/\*.*?\*/", text, re.S)
    return m.group(0) if m else ""


def sources(src):
    for d, _, files in sorted(os.walk(src)):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)


def layer_of(src, path):
    rel = os.path.relpath(path, src)
    return rel.split(os.sep)[0] if os.sep in rel else "main"


def skip_head(s):
    """s without a leading if (...)/while (...)/for (...)/else/do head; None when unbalanced."""
    while True:
        s = s.lstrip()
        m = re.match(r"(if|while|for|switch)\s*\(", s)
        if m:
            depth, i = 0, m.end() - 1
            while i < len(s):
                depth += s[i] == "("
                depth -= s[i] == ")"
                if depth == 0:
                    break
                i += 1
            if depth:
                return None
            s = s[i + 1:]
            continue
        m = re.match(r"(else|do)\b", s)
        if m:
            s = s[m.end():]
            continue
        m = re.match(r"(case\b[^:]*|default)\s*:(?!:)", s)
        if m:
            s = s[m.end():]
            continue
        return s


def unchecked_cjson(code):
    """(line, call) of every cJSON_Add*/cJSON_Create* call that is a whole expression statement."""
    found = []
    start = 0
    for m in re.finditer(r"[;{}]", code):
        stmt = code[start:m.start()]
        if m.group(0) == ";":
            head = skip_head(stmt)
            if head is not None:
                c = re.match(r"\s*(cJSON_(?:Add|Create)\w*)\s*\(", head)
                if c:
                    pos = start + len(stmt) - len(head) + c.start(1)
                    found.append((code.count("\n", 0, pos) + 1, c.group(1)))
        start = m.end()
    return found


def long_functions(text):
    """(name, first line, lines) of every function over LONG_FUNC_LINES lines."""
    lines, found = text.split("\n"), []
    for i, line in enumerate(lines):
        if line != "{" or i == 0:
            continue
        s = i - 1
        while s > 0 and lines[s][:1] in (" ", "\t"):
            s -= 1
        m = re.search(r"(\w+)\s*\(", " ".join(lines[s:i]))
        if not m:
            continue
        e = i
        while e < len(lines) and lines[e] != "}":
            e += 1
        if e - s + 1 > LONG_FUNC_LINES:
            found.append((m.group(1), s + 1, e - s + 1))
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    src = os.path.join(root, "src")
    bad = {"size": [], "layers": [], "clock": [], "cjson": []}
    big, long_funcs = [], []
    for p in sources(src):
        rel = os.path.relpath(p, root)
        text = open(p, encoding="utf-8", errors="replace").read()
        code = strip_c(text)
        lines = text.count("\n")
        if lines > MAX_LINES:
            reason = [l for l in opening_comment(text).splitlines() if "Size:" in l]
            big.append((rel, lines, bool(reason)))
            if not reason:
                bad["size"].append("%s: %d lines, no 'Size:' reason in its opening comment"
                                   % (rel, lines))
        me = layer_of(src, p)
        for n, line in enumerate(text.splitlines(), 1):
            m = re.match(r'\s*#\s*include\s+"([a-z_]+)/', line)
            if not m or m.group(1) not in RANK or me == "main":
                continue
            them, mine = m.group(1), RANK.get(me, 99)
            if them != me and RANK[them] >= mine:
                bad["layers"].append("%s:%d: %s includes %s (a %s layer)" % (
                    rel, n, me, line.split('"')[1],
                    "same-rank" if RANK[them] == mine else "higher"))
        if me != "core":
            for n, line in enumerate(code.splitlines(), 1):
                if "CLOCK_MONOTONIC" in line:
                    bad["clock"].append("%s:%d: reads the monotonic clock outside src/core"
                                        % (rel, n))
        if p.endswith(".c"):
            long_funcs += [(n, rel, line, size) for n, line, size in long_functions(text)]
        for n, call in unchecked_cjson(code):
            bad["cjson"].append("%s:%d: %s result unchecked" % (rel, n, call))

    print("structure: files over %d lines: %d (%s)" % (
        MAX_LINES, len(big), ", ".join("%s %d%s" % (f, n, "" if ok else " NO REASON")
                                       for f, n, ok in big) or "none"))
    print("structure: includes of a higher layer: %d" % len(bad["layers"]))
    print("structure: monotonic clock read outside src/core: %d" % len(bad["clock"]))
    print("structure: unchecked cJSON_Add*/cJSON_Create* results: %d" % len(bad["cjson"]))
    print("structure: functions over %d lines: %d (limit %d)" % (
        LONG_FUNC_LINES, len(long_funcs), LONG_FUNCS_MAX))
    rc = 0
    if len(long_funcs) > LONG_FUNCS_MAX:
        for n, rel, line, size in sorted(long_funcs, key=lambda f: -f[3]):
            print("structure: FAIL long function %s:%d: %s, %d lines" % (rel, line, n, size))
        print("structure: FAIL %d functions over %d lines is over the limit %d" % (
            len(long_funcs), LONG_FUNC_LINES, LONG_FUNCS_MAX))
        rc = 1
    for k in ("size", "layers", "clock", "cjson"):
        for line in bad[k]:
            print("structure: FAIL %s" % line)
        rc |= bool(bad[k])
    return rc


if __name__ == "__main__":
    sys.exit(main())
