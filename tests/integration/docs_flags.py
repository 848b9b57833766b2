"""Compares each command's usage (`sizeup help COMMAND`, rendered from the flag table the binary
parses with) with its table in docs/reference.md: the same flags with the same value names and
the same defaults, and the annotation tables with the operator's own list of keys and statuses.
Usage: docs_flags.py SIZEUP ROOT. Prints what it compared; exits 1 on the first kind of drift."""

import re
import subprocess
import sys

sizeup, root = sys.argv[1], sys.argv[2]
reference = open(root + "/docs/reference.md").read()
problems = []


def usage_flags(cmd, plugin=False):
    """{"--name ARG": default or None or "required"} from the usage text. plugin: a kubectl
    sizeup command, whose usage the binary prints when run under its plugin name."""
    if plugin:
        args, exe = ["kubectl-sizeup", "help", cmd], sizeup
    else:
        args, exe = [sizeup, "help", cmd], None
    text = subprocess.run(args, executable=exe, capture_output=True, text=True,
                          check=True).stdout
    rows, cur = [], None
    for line in text.splitlines():
        m = re.match(r"^  (?:-[a-zA-Z], )?(--[a-z-]+(?: [A-Z/=]+)?)(?:\s+(.*))?$", line)
        if m:
            cur = [m.group(1), m.group(2) or ""]
            rows.append(cur)
        elif cur and re.match(r"^ {20,}\S", line):
            cur[1] += " " + line.strip()
        else:
            cur = None
    flags = {}
    for name, help_text in rows:
        help_text = help_text.strip()
        if help_text.endswith("(required)"):
            flags[name] = "required"
        else:
            m = re.search(r"\(default: (.*)\)$", help_text)
            flags[name] = m.group(1) if m else None
    return flags


def section(title):
    """The text of the reference.md section whose heading line starts with title."""
    m = re.search(r"^#+ " + re.escape(title) + r".*?$(.*?)(?=^#)", reference, re.S | re.M)
    if not m:
        problems.append("docs/reference.md has no section '%s'" % title)
        return ""
    return m.group(1)


def table(text):
    """The rows of the markdown tables in text, as lists of cells without backticks."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append(cells)
    return rows[1:] if rows else rows  # the first is the header


def plain(cell):
    return cell.replace("`", "").strip()


def reference_flags(cmd, prefix="sizeup"):
    flags = {}
    for cells in table(section("%s %s" % (prefix, cmd))):
        name = plain(cells[0])
        default = plain(cells[1])
        flags[name] = None if default in ("off", "—", "") else default
    return flags


for cmd in ("loadtest", "sweep", "rule", "operator", "compare"):
    got, doc = usage_flags(cmd), reference_flags(cmd)
    for name in sorted(set(got) | set(doc)):
        if name not in doc:
            problems.append("sizeup %s: %s is in the usage but not in docs/reference.md" % (cmd, name))
        elif name not in got:
            problems.append("sizeup %s: %s is in docs/reference.md but not in the usage" % (cmd, name))
        elif got[name] != doc[name]:
            problems.append("sizeup %s: %s default: usage says %r, docs/reference.md says %r"
                            % (cmd, name, got[name], doc[name]))
    print("sizeup %s: %d flags compared" % (cmd, len(got)))

for cmd in ("sweep", "status", "results", "cancel"):
    got, doc = usage_flags(cmd, plugin=True), reference_flags(cmd, "kubectl sizeup")
    for name in sorted(set(got) | set(doc)):
        if name not in doc:
            problems.append("kubectl sizeup %s: %s is in the usage but not in docs/reference.md"
                            % (cmd, name))
        elif name not in got:
            problems.append("kubectl sizeup %s: %s is in docs/reference.md but not in the usage"
                            % (cmd, name))
        elif got[name] != doc[name]:
            problems.append("kubectl sizeup %s: %s default: usage says %r, docs/reference.md says %r"
                            % (cmd, name, got[name], doc[name]))
    print("kubectl sizeup %s: %d flags compared" % (cmd, len(got)))

# The annotations: the names the operator reads and writes (src/operator/annotations.c) against
# the two tables of the Annotations section, and every status the operator writes named.
src = open(root + "/src/operator/annotations.c").read()


def keys(var):
    m = re.search(var + r"\[\] = \{(.*?)\};", src, re.S)
    return {"sizeup.dev/" + k for k in re.findall(r'"([a-z-]+)"', m.group(1))}


ann = section("Annotations")
parts = ann.split("Written by the operator")
read_doc = {plain(c[0]) for c in table(parts[0])}
written_rows = table(parts[1]) if len(parts) > 1 else []
written_doc = {plain(c[0]) for c in written_rows}
for what, code, doc in (("read", keys("user_keys"), read_doc),
                        ("written", keys("own_keys"), written_doc)):
    for k in sorted(code - doc):
        problems.append("annotation %s (%s by the operator) is not in docs/reference.md" % (k, what))
    for k in sorted(doc - code):
        problems.append("docs/reference.md lists annotation %s, which the operator does not know" % k)
    print("annotations %s: %d compared" % (what, len(code)))

operator_src = ""
for f in ("job.c", "job_run.c", "job_request.c"):
    try:
        operator_src += open(root + "/src/operator/" + f).read()
    except OSError:
        pass
statuses = set(re.findall(r'"(running|pending: retrying|failed:)[ %]', operator_src))
status_row = " ".join(c[1] for c in written_rows if plain(c[0]) == "sizeup.dev/status")
for s in sorted(statuses | {"done"}):
    if s not in status_row:
        problems.append("the operator writes status '%s ...', docs/reference.md does not say so" % s)
print("statuses: %s" % ", ".join(sorted(statuses | {"done"})))

for p in problems:
    print("DRIFT: " + p)
sys.exit(1 if problems else 0)
