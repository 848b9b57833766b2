#!/usr/bin/env bash
# Zones and disruption in the tools users apply them with: for the issue's case (the target needs
# 6 pods, 3 zones, drain 1) pdb.yaml is accepted by `kubectl apply --dry-run=client` against the
# fake API server (which serves policy/v1), stored with minAvailable 6 and the Deployment's labels
# by a real apply, and deployment-patch.yaml, applied with `kubectl patch --type strategic`, gives
# the Deployment 9 replicas spread over the zones by the same labels.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$ROOT/build/asan}
# shellcheck source=tests/policy/env.sh
. "$ROOT/tests/policy/env.sh"
need_pyyaml
need_kubectl
# shellcheck source=tests/fakeapi/lib.sh
. "$ROOT/tests/fakeapi/lib.sh"
fake_require
gen="$BUILD/tests/test_output_pdb"
[ -x "$gen" ] || { echo "FAIL $gen is not built (make unit-bins)"; exit 1; }

tmp=$(mktemp -d)
cleanup() {
    fake_stop
    rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/out"
"$gen" --write "$tmp/out"
fake_start "$tmp/fake" --no-kubelet

if out=$(k apply --dry-run=client -f "$tmp/out/pdb.yaml" 2>&1) &&
    grep -q "poddisruptionbudget.policy/web created (dry run)" <<<"$out"; then
    PASSED=$((PASSED + 1)); echo "ok   kubectl apply --dry-run=client accepts pdb.yaml: $out"
else
    FAILED=$((FAILED + 1)); echo "FAIL kubectl apply --dry-run=client -f pdb.yaml: $out"
fi
# The check can fail: a version the API does not serve is refused.
sed 's#policy/v1#policy/v9#' "$tmp/out/pdb.yaml" >"$tmp/bad.yaml"
must_fail "kubectl refuses a PodDisruptionBudget of an unserved version" "no matches for kind" \
    k apply --dry-run=client --validate=false -f "$tmp/bad.yaml"
k apply -f "$tmp/out/pdb.yaml" >/dev/null
k get pdb web -o yaml >"$tmp/pdb-got.yaml"
expect "kubectl apply + get: minAvailable 6, the Deployment's labels" "$tmp/pdb-got.yaml" \
    "one('PodDisruptionBudget')['spec'] == {'minAvailable': 6, 'selector': {'matchLabels': {'app.kubernetes.io/name': 'web'}}}"

k apply -f "$ROOT/manifests/examples/web.yaml" >/dev/null
if out=$(k patch deployment web --type strategic --patch-file "$tmp/out/deployment-patch.yaml" 2>&1); then
    PASSED=$((PASSED + 1)); echo "ok   kubectl patch --type strategic accepts deployment-patch.yaml: $out"
else
    FAILED=$((FAILED + 1)); echo "FAIL kubectl patch deployment-patch.yaml: $out"
fi
k get deployment web -o yaml >"$tmp/dep.yaml"
expect "the patched Deployment runs 9 replicas" "$tmp/dep.yaml" \
    "one('Deployment')['spec']['replicas'] == 9"
expect "the patched Deployment spreads them over the zones by its own labels" "$tmp/dep.yaml" \
    "one('Deployment')['spec']['template']['spec']['topologySpreadConstraints'] == [{'maxSkew': 1, 'topologyKey': 'topology.kubernetes.io/zone', 'whenUnsatisfiable': 'DoNotSchedule', 'labelSelector': {'matchLabels': {'app.kubernetes.io/name': 'web'}}}]"
expect "the patch keeps the container's image" "$tmp/dep.yaml" \
    "one('Deployment')['spec']['template']['spec']['containers'][0]['image'] == 'example/web:1'"
finish
