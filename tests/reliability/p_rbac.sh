#!/usr/bin/env bash
# Promise: the RBAC that the manifests grant is exactly enough. The fake API server enforces the
# Roles, ClusterRoles and bindings rendered by `kubectl kustomize manifests/`; the operator runs
# as the chart's service account (system:serviceaccount:sizeup:sizeup) with leader election as
# the chart configures it. The named test "rbac-full-sweep" (one-variant clone sweep of the
# example app) must see status done and zero 403s; then, for each rule in turn, the same test
# with that one rule removed must fail with a 403 on that rule's resource.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oplib.sh"
python3 -c 'import yaml' 2>/dev/null || { result FAIL rbac "python3 yaml module missing"; exit 1; }
kubectl kustomize "$ROOT/manifests/" >"$W/rendered.yaml" 2>"$W/kustomize.err" ||
    { result FAIL rbac "kubectl kustomize manifests/ failed: $(head -n 2 "$W/kustomize.err")"; exit 1; }
python3 "$ROOT/tests/reliability/rbac_rules.py" "$W/rendered.yaml" list >"$W/rules.tsv"
nrules=$(wc -l <"$W/rules.tsv")
SA=system:serviceaccount:sizeup:sizeup

# run_case N: a fresh fake with rule N removed (-1: none), one sweep; leaves $W/case.json.
run_case() {
    local n=$1 d="$W/c$1"
    python3 "$ROOT/tests/reliability/rbac_rules.py" "$W/rendered.yaml" preload "$n" "$W/preload-$n.yaml"
    mkdir -p "$d"
    op_cluster rbac "$d/fake" "$ROOT/manifests/examples/web.yaml" --preload "$W/preload-$n.yaml"
    OP_NAMESPACE=sizeup op_identity "$SA" "$d" || return 1
    local seq0
    seq0=$(last_seq)
    "$SIZEUP" operator --kubeconfig "$d/op-kubeconfig" --admin-addr off --leader-elect \
        --lease-name sizeup-leader --lease-namespace sizeup >"$d/operator.log" 2>&1 &
    OP=$!
    OPS+=("$OP")
    k annotate deployment web sizeup.dev/profile=rel-load "sizeup.dev/configs=1@0.5/128Mi" \
        sizeup.dev/sweep=rbac-1 >/dev/null
    local t0=$SECONDS first403= st=
    while [ $((SECONDS - t0)) -lt 75 ]; do
        st=$(k get deployment web -o jsonpath='{.metadata.annotations.sizeup\.dev/status}')
        [[ "$st" == done || "$st" == failed:* ]] && break
        if [ -z "$first403" ] && fakectl GET "/fake/log?since=$seq0" | grep -q '"code": 403'; then
            first403=$SECONDS
        fi
        [ -n "$first403" ] && [ $((SECONDS - first403)) -ge 8 ] && break
        kill -0 "$OP" 2>/dev/null || break
        sleep 0.5
    done
    op_stop "$OP"
    fakectl GET "/fake/log?since=$seq0" >"$d/log.json"
    echo "$st" >"$d/status"
    keep_logs "rbac/case$n" "$d/operator.log" "$d/fake/server.log" "$d/fake/requests.log"
    fake_stop
}

# analyse N: prints "ok|bad FIGURE" for case N.
analyse() {
    python3 - "$W/c$1/log.json" "$(cat "$W/c$1/status")" "$1" "$W/rules.tsv" "$SA" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))["entries"]
status, n, sa = sys.argv[2], int(sys.argv[3]), sys.argv[5]
rules = [l.rstrip("\n").split("\t") for l in open(sys.argv[4])]
mine = [e for e in log if e.get("user") == sa]
def group(e):
    p = e.get("path", "")
    return "" if p.startswith("/api/") else p.split("/")[2] if p.startswith("/apis/") else "?"
denied = {}
for e in mine:
    if e.get("code") == 403:
        k = "%s %s%s" % (e.get("verb"), e.get("resource"), "." + group(e) if group(e) else "")
        denied[k] = denied.get(k, 0) + 1
d = ", ".join("%s x%d" % kv for kv in sorted(denied.items())) or "none"
if n < 0:
    ok = status == "done" and not denied
    print("%s status '%s', %d API requests as %s, 403s: %s" % ("ok" if ok else "bad", status,
          len(mine), sa, d))
else:
    rule = json.loads(rules[n][3])
    hit = [e for e in mine if e.get("code") == 403 and e.get("resource") in rule["resources"]
           and e.get("verb") in rule["verbs"] and group(e) in rule["apiGroups"]]
    failed = bool(denied) or status != "done"
    ok = failed and hit
    print("%s removing %s [%s] -> rbac-full-sweep %s: 403 %s; status '%s'" % (
        "ok" if ok else "bad", rules[n][1], rules[n][2], "FAILS" if failed else "still passes",
        d, status))
PY
}

rc=0
if ! run_case -1; then
    result FAIL rbac-full-sweep "could not set up the case (see $REL_LOGS)"
    exit 1
fi
fig=$(analyse -1)
if [[ "$fig" == ok* ]]; then result PASS rbac-full-sweep "${fig#* }"; else result FAIL rbac-full-sweep "${fig#* }"; rc=1; fi
for n in $(seq 0 $((nrules - 1))); do
    if ! run_case "$n"; then
        result FAIL "rbac-minus-rule-$n" "could not set up the case"
        rc=1
        continue
    fi
    fig=$(analyse "$n")
    if [[ "$fig" == ok* ]]; then
        result PASS "rbac-minus-rule-$n" "${fig#* }"
    else
        result FAIL "rbac-minus-rule-$n" "${fig#* }"
        rc=1
    fi
done
exit $rc
