# shellcheck shell=bash
# Sourced by the chart, manifest and docs tests: finds the tools they need or skips the test.
# Sets HELM (a helm v3 binary) and PY (a python3 with PyYAML). Exit 77 = skipped, with the reason
# as the last line, as tests/run-tests.sh expects.

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

skip() { echo "$*"; exit 77; }

need_helm() {
    local log
    log=$(mktemp)
    if ! HELM=$("$ROOT/scripts/install-helm.sh" 2>"$log" | tail -n 1) || [ ! -x "$HELM" ]; then
        cat "$log"
        rm -f "$log"
        skip "helm is not on PATH and scripts/install-helm.sh could not install it"
    fi
    rm -f "$log"
    export HELM
}

need_kubectl() {
    command -v kubectl >/dev/null || skip "kubectl is not installed"
}

need_pyyaml() {
    local p
    for p in python3 /usr/bin/python3; do
        if command -v "$p" >/dev/null && "$p" -c 'import yaml' 2>/dev/null; then
            PY=$p
            export PY
            return 0
        fi
    done
    # python3-yaml is in `scripts/install-deps.sh test`: its absence is a broken machine.
    echo "no python3 with PyYAML (scripts/install-deps.sh test installs python3-yaml)"
    exit 1
}

# expect DESCRIPTION FILE EXPR: EXPR is a Python expression over the objects rendered in FILE that
# must be true. In scope: objs (every object), of(kind) (the objects of that kind), one(kind) (the
# only object of that kind, an error if there is not exactly one), args (the operator container's
# args, or [] when there is no Deployment). Counts into PASSED / FAILED.
PASSED=0
FAILED=0
expect() {
    local desc=$1 file=$2 expr=$3 out
    if out=$("$PY" - "$file" "$expr" 2>&1 <<'PYEOF'
import sys, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
def of(kind):
    return [o for o in objs if o.get("kind") == kind]
def one(kind):
    found = of(kind)
    if len(found) != 1:
        raise SystemExit("%d objects of kind %s" % (len(found), kind))
    return found[0]
deps = of("Deployment")
args = deps[0]["spec"]["template"]["spec"]["containers"][0].get("args", []) if deps else []
ok = eval(sys.argv[2])
if ok is not True:
    raise SystemExit("expression is %r" % (ok,))
PYEOF
    ); then
        PASSED=$((PASSED + 1))
        echo "ok   $desc"
    else
        FAILED=$((FAILED + 1))
        echo "FAIL $desc: $expr"
        echo "     $out"
    fi
}

# must_fail DESCRIPTION PATTERN COMMAND...: the command must exit non-zero and print PATTERN.
must_fail() {
    local desc=$1 pattern=$2 out
    shift 2
    if out=$("$@" 2>&1); then
        FAILED=$((FAILED + 1))
        echo "FAIL $desc: succeeded, expected a failure"
    elif ! grep -q -- "$pattern" <<<"$out"; then
        FAILED=$((FAILED + 1))
        echo "FAIL $desc: failed without '$pattern':"
        sed 's/^/     /' <<<"$out" | head -n 5
    else
        PASSED=$((PASSED + 1))
        echo "ok   $desc ($(grep -m1 -- "$pattern" <<<"$out" | sed 's/^[- ]*//'))"
    fi
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}
