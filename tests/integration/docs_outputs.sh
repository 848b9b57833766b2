#!/usr/bin/env bash
# The outputs tables in the docs and the code's one table of outputs (src/output/output_set.c,
# `outputs[]`) list the same files: docs/reference.md's "file / key" table every output plus the
# operator's own state.json, docs/sweep.md's "Output files" table every output a local sweep
# writes (all but those reference.md calls "ConfigMap only"); and no page counts the files in
# words ("five files") that no longer match; and reference.md's Events list holds every Event
# reason the operator emits.
set -u
: "${ROOT:?}"
command -v python3 >/dev/null || { echo "python3 is missing (scripts/install-deps.sh test)"; exit 1; }
python3 - "$ROOT" <<'PY'
import re, sys, pathlib
root = pathlib.Path(sys.argv[1])
fails = []

src = (root / "src/output/output_set.c").read_text()
table = re.search(r"\boutputs\[\] = \{(.*?)\n\};", src, re.S)
if not table:
    sys.exit("docs_outputs: no outputs[] table in src/output/output_set.c")
code = re.findall(r'\{"([A-Za-z0-9_.-]+)",\s*output_\w+', table.group(1))
if len(code) < 5:
    sys.exit(f"docs_outputs: only {code} read from outputs[]")

def doc_table(path, header):
    """The first column (`name`) of the markdown table right after the header line."""
    lines = (root / path).read_text().splitlines()
    for i, l in enumerate(lines):
        if re.match(header, l):
            rows = {}
            for r in lines[i + 2:]:
                if not r.startswith("|"):
                    break
                m = re.match(r"\| `([^`]+)` \|(.*)", r)
                if m:
                    rows[m.group(1)] = m.group(2)
            return rows
    fails.append(f"{path}: no table headed {header!r}")
    return {}

ref = doc_table("docs/reference.md", r"\| file / key \| content \|")
operator_only = {"state.json"}  # the operator's progress key, written beside the outputs
for k in operator_only:
    if k not in ref:
        fails.append(f"docs/reference.md: the outputs table lacks {k}")
    if f'"{k}"' not in "".join(p.read_text() for p in (root / "src/operator").glob("*.c")):
        fails.append(f"src/operator: {k} is documented but never written")
for name in code:
    if name not in ref:
        fails.append(f"docs/reference.md: output {name} (output_set.c) is not in the table")
for name in ref:
    if name not in code and name not in operator_only:
        fails.append(f"docs/reference.md: {name} is in the table but not an output of output_set.c")
configmap_only = {n for n, text in ref.items() if "ConfigMap only" in text}

sweep = doc_table("docs/sweep.md", r"\| file \| content \|")
for name in code:
    if name not in sweep and name not in configmap_only:
        fails.append(f"docs/sweep.md: output {name} (output_set.c) is not in the Output files table")
for name in sweep:
    if name not in code:
        fails.append(f"docs/sweep.md: {name} is in the Output files table but not an output")

# Counting in words: "the five files" once fitted; the table has grown since.
words = "one two three four five six seven eight nine ten eleven twelve".split()
texts = list((root / "docs").glob("*.md")) + [root / "README.md", root / "src/cli/cmd_sweep.c"]
for p in texts:
    for n, line in enumerate(p.read_text().splitlines(), 1):
        for m in re.finditer(r"\b(?:the|writes|all) (" + "|".join(words) + r") (?:output )?(files|outputs)\b", line, re.I):
            count = words.index(m.group(1).lower()) + 1
            if count != len(code):
                fails.append(f"{p.relative_to(root)}:{n}: \"{m.group(0)}\", but output_set.c lists {len(code)} outputs")

# Every Event reason the operator emits is in reference.md's Events list.
ops = "".join(p.read_text() for p in (root / "src/operator").glob("*.c"))
reasons = sorted(set(re.findall(r'_event\([^;]*?"([A-Z][a-z]+[A-Z][A-Za-z]+)",', ops)))
refmd = (root / "docs/reference.md").read_text()
events = refmd[refmd.find("Events (`events.k8s.io/v1`"):]
events = events[:events.find("\n\n")]
if len(reasons) < 10:
    fails.append(f"src/operator: only {reasons} read as Event reasons")
for r in reasons:
    if f"`{r}`" not in events:
        fails.append(f"docs/reference.md: the Events list lacks {r} (emitted in src/operator)")

for f in fails:
    print("FAIL", f)
print(f"docs_outputs: {len(code)} outputs in output_set.c ({', '.join(code)}), "
      f"{len(reasons)} Event reasons; {len(fails)} mismatches")
sys.exit(1 if fails else 0)
PY
