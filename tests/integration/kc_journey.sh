#!/usr/bin/env bash
# The real control plane's smoke set (tests/kcluster: etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler of one Kubernetes release built from Go modules,
# the process kubelet; docs/testing.md), one cluster for all of it:
#   1. the sizeup namespace enforces the restricted Pod Security Standard: the real admission
#      refuses a privileged pod there; helm installs the chart there, and the operator runs as
#      the chart's pod, with its projected ServiceAccount token, admitted;
#   2. the user's app from its own chart (installed with helm v4, built from helm.sh/helm/v4; the
#      operator's chart with helm v3); a capacity sweep of two variants with a target load ends
#      `done`; the real authorizer refused none of the operator's requests (the API server's
#      audit log);
#   3. one variant in resize mode: the pod's CPU changed in place through the resize
#      subresource (the same pod, its cgroup following), and put back;
#   4. every manifest sizeup emitted passes `kubectl apply --dry-run=server`: the app chart
#      rendered with values.yaml, hpa.yaml, keda.yaml (against KEDA's own ScaledObject CRD, from
#      KEDA's Go module), pdb.yaml, the Deployment patch; then `helm upgrade` (v4) with the
#      values, and the Deployment carries them;
#   5. `kcluster.sh down` leaves no process, network namespace or cgroup of the cluster.
# Under CI=true a missing Go fails (the control plane is built from Go modules); elsewhere it
# skips. The first run on a machine builds the control plane (tests/kcluster/build.sh).
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SIZEUP=$(realpath "${SIZEUP:-$ROOT/build/sizeup}")
. "$ROOT/tests/lib/common.sh"
. "$ROOT/tests/policy/env.sh"
need_helm
need python3 curl openssl ip
command -v go >/dev/null || {
    [ "${CI:-}" = true ] && fail "go is not installed: the real control plane is built from Go modules (apt-get install golang, or Go 1.26 from the Go module proxy's toolchain)"
    skip "go is not installed (the real control plane is built from Go modules)"
}
[ "$(id -u)" -eq 0 ] || skip "the process kubelet needs root (network namespaces, cgroups)"
[ -x "$SIZEUP" ] || fail "no sizeup binary at $SIZEUP (run make first)"
KC=$ROOT/tests/kcluster/kcluster.sh
workdir W kc-journey
T0=$SECONDS

cat >"$W/images.json" <<EOF
{
  "example/web:*": {"command": ["python3", "\${FAKEAPI_APPS}/web.py"]},
  "registry.example.com/sizeup:*": {
    "entrypoint": ["$SIZEUP"], "cmd": ["operator"],
    "env": {"ASAN_OPTIONS": "${ASAN_OPTIONS:-detect_leaks=1}",
            "UBSAN_OPTIONS": "${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"}
  }
}
EOF
on_exit "$KC" down "$W/kc"
"$KC" up "$W/kc" --images "$W/images.json" --nodes 1 || fail "kcluster.sh up failed (logs in $W/kc/logs)"
# shellcheck source=/dev/null
. "$W/kc/env"
ver=$(kubectl version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')
built=$(cat "$("$ROOT/tests/kcluster/build.sh" --print-bin)/VERSION")
[ "$ver" = "$built" ] || fail "/version says '$ver', the release built is '$built'"
kubectl get --raw '/readyz?verbose' | grep -q '^\[+\]etcd ok' || fail "/readyz?verbose has no passing etcd check"
nfs=$(kubectl get flowschemas -o name | wc -l)
[ "$nfs" -gt 0 ] || fail "no FlowSchemas: API priority and fairness is off"
echo "== the cluster: $ver (/version), /readyz's etcd check ok, $nfs FlowSchemas; up in $((SECONDS - T0)) s"

# denials USER: the audit log's 403s for USER (the real authorizer's refusals).
denials() {
    python3 - "$W/kc/logs/audit.log" "$1" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("user", {}).get("username") == sys.argv[2] and \
            e.get("responseStatus", {}).get("code") == 403:
        n += 1
        if n <= 5:
            print("403:", e.get("verb"), e.get("requestURI"), file=sys.stderr)
print(n)
PY
}
wait_status() { # DEPLOYMENT REGEX SECONDS
    local st="" until=$((SECONDS + $3))
    while [ $SECONDS -lt $until ]; do
        st=$(kubectl get deployment "$1" -o jsonpath='{.metadata.annotations.sizeup\.dev/status}')
        [[ "$st" =~ $2 ]] && return 0
        [[ "$st" == failed* ]] && break
        sleep 1
    done
    kubectl -n sizeup logs deployment/sizeup --tail=40 2>/dev/null | sed 's/^/  op| /'
    fail "$1: status '$st', wanted /$2/ within $3 s"
}

echo "== 1. restricted Pod Security in the sizeup namespace; the chart installs there"
kubectl create namespace sizeup >/dev/null || fail "create namespace"
kubectl label namespace sizeup pod-security.kubernetes.io/enforce=restricted \
    pod-security.kubernetes.io/enforce-version=latest >/dev/null || fail "label namespace"
if kubectl -n sizeup run privileged --image=example/web:1 --restart=Never \
    --overrides='{"spec":{"containers":[{"name":"privileged","image":"example/web:1","securityContext":{"privileged":true}}]}}' \
    --dry-run=server -o name >"$W/pss.out" 2>&1; then
    fail "the restricted namespace admitted a privileged pod"
fi
grep -q 'violates PodSecurity "restricted' "$W/pss.out" || fail "not refused by Pod Security: $(cat "$W/pss.out")"
echo "  a privileged pod: $(grep -o 'violates PodSecurity "restricted:[^"]*"' "$W/pss.out")"
"$HELM" install sizeup "$ROOT/charts/sizeup" -n sizeup \
    --set image.repository=registry.example.com/sizeup >"$W/helm-install.out" ||
    fail "helm install sizeup"
kubectl -n sizeup rollout status deployment/sizeup --timeout=120s >/dev/null ||
    { kubectl -n sizeup get pods -o wide; kubectl -n sizeup get events; fail "the operator did not become ready"; }
op_pod=$(kubectl -n sizeup get pods -l app.kubernetes.io/instance=sizeup -o jsonpath='{.items[0].metadata.name}')
echo "  the operator runs as pod $op_pod ($(kubectl -n sizeup get pod "$op_pod" -o jsonpath='{.status.podIP}'))"

echo "== 2. the app from its own chart (helm v4); a capacity sweep with a target"
HELM4=$(dirname "$(command -v kubectl)")/helm
"$HELM4" version --template '{{.Version}}' | grep -q '^v4\.' || fail "no helm v4 at $HELM4"
cp -r "$ROOT/tests/integration/fixtures/app-chart" "$W/chart"
"$HELM4" install app "$W/chart" >/dev/null || fail "helm v4 install app"
kubectl rollout status deployment/app --timeout=90s >/dev/null || fail "the app did not roll out"
kubectl apply -f - >/dev/null <<'YAML' || fail "the profile"
apiVersion: v1
kind: ConfigMap
metadata: {name: app-profile}
data:
  profile.yaml: |
    users: 8
    timeout: 5s
    search: { window: 1s, warmup: 500ms, repeats: 3, max_steps: 5 }
    slo: { p95: 300ms, errors: 1% }
    availability: { zones: 1 }
    requests:
      - { name: work, method: GET, path: "/work?ms=4" }
YAML
t=$SECONDS
kubectl annotate deployment app --overwrite sizeup.dev/profile=app-profile \
    "sizeup.dev/configs=1@0.25/128Mi 1@0.5/128Mi" sizeup.dev/target-load=60rps \
    sizeup.dev/sweep=kc-1 >/dev/null
wait_status app '^done$' 300
echo "  capacity sweep done in $((SECONDS - t)) s"
kubectl get configmap app-sizing -o json >"$W/sizing.json" || fail "no app-sizing ConfigMap"
python3 - "$W/sizing.json" "$W" <<'PY' || fail "the results are not as expected"
import json, os, sys
cm = json.load(open(sys.argv[1]))["data"]
r = json.loads(cm["results.json"])
for v in r["variants"]:
    c = v.get("slo_capacity") or {}
    print("  %s: %s, capacity %s req/s %s" % (v["spec"], v["state"], c.get("rps"), c.get("interval")))
assert all(v["state"] == "measured" for v in r["variants"]), [v["state_text"] for v in r["variants"]]
assert r["recommendation"] is not None, "no recommendation"
print("  autoscaler:", json.dumps(r["recommendation"].get("hpa")))
for k in ("values.yaml", "hpa.yaml", "pdb.yaml", "keda.yaml", "deployment-patch.yaml"):
    if k in cm:
        open(os.path.join(sys.argv[2], k), "w").write(cm[k])
print("  keys:", sorted(cm))
PY
n=$(denials system:serviceaccount:sizeup:sizeup)
[ "$n" = 0 ] || fail "the real authorizer refused $n of the operator's requests (chart RBAC)"
echo "  the real authorizer refused none of the operator's $(grep -c '"username":"system:serviceaccount:sizeup:sizeup"' "$W/kc/logs/audit.log") requests"

echo "== 3. one variant in resize mode: the pod resized in place"
pod=$(kubectl get pods -l app.kubernetes.io/instance=app -o jsonpath='{.items[0].metadata.name}')
uid=$(kubectl get pod "$pod" -o jsonpath='{.metadata.uid}')
# A search on the Deployment's own pod reaches its users: the operator wants a ceiling.
kubectl get configmap app-profile -o json | python3 -c '
import json, sys
cm = json.load(sys.stdin)
cm["data"]["profile.yaml"] = cm["data"]["profile.yaml"].replace("max_steps: 5", "max_steps: 5, max_rps: 150")
print(json.dumps(cm))' | kubectl replace -f - >/dev/null || fail "the profile with a ceiling"
# With the chart's autoscaling block unmapped, the autoscaler comes as a manifest of its own
# (hpa.yaml, or keda.yaml for a request-rate one), which step 4 dry-runs too.
kubectl annotate deployment app --overwrite sizeup.dev/mode=resize \
    "sizeup.dev/configs=1@0.3/128Mi" "sizeup.dev/values-paths=workers=workers.count,resources=resources,replicas=replicaCount,autoscaling=" \
    sizeup.dev/sweep=kc-2 >/dev/null
wait_status app '^done$' 180
[ "$(kubectl get pod "$pod" -o jsonpath='{.metadata.uid}' 2>/dev/null)" = "$uid" ] ||
    fail "the pod was replaced: a resize keeps it"
kubectl get configmap app-sizing -o json >"$W/sizing-resize.json" || fail "no app-sizing ConfigMap"
python3 - "$W/sizing-resize.json" "$W" "$pod" <<'PY' || fail "not applied by resize"
import json, os, sys
cm = json.load(open(sys.argv[1]))["data"]
r = json.loads(cm["results.json"])
v = r["variants"][0]
assert v.get("applied_by") == "resize", v.get("applied_by")
print("  %s applied by resize on pod %s, the pod kept" % (v["spec"], sys.argv[3]))
h = (r.get("recommendation") or {}).get("hpa")
print("  autoscaler with the autoscaling block unmapped:", json.dumps(h))
for k in ("hpa.yaml", "keda.yaml"):
    if k in cm:
        open(os.path.join(sys.argv[2], k), "w").write(cm[k])
PY

echo "== 4. every emitted manifest, dry-run on the server; helm upgrade with the values"
[ -s "$W/values.yaml" ] || fail "no values.yaml"
"$HELM" template app "$W/chart" -f "$W/values.yaml" >"$W/render.yaml" || fail "helm template -f values.yaml"
kubectl apply --dry-run=server -f "$W/render.yaml" >/dev/null 2>"$W/render.err" ||
    { cat "$W/render.err"; fail "the chart rendered with values.yaml"; }
for f in pdb.yaml deployment-patch.yaml; do
    [ -s "$W/$f" ] || fail "the sweep with a target wrote no $f"
done
checked="values.yaml (through the chart)"
if [ -s "$W/hpa.yaml" ]; then
    kubectl apply --dry-run=server -f "$W/hpa.yaml" >/dev/null || fail "hpa.yaml"
    checked="$checked, hpa.yaml"
fi
if [ -s "$W/keda.yaml" ]; then
    crd=$("$ROOT/tests/kcluster/keda-crd.sh") || fail "KEDA's ScaledObject CRD"
    kubectl apply --server-side -f "$crd" >/dev/null || fail "installing KEDA's CRD"
    kubectl wait --for condition=established crd/scaledobjects.keda.sh --timeout=30s >/dev/null ||
        fail "KEDA's CRD not established"
    kubectl apply --dry-run=server -f "$W/keda.yaml" >/dev/null || fail "keda.yaml against KEDA's CRD"
    checked="$checked, keda.yaml (KEDA's CRD)"
fi
kubectl apply --dry-run=server -f "$W/pdb.yaml" >/dev/null || fail "pdb.yaml"
kubectl patch deployment app --dry-run=server --type strategic --patch-file "$W/deployment-patch.yaml" \
    >/dev/null || fail "deployment-patch.yaml"
echo "  $checked, pdb.yaml and deployment-patch.yaml pass the server's dry run"
"$HELM4" upgrade app "$W/chart" -f "$W/values.yaml" >/dev/null || fail "helm v4 upgrade"
kubectl rollout status deployment/app --timeout=90s >/dev/null || fail "no rollout after helm upgrade"
python3 - "$W/values.yaml" <<'PY' || fail "the Deployment does not carry the values"
import json, subprocess, sys, yaml
v = yaml.safe_load(open(sys.argv[1]))
d = json.loads(subprocess.check_output(["kubectl", "get", "deployment", "app", "-o", "json"]))
c = d["spec"]["template"]["spec"]["containers"][0]
lim = c["resources"]["limits"]
print("  the Deployment after helm upgrade: limits", lim, "replicas", d["spec"]["replicas"])
assert lim == v["resources"]["limits"], (lim, v["resources"]["limits"])
if "replicaCount" in v:
    assert d["spec"]["replicas"] == v["replicaCount"], (d["spec"]["replicas"], v["replicaCount"])
PY

echo "== 5. down"
"$KC" down "$W/kc" || fail "kcluster.sh down"
left=$(ip netns list | grep -c '^skc-' || true)
[ "$left" = 0 ] || fail "$left network namespaces of the cluster left"
echo "kc journey: ok in $((SECONDS - T0)) s"
