#!/usr/bin/env bash
# Promise: the RBAC that the manifests grant is exactly enough. The fake API server enforces the
# Roles, ClusterRoles and bindings rendered by `kubectl kustomize manifests/`; the operator runs
# as the chart's service account (system:serviceaccount:sizeup:sizeup) with leader election as
# the chart configures it. The named test "rbac-full-sweep" must see status done and zero 403s:
# a one-variant sweep of the example app made Guaranteed (requests = limits), in mode resize
# (the CPU-only step is applied through pods/resize), with its load from 2 generator pods
# (sizeup.dev/generators: an Indexed Job in the operator's namespace, the workers' results read
# from their pods), so every rule has a request that needs it. Then, for each rule in turn, the
# same test with that one rule removed must fail with a 403 on that rule's resource. A rule whose
# only request comes when admission refuses a generator pod (list on the Job's Events) is proven
# in a sweep where a LimitRange in the operator's namespace refuses them: with every rule the
# variant fails with the API server's reason and nothing is refused ("rbac-refused-sweep");
# without that rule the Events list is refused.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oplib.sh"
python3 -c 'import yaml' 2>/dev/null || { result FAIL rbac "python3 yaml module missing"; exit 1; }
kubectl kustomize "$ROOT/manifests/" >"$W/rendered.yaml" 2>"$W/kustomize.err" ||
    { result FAIL rbac "kubectl kustomize manifests/ failed: $(head -n 2 "$W/kustomize.err")"; exit 1; }
python3 "$ROOT/tests/reliability/rbac_rules.py" "$W/rendered.yaml" list >"$W/rules.tsv"
nrules=$(wc -l <"$W/rules.tsv")
SA=system:serviceaccount:sizeup:sizeup
# The generator pods run this build of sizeup as the operator's image, as the chart's Job would.
cat >"$W/images.json" <<JSON
{"example/web:*": {"command": ["python3", "\${FAKEAPI_APPS}/web.py"]},
 "example/sizeup:*": {"entrypoint": ["$SIZEUP"], "cmd": ["operator"]}}
JSON
# The example app, Guaranteed, so that a CPU-only step can be resized in place.
python3 - "$ROOT/manifests/examples/web.yaml" "$W/web.yaml" <<'PY'
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
for d in docs:
    if d and d["kind"] == "Deployment":
        r = d["spec"]["template"]["spec"]["containers"][0]["resources"]
        r["requests"] = dict(r["limits"])
# A labelled node, as every cluster has: the operator lists the nodes, then the DaemonSets for
# what they take of each node type (the nodes and daemonsets rules).
docs.append({"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": "node-1",
                          "labels": {"node.kubernetes.io/instance-type": "m5.xlarge"}},
             "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                        "allocatable": {"cpu": "3920m", "memory": "15Gi", "pods": "110"}}})
yaml.safe_dump_all(docs, open(sys.argv[2], "w"))
PY

# run_case CASE N [RENDER OPERATOR-FLAGS...]: a fresh fake with rule N of RENDER (default the
# cluster-wide $W/rendered.yaml) removed (-1: none), one sweep; leaves $W/cCASE/log.json.
run_case() {
    local c=$1 n=$2 render=${3:-$W/rendered.yaml} d="$W/c$1"
    shift 3 2>/dev/null || shift $#
    python3 "$ROOT/tests/reliability/rbac_rules.py" "$render" preload "$n" "$W/preload-$c.yaml"
    mkdir -p "$d"
    op_cluster rbac "$d/fake" "$W/web.yaml" --preload "$W/preload-$c.yaml" \
        --images "$W/images.json"
    OP_NAMESPACE=sizeup op_identity "$SA" "$d" || return 1
    # REFUSE=1: the generators ask for 250m CPU, and this LimitRange allows 100m per container.
    if [ -n "${REFUSE:-}" ]; then
        printf 'apiVersion: v1\nkind: LimitRange\nmetadata: {name: small, namespace: sizeup}\nspec:\n  limits: [{type: Container, max: {cpu: 100m}}]\n' |
            k apply -f - >/dev/null || return 1
    fi
    local seq0
    seq0=$(last_seq)
    POD_NAMESPACE=sizeup SIZEUP_GENERATOR_IMAGE=example/sizeup:1 \
        SIZEUP_GENERATOR_SERVICE_ACCOUNT=sizeup-generator SIZEUP_GENERATOR_CPU=250m \
        SIZEUP_GENERATOR_MEMORY=256Mi SIZEUP_GENERATOR_START_DELAY=2s \
        "$SIZEUP" operator --kubeconfig "$d/op-kubeconfig" --admin-addr off --leader-elect \
        --lease-name sizeup-leader --lease-namespace sizeup "$@" >"$d/operator.log" 2>&1 &
    OP=$!
    OPS+=("$OP")
    k annotate deployment web sizeup.dev/profile=rel-load "sizeup.dev/configs=1@0.3/128Mi" \
        sizeup.dev/mode=resize sizeup.dev/generators=2 sizeup.dev/sweep=rbac-1 >/dev/null
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
    keep_logs "rbac/case$c" "$d/operator.log" "$d/fake/server.log" "$d/fake/requests.log"
    fake_stop
}

# analyse CASE N [RULES.tsv]: prints "ok|bad FIGURE" for the case that removed rule N.
analyse() {
    python3 - "$W/c$1/log.json" "$(cat "$W/c$1/status")" "$2" "${3:-$W/rules.tsv}" "$SA" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))["entries"]
status, n, sa = sys.argv[2], int(sys.argv[3]), sys.argv[5]
rules = [l.rstrip("\n").split("\t") for l in open(sys.argv[4])]
mine = [e for e in log if e.get("user") == sa]
def res(e):
    return e.get("resource", "") + ("/" + e["sub"] if e.get("sub") else "")
def group(e):
    p = e.get("path", "")
    return "" if p.startswith("/api/") else p.split("/")[2] if p.startswith("/apis/") else "?"
denied = {}
for e in mine:
    if e.get("code") == 403:
        k = "%s %s%s" % (e.get("verb"), res(e), "." + group(e) if group(e) else "")
        denied[k] = denied.get(k, 0) + 1
d = ", ".join("%s x%d" % kv for kv in sorted(denied.items())) or "none"
if n < 0:
    # The parts the rules are for must have run: generator Jobs, their pods read, a resize.
    def count(verb, r):
        return sum(1 for e in mine if e.get("verb") == verb and res(e) == r and
                   e.get("code", 0) < 300)
    jobs, gpods = count("create", "jobs"), sum(1 for e in mine if res(e) == "pods" and
                                               e.get("ns") == "sizeup" and e.get("code", 0) < 300)
    resized = count("patch", "pods/resize")
    ok = status == "done" and not denied and jobs > 0 and gpods > 0 and resized > 0
    print("%s status '%s', %d API requests as %s (generator Jobs created %d, generator pods "
          "read %d, pods/resize patches %d), 403s: %s" % ("ok" if ok else "bad", status,
          len(mine), sa, jobs, gpods, resized, d))
else:
    rule = json.loads(rules[n][3])
    hit = [e for e in mine if e.get("code") == 403 and res(e) in rule["resources"]
           and e.get("verb") in rule["verbs"] and group(e) in rule["apiGroups"]]
    failed = bool(denied) or status != "done"
    ok = failed and hit
    print("%s removing %s [%s] -> rbac-full-sweep %s: 403 %s; status '%s'" % (
        "ok" if ok else "bad", rules[n][1], rules[n][2], "FAILS" if failed else "still passes",
        d, status))
PY
}

rc=0
if ! run_case full -1; then
    result FAIL rbac-full-sweep "could not set up the case (see $REL_LOGS)"
    exit 1
fi
fig=$(analyse full -1)
if [[ "$fig" == ok* ]]; then result PASS rbac-full-sweep "${fig#* }"; else result FAIL rbac-full-sweep "${fig#* }"; rc=1; fi
# The rules only a refused generator pod needs (see the header).
refusal_rule() { # N: true for the generators Role's Events rule
    python3 -c 'import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if r["resources"] == ["events"] and r["apiGroups"] == [""] else 1)' \
        "$(sed -n "$(($1 + 1))p" "$W/rules.tsv" | cut -f4)" && grep -q "sizeup-generators" <(sed -n "$(($1 + 1))p" "$W/rules.tsv")
}
if REFUSE=1 run_case refused -1; then
    fig=$(python3 - "$W/crefused/log.json" "$(cat "$W/crefused/status")" "$SA" "$W/crefused/operator.log" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))["entries"]
mine = [e for e in log if e.get("user") == sys.argv[3]]
denied = [e for e in mine if e.get("code") == 403]
events = sum(1 for e in mine if e.get("resource") == "events" and e.get("verb") == "list")
said = "was refused by the API server" in open(sys.argv[4]).read()
ok = sys.argv[2] == "done" and not denied and events > 0 and said
print("%s status '%s', Events lists %d, the refusal named %s, 403s: %d" % (
    "ok" if ok else "bad", sys.argv[2], events, "yes" if said else "no", len(denied)))
PY
)
else
    fig="bad could not set up the case"
fi
if [[ "$fig" == ok* ]]; then result PASS rbac-refused-sweep "${fig#* }"; else result FAIL rbac-refused-sweep "${fig#* }"; rc=1; fi
# A rule that another rule already grants where it applies (the generators Role's pods rule, in
# cluster-wide mode, beside the ClusterRole's pods rule) cannot fail the test by its removal
# here: it is proven needed where it is the only grant, in the namespaced render
# (watchNamespaces: [default], the operator with --namespace default) without rbac.nodes (its
# two cluster-wide list rules, nodes and daemonsets, are proven in operator_nodes.sh; with it off
# the operator says the node types are unknown and goes on).
ns_render() {
    [ -s "$W/rendered-ns.yaml" ] && return 0
    # helm renders no Namespace (manifests/namespace.yaml is kustomize's): add the release's.
    printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: sizeup}\n---\n' >"$W/rendered-ns.yaml"
    helm template sizeup "$ROOT/charts/sizeup" --namespace sizeup --set 'watchNamespaces={default}' \
        --set rbac.nodes=false \
        >>"$W/rendered-ns.yaml" 2>"$W/helm.err" || return 1
    python3 "$ROOT/tests/reliability/rbac_rules.py" "$W/rendered-ns.yaml" list >"$W/rules-ns.tsv"
}
# REL_RBAC_RULES="1 6": only those rules' cases (when looking into one).
for n in ${REL_RBAC_RULES:-$(seq 0 $((nrules - 1)))}; do
    cover=$(python3 "$ROOT/tests/reliability/rbac_rules.py" "$W/rendered.yaml" covered "$n" "$SA")
    prefix=
    if [ -n "$cover" ]; then
        if ! ns_render; then
            result FAIL "rbac-minus-rule-$n" "covered by $cover here; helm template (namespaced) failed: $(head -n 1 "$W/helm.err")"
            rc=1
            continue
        fi
        m=$(python3 "$ROOT/tests/reliability/rbac_rules.py" "$W/rendered.yaml" find "$W/rendered-ns.yaml" "$n")
        prefix="in cluster-wide mode covered by $cover; in the namespaced render (rule $m there): "
        run_case "ns$n" "$m" "$W/rendered-ns.yaml" --namespace default &&
            fig=$(analyse "ns$n" "$m" "$W/rules-ns.tsv") || fig="bad could not set up the case"
    elif refusal_rule "$n"; then
        prefix="with the generator pods refused at admission: "
        if REFUSE=1 run_case "$n" "$n"; then fig=$(analyse "$n" "$n"); else fig="bad could not set up the case"; fi
    elif run_case "$n" "$n"; then
        fig=$(analyse "$n" "$n")
    else
        fig="bad could not set up the case"
    fi
    if [[ "$fig" == ok* ]]; then
        result PASS "rbac-minus-rule-$n" "$prefix${fig#* }"
    else
        result FAIL "rbac-minus-rule-$n" "$prefix${fig#* }"
        rc=1
    fi
done
exit $rc
