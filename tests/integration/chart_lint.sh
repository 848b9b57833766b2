#!/usr/bin/env bash
# The Helm chart with real helm: `helm lint --strict`, `helm template` with the default values and
# with each documented option (namespaced mode, leader election, ServiceMonitor), what each option
# changes in the rendered objects, NOTES.txt, and the schema rejecting wrong types and unknown keys.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/policy/env.sh
. "$ROOT/tests/policy/env.sh"
need_helm
need_pyyaml

chart="$ROOT/charts/sizeup"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "helm: $HELM ($("$HELM" version --template '{{.Version}}'))"

render() { # OUT-NAME, extra helm flags...
    local out="$tmp/$1.yaml"
    shift
    "$HELM" template sizeup "$chart" --namespace sizeup "$@" >"$out"
}

# --- lint, with the defaults and with every option turned on.
lint_ok() {
    local desc=$1 out
    shift
    if out=$("$HELM" lint --strict "$chart" --namespace sizeup "$@" 2>&1); then
        PASSED=$((PASSED + 1)); echo "ok   helm lint --strict $desc"
    else
        FAILED=$((FAILED + 1)); echo "FAIL helm lint --strict $desc"; sed 's/^/     /' <<<"$out"
    fi
}
lint_ok "(defaults)"
lint_ok "(namespaced, 2 replicas, ServiceMonitor, progress.public)" --set 'watchNamespaces={shop,blog}' \
    --set operator.progress.public=true \
    --set replicaCount=2 --set serviceMonitor.enabled=true

# --- defaults: cluster-wide, one replica, no leader election, no ServiceMonitor.
render default
f="$tmp/default.yaml"
expect "default: one Deployment and Service; the operator's and the generators' ServiceAccounts" "$f" \
    'len(of("Deployment")) == 1 and sorted(a["metadata"]["name"] for a in of("ServiceAccount")) == ["sizeup", "sizeup-generator"] and len(of("Service")) == 1'
expect "default: cluster-wide RBAC" "$f" \
    'len(of("ClusterRole")) == 1 and len(of("ClusterRoleBinding")) == 1'
expect "default: the only Roles are the Lease one and the generators', in the release namespace" "$f" \
    'sorted((r["metadata"]["name"], r["metadata"]["namespace"]) for r in of("Role")) == [("sizeup-generators", "sizeup"), ("sizeup-leader-election", "sizeup")]'
expect "default: ClusterRoleBinding binds the chart ServiceAccount" "$f" \
    'one("ClusterRoleBinding")["subjects"] == [{"kind": "ServiceAccount", "name": "sizeup", "namespace": "sizeup"}]'
expect "default: args are the operator with admin address, concurrency, log level" "$f" \
    'args == ["operator", "--admin-addr", ":8081", "--max-concurrent", "1", "--log-level", "info"]'
expect "default: no leader election, Recreate strategy" "$f" \
    '"--leader-elect" not in args and one("Deployment")["spec"]["strategy"]["type"] == "Recreate"'
expect "default: image is sizeup:<appVersion>" "$f" \
    'one("Deployment")["spec"]["template"]["spec"]["containers"][0]["image"] == "sizeup:0.1.0"'
expect "default: probes on /healthz and /readyz at the admin port" "$f" \
    '(lambda c: c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "admin"} and c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "admin"} and c["ports"] == [{"name": "admin", "containerPort": 8081, "protocol": "TCP"}])(one("Deployment")["spec"]["template"]["spec"]["containers"][0])'
expect "default: documented resources (limits 2 CPU / 512Mi, requests 500m / 128Mi)" "$f" \
    'one("Deployment")["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "2", "memory": "512Mi"}, "requests": {"cpu": "500m", "memory": "128Mi"}}'
expect "default: Service targets the admin port" "$f" \
    'one("Service")["spec"]["ports"][0]["targetPort"] == "admin" and one("Service")["spec"]["selector"] == one("Deployment")["spec"]["selector"]["matchLabels"]'
expect "default: no ServiceMonitor" "$f" 'of("ServiceMonitor") == []'
expect "default: every object has the app.kubernetes.io/* and helm.sh/chart labels" "$f" \
    'all(o["metadata"]["labels"].get(k) for o in objs for k in ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by", "helm.sh/chart"))'
expect "default: every namespaced object is in the release namespace" "$f" \
    'all(o["metadata"].get("namespace") == "sizeup" for o in objs if o["kind"] not in ("ClusterRole", "ClusterRoleBinding"))'

# --- namespaced mode: a Role and RoleBinding in each listed namespace, nothing cluster-wide.
render namespaced --set 'watchNamespaces={shop,blog}'
f="$tmp/namespaced.yaml"
expect "namespaced: nothing cluster-wide but the read-only nodes and DaemonSets list grants (never pods)" "$f" \
    '[c["metadata"]["name"] for c in of("ClusterRole")] == ["sizeup-nodes"] and one("ClusterRole")["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}, {"apiGroups": ["apps"], "resources": ["daemonsets"], "verbs": ["list"]}] and [b["roleRef"]["name"] for b in of("ClusterRoleBinding")] == ["sizeup-nodes"]'
render namespaced-nonodes --set 'watchNamespaces={shop,blog}' --set rbac.nodes=false
expect "namespaced, rbac.nodes=false: no ClusterRole or ClusterRoleBinding at all" "$tmp/namespaced-nonodes.yaml" \
    'of("ClusterRole") == [] and of("ClusterRoleBinding") == []'
expect "namespaced: one Role and RoleBinding per namespace, plus the Lease and generators' Roles" "$f" \
    'sorted((r["metadata"]["namespace"], r["metadata"]["name"]) for r in of("Role")) == [("blog", "sizeup"), ("shop", "sizeup"), ("sizeup", "sizeup-generators"), ("sizeup", "sizeup-leader-election")] and sorted(b["metadata"]["namespace"] for b in of("RoleBinding")) == ["blog", "shop", "sizeup", "sizeup"]'
expect "namespaced: RoleBindings bind the ServiceAccount of the release namespace" "$f" \
    'all(b["subjects"] == [{"kind": "ServiceAccount", "name": "sizeup", "namespace": "sizeup"}] for b in of("RoleBinding"))'
expect "namespaced: --namespace shop,blog" "$f" \
    'args[args.index("--namespace") + 1] == "shop,blog"'

# --- leader election: on with replicaCount 2, or asked for; the Lease in the release namespace.
render leader --set replicaCount=2
f="$tmp/leader.yaml"
expect "replicaCount=2: two replicas, --leader-elect, lease name and namespace" "$f" \
    'one("Deployment")["spec"]["replicas"] == 2 and "--leader-elect" in args and args[args.index("--lease-name") + 1] == "sizeup-leader" and args[args.index("--lease-namespace") + 1] == "sizeup"'
expect "replicaCount=2: RollingUpdate (the Lease keeps one active operator)" "$f" \
    'one("Deployment")["spec"]["strategy"]["type"] == "RollingUpdate"'
expect "replicaCount=2: the Lease Role names exactly that Lease" "$f" \
    '[r for r in of("Role") if r["metadata"]["name"] == "sizeup-leader-election"][0]["rules"][1]["resourceNames"] == ["sizeup-leader"]'
render leader1 --set leaderElection.enabled=true --set leaderElection.leaseName=my-lease
expect "leaderElection.enabled with 1 replica: --leader-elect, custom lease name" "$tmp/leader1.yaml" \
    '"--leader-elect" in args and args[args.index("--lease-name") + 1] == "my-lease" and one("Deployment")["spec"]["replicas"] == 1'

# --- ServiceMonitor.
render sm --set serviceMonitor.enabled=true --set serviceMonitor.labels.release=prom
f="$tmp/sm.yaml"
expect "serviceMonitor.enabled: a monitoring.coreos.com/v1 ServiceMonitor on the admin port" "$f" \
    '(lambda s: s["apiVersion"] == "monitoring.coreos.com/v1" and s["spec"]["endpoints"][0]["port"] == "admin" and s["spec"]["endpoints"][0]["path"] == "/metrics" and s["metadata"]["labels"]["release"] == "prom" and all(one("Service")["metadata"]["labels"].get(k) == v for k, v in s["spec"]["selector"]["matchLabels"].items()))(one("ServiceMonitor"))'

# --- the progress page off loopback: the flag and the one review rule, nothing else.
render progress --set operator.progress.public=true
f="$tmp/progress.yaml"
expect "operator.progress.public: --progress-public" "$f" '"--progress-public" in args'
expect "operator.progress.public: one rule, create tokenreviews and subjectaccessreviews" "$f" \
    '[c["rules"] for c in of("ClusterRole") if c["metadata"]["name"] == "sizeup-progress-auth"] == [[{"apiGroups": ["authentication.k8s.io", "authorization.k8s.io"], "resources": ["tokenreviews", "subjectaccessreviews"], "verbs": ["create"]}]] and [b["subjects"] for b in of("ClusterRoleBinding") if b["metadata"]["name"] == "sizeup-progress-auth"] == [[{"kind": "ServiceAccount", "name": "sizeup", "namespace": "sizeup"}]]'
expect "default: no --progress-public and no review rule" "$tmp/default.yaml" \
    '"--progress-public" not in args and all("tokenreviews" not in r["resources"] for c in of("ClusterRole") for r in c["rules"])'

# --- other values flow through.
render custom --set image.repository=registry.example/sizeup --set image.tag=dev \
    --set operator.maxConcurrent=3 --set operator.logLevel=debug --set operator.adminPort=9090 \
    --set 'operator.extraArgs={--max-concurrent,4}' --set rbac.podMetrics=false \
    --set serviceAccount.name=ops --set fullnameOverride=su
f="$tmp/custom.yaml"
expect "custom: image, admin port, concurrency, log level, extra args" "$f" \
    'one("Deployment")["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/sizeup:dev" and args == ["operator", "--admin-addr", ":9090", "--max-concurrent", "3", "--log-level", "debug", "--max-concurrent", "4"]'
expect "custom: names, ServiceAccount and no metrics.k8s.io rule" "$f" \
    'one("Deployment")["metadata"]["name"] == "su" and sorted(a["metadata"]["name"] for a in of("ServiceAccount")) == ["ops", "su-generator"] and one("Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == "ops" and all("metrics.k8s.io" not in r["apiGroups"] for r in one("ClusterRole")["rules"])'
render norbac --set rbac.create=false --set serviceAccount.create=false --set serviceAccount.name=existing
expect "rbac.create=false, serviceAccount.create=false: no RBAC, no ServiceAccount" "$tmp/norbac.yaml" \
    'of("ClusterRole") + of("Role") + of("ClusterRoleBinding") + of("RoleBinding") + of("ServiceAccount") == [] and one("Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == "existing"'

# --- the schema: wrong types, unknown keys and unsafe values are refused before rendering.
tpl() { "$HELM" template sizeup "$chart" --namespace sizeup "$@"; }
must_fail "schema: --set replicaCount=three" "replicaCount: Invalid type" tpl --set replicaCount=three
must_fail "schema: unknown top-level key" "Additional property replicas is not allowed" \
    tpl --set replicas=2
must_fail "schema: unknown nested key" "Additional property tags is not allowed" \
    tpl --set image.tags=x
must_fail "schema: unknown key from a values file" "Additional property nodeSelectors is not allowed" \
    tpl -f <(printf 'nodeSelectors:\n  disk: ssd\n')
must_fail "schema: runAsUser 0 (root)" "runAsUser: Must be greater than or equal to 1" \
    tpl --set securityContext.runAsUser=0
must_fail "schema: a namespace that is not a DNS label" "watchNamespaces.0" \
    tpl --set 'watchNamespaces={Shop_1}'
must_fail "schema: a CPU limit that is not a quantity" "resources.limits.cpu" \
    tpl --set resources.limits.cpu=lots
must_fail "schema: no memory limit" "memory is required" tpl --set resources.limits.memory=null
must_fail "schema: unknown log level" "operator.logLevel" tpl --set operator.logLevel=loud
must_fail "schema: boolean as a string" "serviceMonitor.enabled: Invalid type" \
    tpl --set-string serviceMonitor.enabled=yes
must_fail "serviceAccount.create=false needs a name" "serviceAccount.name is required" \
    tpl --set serviceAccount.create=false

# --- values.yaml is documented key by key, typed in the schema, and indexed in reference.md.
if out=$("$PY" - "$chart/values.yaml" "$chart/values.schema.json" "$ROOT/docs/reference.md" 2>&1 <<'PY'
import json, re, sys, yaml
text = open(sys.argv[1]).read().splitlines()
values = yaml.safe_load("\n".join(text))
schema = json.load(open(sys.argv[2]))
ref = open(sys.argv[3]).read()
problems = []
# Keys whose children are documented by the comment above the key itself.
GROUPS = {"resources", "securityContext"}
stack = []
for i, line in enumerate(text):
    m = re.match(r"^( *)([A-Za-z][A-Za-z0-9]*):", line)
    if not m:
        continue
    depth = len(m.group(1)) // 2
    stack = stack[:depth] + [m.group(2)]
    if depth > 1 or (depth == 1 and stack[0] in GROUPS):
        continue
    prev = next((text[j].strip() for j in range(i - 1, -1, -1) if text[j].strip()), "")
    if not prev.startswith("#") and not (depth == 0 and isinstance(values.get(stack[0]), dict)):
        problems.append("values.yaml:%d: %s has no comment above it" % (i + 1, ".".join(stack)))
def walk(v, sch, path):
    if sch.get("additionalProperties") is not False and path:
        problems.append("schema: %s allows unknown keys" % path)
    for k, sub in v.items():
        p = path + "." + k if path else k
        if k not in sch.get("properties", {}):
            problems.append("schema: %s is not in values.schema.json" % p)
            continue
        s2 = sch["properties"][k]
        if isinstance(sub, dict) and s2.get("type") == "object" and "properties" in s2:
            walk(sub, s2, p)
if schema.get("additionalProperties") is not False:
    problems.append("schema: the top level allows unknown keys")
walk(values, schema, "")
for k, v in values.items():
    names = [k] if not isinstance(v, dict) or k in GROUPS else [k + "." + c for c in v]
    for n in names:
        if "`%s" % n not in ref and "`%s`" % k not in ref:
            problems.append("reference.md: no row for %s" % n)
print("\n".join(problems))
sys.exit(1 if problems else 0)
PY
); then
    PASSED=$((PASSED + 1)); echo "ok   values.yaml: every key commented, in the schema (unknown keys refused), and in reference.md"
else
    FAILED=$((FAILED + 1)); echo "FAIL values.yaml documentation:"; sed 's/^/     /' <<<"$out"
fi

# --- NOTES.txt: helm only renders it on install, which needs a cluster; render a copy of it as a
# template instead and read it from helm's --debug output.
cp -r "$chart" "$tmp/chart"
cp "$tmp/chart/templates/NOTES.txt" "$tmp/chart/templates/notes.yaml"
"$HELM" template sizeup "$tmp/chart" --namespace sizeup --show-only templates/notes.yaml --debug \
    >"$tmp/notes.raw" 2>&1 || true
sed -n '/^# Source: sizeup\/templates\/notes.yaml/,/^Error: YAML parse error/p' "$tmp/notes.raw" \
    | sed '1d;$d' >"$tmp/notes.txt"
for want in "kubectl annotate deployment app sizeup.dev/sweep=" \
    "jsonpath='{.metadata.annotations.sizeup\\.dev/status}'" "kubectl get events --field-selector involvedObject.name=app" \
    "jsonpath='{.data.values\\.yaml}' > sizing.yaml" "helm upgrade app ./chart -f sizing.yaml" \
    "It watches Deployments in every namespace."; do
    if grep -qF -- "$want" "$tmp/notes.txt"; then
        PASSED=$((PASSED + 1)); echo "ok   NOTES.txt says: $want"
    else
        FAILED=$((FAILED + 1)); echo "FAIL NOTES.txt lacks: $want"; cat "$tmp/notes.txt"
    fi
done

finish
