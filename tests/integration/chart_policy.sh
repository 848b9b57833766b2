#!/usr/bin/env bash
# Policy over every object the chart renders (defaults and each option) and over
# `kubectl kustomize manifests/`: no wildcard or escalating RBAC, the restricted Pod Security
# Standard, limits and probes on every container, the chart labels. Then the RBAC is exactly the
# least-privilege set docs/safety.md documents, and the checker itself is proven to catch each
# violation on a deliberately broken copy of a compliant object.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/policy/env.sh
. "$ROOT/tests/policy/env.sh"
need_helm
need_pyyaml
need_kubectl

chart="$ROOT/charts/sizeup"
checker="$ROOT/tests/policy/check_policy.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

policy_ok() { # DESCRIPTION FILE
    local out
    if out=$("$PY" "$checker" --chart-labels "$2" 2>&1); then
        PASSED=$((PASSED + 1)); echo "ok   policy: $1 ($(tail -n 1 <<<"$out" | sed 's/^check_policy: //'))"
    else
        FAILED=$((FAILED + 1)); echo "FAIL policy: $1"; sed 's/^/     /' <<<"$out"
    fi
}

n=0
while IFS='|' read -r desc flags; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    "$HELM" template sizeup "$chart" --namespace sizeup $flags >"$tmp/r$n.yaml"
    policy_ok "helm template $desc" "$tmp/r$n.yaml"
done <<'EOT'
(defaults)|
(namespaced)|--set watchNamespaces={shop,blog}
(replicaCount=2)|--set replicaCount=2
(leaderElection.enabled)|--set leaderElection.enabled=true
(ServiceMonitor)|--set serviceMonitor.enabled=true
(everything on)|--set watchNamespaces={shop} --set replicaCount=3 --set serviceMonitor.enabled=true --set operator.maxConcurrent=4
(rbac.podMetrics=false)|--set rbac.podMetrics=false
(generators.enabled=false)|--set generators.enabled=false
EOT

kubectl kustomize "$ROOT/manifests" >"$tmp/kustomize.yaml"
policy_ok "kubectl kustomize manifests/" "$tmp/kustomize.yaml"
expect "kustomize: the manifests hold the namespace, enforcing restricted PSS" "$tmp/kustomize.yaml" \
    'one("Namespace")["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"'

# Least privilege, exactly: every rule the chart grants, in cluster-wide and namespaced mode.
watch_rules='[
  (("apps",), ("deployments",), ("create", "delete", "get", "list", "patch", "update", "watch")),
  (("",), ("pods", "services"), ("get", "list", "watch")),
  (("",), ("pods/resize",), ("patch",)),
  (("",), ("configmaps",), ("create", "delete", "get", "list", "patch", "update", "watch")),
  (("events.k8s.io",), ("events",), ("create", "patch")),
  (("metrics.k8s.io",), ("pods",), ("get", "list")),
]'
norm='lambda rules: sorted((tuple(r["apiGroups"]), tuple(r["resources"]), tuple(sorted(r["verbs"]))) for r in rules)'
node_rule='[(("",), ("nodes",), ("list",))]'
# The DaemonSets' templates (the cost by packing): list on daemonsets, in both modes; never a
# cluster-wide pods list in the namespaced mode.
ds_rule='[(("apps",), ("daemonsets",), ("list",))]'
expect "RBAC (cluster-wide): the ClusterRole grants exactly the documented rules" "$tmp/r1.yaml" \
    "($norm)(one(\"ClusterRole\")[\"rules\"]) == sorted($watch_rules + $node_rule + $ds_rule)"
expect "RBAC (namespaced): each namespace's Role grants exactly the documented rules" "$tmp/r2.yaml" \
    "all(($norm)(r[\"rules\"]) == sorted($watch_rules) for r in of(\"Role\") if r[\"metadata\"][\"namespace\"] != \"sizeup\")"
expect "RBAC (namespaced): the only cluster-wide grants are list on nodes and on daemonsets" "$tmp/r2.yaml" \
    "($norm)(one(\"ClusterRole\")[\"rules\"]) == sorted($node_rule + $ds_rule)"
expect "RBAC (namespaced): no ClusterRole grants anything on pods" "$tmp/r2.yaml" \
    "not any(\"pods\" in res for r in of(\"ClusterRole\") for rule in r[\"rules\"] for res in rule[\"resources\"])"
expect "RBAC: the Lease Role may create Leases and get/update only its own one" "$tmp/r1.yaml" \
    '[r for r in of("Role") if r["metadata"]["name"] == "sizeup-leader-election"][0]["rules"] == [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]}, {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["sizeup-leader"], "verbs": ["get", "update"]}]'
expect "RBAC: the generators' Role creates, deletes and lists Jobs, reads pods and lists Events, in its namespace only" "$tmp/r2.yaml" \
    "[(r[\"metadata\"][\"namespace\"], ($norm)(r[\"rules\"])) for r in of(\"Role\") if r[\"metadata\"][\"name\"] == \"sizeup-generators\"] == [(\"sizeup\", sorted([((\"batch\",), (\"jobs\",), (\"create\", \"delete\", \"list\")), ((\"\",), (\"pods\",), (\"get\", \"list\")), ((\"\",), (\"events\",), (\"list\",))]))]"
expect "RBAC: the generators' ServiceAccount mounts no token and nothing binds it" "$tmp/r1.yaml" \
    '[s.get("automountServiceAccountToken") for s in of("ServiceAccount") if s["metadata"]["name"] == "sizeup-generator"] == [False] and not any(x.get("name") == "sizeup-generator" for b in of("RoleBinding") + of("ClusterRoleBinding") for x in b.get("subjects", []))'
expect "generators.enabled=false: no generator Role, ServiceAccount or Job settings" "$tmp/r8.yaml" \
    'not [o for o in of("Role") + of("ServiceAccount") if "generator" in o["metadata"]["name"]] and "SIZEUP_GENERATOR_IMAGE" not in str(one("Deployment"))'
expect "RBAC (podMetrics=false): no metrics.k8s.io rule" "$tmp/r7.yaml" \
    "($norm)(one(\"ClusterRole\")[\"rules\"]) == sorted(${watch_rules}[:-1] + $node_rule + $ds_rule)"

# The checker catches each violation it claims to, on a broken copy of a compliant object.
if "$PY" "$ROOT/tests/policy/test_check_policy.py" "$tmp/r1.yaml" >"$tmp/neg.log" 2>&1; then
    PASSED=$((PASSED + 1))
    echo "ok   the checker catches every deliberately broken object ($(tail -n 1 "$tmp/neg.log"))"
else
    FAILED=$((FAILED + 1))
    echo "FAIL the checker missed a deliberately broken object:"; sed 's/^/     /' "$tmp/neg.log"
fi
# And it refuses input that is not Kubernetes objects rather than passing it.
printf 'just: text\n' >"$tmp/junk.yaml"
must_fail "the checker refuses a document that is not a Kubernetes object" "not a Kubernetes object" \
    "$PY" "$checker" "$tmp/junk.yaml"

finish
