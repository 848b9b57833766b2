#!/usr/bin/env bash
# What docs/architecture.md and docs/sweep.md say of the answer holds in the code: it is composed
# once, by advise_compose (src/advise/advise.c), which both front-ends call (`sizeup sweep` in
# src/cli/cmd_sweep.c through advise_sweep, the operator in src/operator/job_run.c); the advisor
# itself (advisor_run) is called from src/advise/advise.c alone, so no output and no terminal
# table runs it again; and the pages still say so. A sentence that contradicts the code ("nothing
# adds replicas for availability yet", a size "0 today") is refused.
set -u
: "${ROOT:?}"
command -v python3 >/dev/null || { echo "python3 is missing (scripts/install-deps.sh test)"; exit 1; }
python3 - "$ROOT" <<'PY'
import re, sys, pathlib
root = pathlib.Path(sys.argv[1])
fails = []

def calls(name):
    """The .c files under src/ that call name (its definition aside)."""
    out = set()
    for f in sorted((root / "src").rglob("*.c")):
        text = re.sub(r"/\*.*?\*/", "", f.read_text(), flags=re.S)
        for m in re.finditer(r"\b%s\s*\(" % name, text):
            # A definition starts its line with the type alone: "int advisor_run(".
            prefix = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
            if not re.match(r"^[A-Za-z_][\w\s*]*$", prefix):
                out.add(str(f.relative_to(root)))
    return out

runs = calls("advisor_run")
if runs != {"src/advise/advise.c"}:
    fails.append("advisor_run is called from %s, not src/advise/advise.c alone" % sorted(runs))
front = calls("advise_compose") | calls("advise_sweep")
for f in ("src/cli/cmd_sweep.c", "src/operator/job_run.c"):
    if f not in front:
        fails.append("%s does not compose the answer with advise_compose/advise_sweep" % f)
for f in sorted(front - {"src/cli/cmd_sweep.c", "src/operator/job_run.c", "src/advise/advise.c"}):
    fails.append("%s composes the answer again" % f)

sweep = (root / "docs/sweep.md").read_text()
arch = (root / "docs/architecture.md").read_text()
if not re.search(r"advise_compose`\s+in\s+`src/advise/advise\.c`,\s+which both\s+`sizeup sweep`"
                 r"\s+and the operator call", sweep):
    fails.append("docs/sweep.md no longer says advise_compose is what both front-ends call")
if "composed once" not in arch or "advise_compose" not in arch:
    fails.append("docs/architecture.md no longer says the answer is composed once")
stale = [("docs/sweep.md", r"nothing adds replicas for availability yet"),
         ("src/advise/sizing.h", r"\b0 today\b"), ("src/advise/advisor.h", r"\b0 today\b"),
         ("docs/safety.md", r"it only lists nodes\)")]
for path, pat in stale:
    if re.search(pat, (root / path).read_text()):
        fails.append("%s says what the code no longer does: /%s/" % (path, pat))

for f in fails:
    print("FAIL:", f)
if fails:
    sys.exit(1)
print("docs_answer: advisor_run in src/advise/advise.c alone; advise_compose from %s; "
      "0 stale sentences" % ", ".join(sorted(front)))
PY
