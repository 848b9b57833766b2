#!/usr/bin/env bash
# The sizing answer in the tools users apply it with: the values.yaml sizeup writes for a target,
# given to `helm template` of a chart made by `helm create`, renders a Deployment with the
# recommended resources and replicas and, when CPU tracks load, an HPA with the recommended
# bounds and CPU target; when it does not, hpa.yaml is on the request rate and keda.yaml (checked
# against KEDA's documented ScaledObject fields) has the same threshold. hpa.yaml is accepted by
# `kubectl apply --dry-run=client` (against the fake API server, which kubectl needs for
# discovery) and round-trips through a real apply.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$ROOT/build/asan}
# shellcheck source=tests/policy/env.sh
. "$ROOT/tests/policy/env.sh"
need_helm
need_pyyaml
need_kubectl
# shellcheck source=tests/fakeapi/lib.sh
. "$ROOT/tests/fakeapi/lib.sh"
fake_require
gen="$BUILD/tests/test_output_hpa"
[ -x "$gen" ] || { echo "FAIL $gen is not built (make unit-bins)"; exit 1; }

tmp=$(mktemp -d)
cleanup() {
    fake_stop
    rm -rf "$tmp"
}
trap cleanup EXIT

# Two sizings for a target of 5000 req/s, computed by sizing_run: a CPU-bound app (an HPA) and an
# app whose CPU does not grow with load (replicas only). One line each: the numbers to find.
"$gen" --write "$tmp/out" >"$tmp/numbers"
cat "$tmp/numbers"
num() { # SET KEY
    sed -n "s/^$1 .*\b$2=\([0-9]*\).*/\1/p" "$tmp/numbers"
}

"$HELM" create "$tmp/app" >/dev/null
echo "helm: $HELM ($("$HELM" version --template '{{.Version}}')), chart made by helm create"

# --- CPU-bound: autoscaling on, the HPA carries the recommended numbers.
"$HELM" template app "$tmp/app" -f "$tmp/out/hpa/values.yaml" >"$tmp/hpa-render.yaml"
f="$tmp/hpa-render.yaml"
min=$(num hpa min) max=$(num hpa max) util=$(num hpa util) cpu=$(num hpa cpu)
expect "hpa: one Deployment and one HorizontalPodAutoscaler" "$f" \
    'len(of("Deployment")) == 1 and len(of("HorizontalPodAutoscaler")) == 1'
expect "hpa: the HPA is autoscaling/v2 and scales the Deployment" "$f" \
    'one("HorizontalPodAutoscaler")["apiVersion"] == "autoscaling/v2" and one("HorizontalPodAutoscaler")["spec"]["scaleTargetRef"]["name"] == one("Deployment")["metadata"]["name"]'
expect "hpa: minReplicas $min, maxReplicas $max" "$f" \
    "one('HorizontalPodAutoscaler')['spec']['minReplicas'] == $min and one('HorizontalPodAutoscaler')['spec']['maxReplicas'] == $max"
expect "hpa: CPU target $util%" "$f" \
    "[m['resource']['target']['averageUtilization'] for m in one('HorizontalPodAutoscaler')['spec']['metrics'] if m['resource']['name'] == 'cpu'] == [$util]"
expect "hpa: the Deployment leaves replicas to the HPA" "$f" \
    '"replicas" not in one("Deployment")["spec"]'
expect "hpa: the container gets the recommended resources (requests.cpu ${cpu}m)" "$f" \
    "one('Deployment')['spec']['template']['spec']['containers'][0]['resources'] == {'limits': {'cpu': '1000m', 'memory': '512Mi'}, 'requests': {'cpu': '${cpu}m', 'memory': '125Mi'}}"

# --- Not CPU-bound: the chart's HPA off (it templates CPU only), the replica count; hpa.yaml on
# the request rate (a Pods metric at the planned req/s per pod) and keda.yaml at the same
# threshold, checked against the ScaledObject schema from KEDA's documented fields.
"$HELM" template app "$tmp/app" -f "$tmp/out/static/values.yaml" >"$tmp/static-render.yaml"
f="$tmp/static-render.yaml"
reps=$(num static replicas)
smin=$(num static min) smax=$(num static max)
avg=$(sed -n 's/^static .*\bavg=\([0-9.]*\).*/\1/p' "$tmp/numbers")
expect "static: the chart renders no HorizontalPodAutoscaler" "$f" 'of("HorizontalPodAutoscaler") == []'
expect "static: the Deployment runs $reps replicas" "$f" \
    "one('Deployment')['spec']['replicas'] == $reps"
expect "static: hpa.yaml scales on the Pods metric at averageValue $avg, $smin to $smax" \
    "$tmp/out/static/hpa.yaml" \
    "(lambda s: s['metrics'] == [{'type': 'Pods', 'pods': {'metric': {'name': 'http_requests_per_second'}, 'target': {'type': 'AverageValue', 'averageValue': '$avg'}}}] and (s['minReplicas'], s['maxReplicas']) == ($smin, $smax))(one('HorizontalPodAutoscaler')['spec'])"
if out=$(/usr/bin/python3 "$ROOT/tests/integration/lib/keda_check.py" "$tmp/out/static/keda.yaml" \
    "$avg" "$smin" "$smax" 2>&1); then
    PASSED=$((PASSED + 1)); echo "ok   static: $out"
else
    FAILED=$((FAILED + 1)); echo "FAIL static: keda.yaml: $out"
fi
# The schema check can fail: a numeric threshold (KEDA's metadata is strings) is refused.
sed 's/threshold: "\(.*\)"/threshold: \1/' "$tmp/out/static/keda.yaml" >"$tmp/bad-keda.yaml"
must_fail "the schema refuses a ScaledObject whose threshold is not a string" "ValidationError" \
    /usr/bin/python3 "$ROOT/tests/integration/lib/keda_check.py" "$tmp/bad-keda.yaml"
[ ! -e "$tmp/out/hpa/keda.yaml" ] && { PASSED=$((PASSED + 1)); echo "ok   hpa: no keda.yaml for a CPU HPA"; } ||
    { FAILED=$((FAILED + 1)); echo "FAIL hpa: keda.yaml beside a CPU HPA"; }

# --- hpa.yaml with kubectl, against the fake API server.
fake_start "$tmp/fake" --no-kubelet
# One autoscaler path: values.yaml carries the CPU HPA (no hpa.yaml beside it); with the
# autoscaling key unmapped, hpa.yaml does (no autoscaling block in values.yaml).
[ ! -e "$tmp/out/hpa/hpa.yaml" ] && ! grep -q autoscaling "$tmp/out/hpa-file/values.yaml" &&
    { PASSED=$((PASSED + 1)); echo "ok   one autoscaler path: values.yaml's block or hpa.yaml, never both"; } ||
    { FAILED=$((FAILED + 1)); echo "FAIL an autoscaler in both values.yaml and hpa.yaml"; }
if out=$(k apply --dry-run=client -f "$tmp/out/hpa-file/hpa.yaml" 2>&1) &&
    grep -q "horizontalpodautoscaler.autoscaling/app created (dry run)" <<<"$out"; then
    PASSED=$((PASSED + 1)); echo "ok   kubectl apply --dry-run=client accepts hpa.yaml: $out"
else
    FAILED=$((FAILED + 1)); echo "FAIL kubectl apply --dry-run=client -f hpa.yaml: $out"
fi
if out=$(k apply --dry-run=client -f "$tmp/out/static/hpa.yaml" 2>&1) &&
    grep -q "horizontalpodautoscaler.autoscaling/app created (dry run)" <<<"$out"; then
    PASSED=$((PASSED + 1)); echo "ok   kubectl apply --dry-run=client accepts the request-rate hpa.yaml: $out"
else
    FAILED=$((FAILED + 1)); echo "FAIL kubectl apply --dry-run=client -f static/hpa.yaml: $out"
fi
# The check can fail: a kind the API does not serve is refused.
sed 's#autoscaling/v2#autoscaling/v9#' "$tmp/out/hpa-file/hpa.yaml" >"$tmp/bad.yaml"
must_fail "kubectl refuses an HPA of an unserved version" "no matches for kind" \
    k apply --dry-run=client --validate=false -f "$tmp/bad.yaml"
k apply -f "$tmp/out/hpa-file/hpa.yaml" >/dev/null
k get hpa app -o yaml >"$tmp/got.yaml"
expect "kubectl apply + get: the stored HPA has the recommended numbers" "$tmp/got.yaml" \
    "(lambda s: s['minReplicas'] == $min and s['maxReplicas'] == $max and s['metrics'][0]['resource']['target'] == {'type': 'Utilization', 'averageUtilization': $util} and s['scaleTargetRef'] == {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'name': 'app'})(one('HorizontalPodAutoscaler')['spec'])"

finish
