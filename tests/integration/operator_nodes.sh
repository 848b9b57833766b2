#!/usr/bin/env bash
# slow: make e2e
# The cluster's node types for the cost by packing: the fake serves Nodes of two instance types
# (one tainted) and four DaemonSets (tests/integration/fixtures/nodes.yaml); `kubectl get nodes`
# and `kubectl get daemonsets -A` list them. The operator runs as a ServiceAccount with the
# chart's namespaced-mode rules (watchNamespaces={default}, rbac.nodes on): it reads the node
# types (the smaller m5.large's allocatable; the largest sum on one m5.large of the DaemonSets
# that would run there, from their templates), names the DaemonSet without requests, prices
# m5.large from the profile's nodes:, ranks r6.large (not in the cluster) too, never lists pods
# outside its namespace, and none of its requests is refused. Then the ClusterRole
# <fullname>-nodes loses its daemonsets `list` rule: the list is refused (403), and the operator
# says node types are unknown and falls back to the profile's nodes: as given. Two one-variant
# fixed sweeps: slower than 20 s.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup
command -v helm >/dev/null || { echo "skip: helm is not installed"; exit 77; }

seed="$ROOT/tests/integration/fixtures/nodes.yaml"
k apply -f "$seed" >/dev/null || fail "apply the nodes and DaemonSets"
k get nodes -o wide | tee "$E2E_W/nodes.txt"
grep -q 'node-a1 .*m5.large' "$E2E_W/nodes.txt" || fail "kubectl get nodes: no m5.large node-a1"
k get daemonsets -A | tee "$E2E_W/ds.txt"
grep -q 'kube-system *node-agent *3 *3 *3' "$E2E_W/ds.txt" || fail "kubectl get daemonsets -A"

k apply -f - >/dev/null <<'YAML' || fail "cannot create the profile"
apiVersion: v1
kind: ConfigMap
metadata: {name: packed}
data:
  profile.yaml: |
    users: 4
    duration: 2s
    warmup: 1s
    search: { mode: fixed }
    nodes:
      - { name: m5.large, cpu: 2, memory: 8Gi, price: 0.096 }
      - { name: r6.large, cpu: 2, memory: 16Gi, price: 0.126 }
YAML

# The chart's namespaced render, its ServiceAccount's token.
helm template sizeup "$ROOT/charts/sizeup" --namespace sizeup --set 'watchNamespaces={default}' \
    >"$E2E_W/render.yaml" || fail "helm template"
k create namespace sizeup >/dev/null 2>&1 || true
k apply -f "$E2E_W/render.yaml" >/dev/null || fail "apply the render"
fakectl POST /fake/tokens \
    '{"user": "system:serviceaccount:sizeup:sizeup", "kubeconfig": "'"$E2E_W/sa.kubeconfig"'", "namespace": "default"}' \
    >/dev/null || fail "token"

results() { k get configmap web-sizing -o jsonpath='{.data.results\.json}'; }
sweep() { # ID
    local mark
    mark=$(wc -l <"$E2E_W/fake/requests.log")
    KUBECONFIG="$E2E_W/sa.kubeconfig" op_start "op-$1" --namespace default
    k annotate --overwrite deployment web sizeup.dev/profile=packed "sizeup.dev/configs=1@0.5/128Mi" \
        "sizeup.dev/sweep=$1" >/dev/null
    wait_status web '^done$' 120
    op_stop
    tail -n +"$((mark + 1))" "$E2E_W/fake/requests.log" |
        grep -F '"user":"system:serviceaccount:sizeup:sizeup"' >"$E2E_W/req-$1.log" || true
    results >"$E2E_W/results-$1.json"
}

sweep nodes-1
denied=$(grep -c '"code":403' "$E2E_W/req-nodes-1.log" || true)
[ "$denied" = 0 ] || fail "with the chart's rules, $denied requests refused: $(grep '"code":403' "$E2E_W/req-nodes-1.log" | head -3)"
grep -F '"path":"/apis/apps/v1/daemonsets"' "$E2E_W/req-nodes-1.log" | grep -qF '"query":"limit=500"' ||
    fail "the operator did not list DaemonSets cluster-wide"
grep -F '"path":"/api/v1/pods"' "$E2E_W/req-nodes-1.log" &&
    fail "the operator listed pods cluster-wide"
r=$E2E_W/results-nodes-1.json
for want in 'node types from the cluster (by node.kubernetes.io/instance-type): m5.large 1900m CPU and 7400Mi allocatable, 450m CPU and 448Mi for DaemonSets, price 0.096' \
    '1 DaemonSet (kube-system/logs) requests no CPU or memory in a container, so what it takes of each node is unknown and counted as 0' \
    '1 type the profile does not price left out' '1 profile type not in this cluster ranked too' \
    '1 node without the label left out' 'r6.large (not in this cluster)'; do
    grep -qF "$want" "$r" || fail "results lack: $want"
done
echo "  with the rules: node types read from the cluster, none of $(wc -l <"$E2E_W/req-nodes-1.log") requests refused"

# Without the daemonsets rule: the read fails, the operator falls back.
python3 - "$E2E_W/render.yaml" >"$E2E_W/render-nopods.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
for d in docs:
    if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "sizeup-nodes":
        d["rules"] = [r for r in d["rules"] if r["resources"] != ["daemonsets"]]
        assert d["rules"], "the nodes rule must stay"
print(yaml.safe_dump_all(docs))
PY
grep -q 'daemonsets' <(python3 -c 'import sys,yaml; [print(d["rules"]) for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["metadata"]["name"]=="sizeup-nodes" and d["kind"]=="ClusterRole"]' "$E2E_W/render.yaml") ||
    fail "the chart's sizeup-nodes ClusterRole has no daemonsets rule"
k apply -f "$E2E_W/render-nopods.yaml" >/dev/null || fail "apply the render without the daemonsets rule"
sweep nodes-2
grep -q '"code":403' "$E2E_W/req-nodes-2.log" || fail "without the rule no request was refused"
grep '"code":403' "$E2E_W/req-nodes-2.log" | grep -qF '"path":"/apis/apps/v1/daemonsets"' ||
    fail "the refused request is not the DaemonSets list"
r=$E2E_W/results-nodes-2.json
grep -qF 'node types unknown' "$r" || fail "results do not say node types unknown"
grep -qF "the profile's nodes: are used as given" "$r" || fail "results do not say what stands instead"
grep -qF 'node types from the cluster' "$r" && fail "node types read without the rule"
echo "  without the daemonsets rule: refused (403), node types unknown, the profile's nodes: as given"
echo "operator nodes: ok"
