#!/usr/bin/env bash
# The user's whole journey through docs/getting-started.md, section 2, against the fake API
# server (tests/fakeapi) with real helm and kubectl:
#   1. `helm install sizeup charts/sizeup ...` with the chart's defaults and the guide's image;
#      the fake's image map runs $SIZEUP for that image, so the operator runs AS THE POD: the
#      chart's args, in-cluster config from the ServiceAccount volume the fake's kubelet mounts
#      at /var/run/secrets/kubernetes.io/serviceaccount in the pod's own mount namespace, and
#      KUBERNETES_SERVICE_HOST/PORT; the chart's RBAC is what authorizes it; the kubelet's
#      probes on the admin port make it Ready;
#   2. the user's app, installed from its own chart (tests/integration/fixtures/app-chart),
#      annotated with `kubectl annotate`, sweeps to `done` with a short fixed-load profile;
#   3. the results are read with the guide's `kubectl get configmap ... -o jsonpath`, and
#      `helm upgrade app ./chart -f sizing.yaml` gives the app's Deployment (and its running
#      pod) the recommended limits, requests and worker count;
#   4. `helm uninstall sizeup` leaves none of the objects the chart made (nor their pods,
#      release Secrets, the sweep's clone, the pod's token) but the results ConfigMap.
# Every command the guide shows is run as the guide writes it, and the test fails when the
# guide no longer shows it. Set E2E_KEEP=1 to keep the work directory.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SIZEUP=$(realpath "${SIZEUP:-$ROOT/build/sizeup}")
. "$ROOT/tests/integration/lib/operator_e2e.sh"
. "$ROOT/tests/integration/lib/journey.sh"
. "$ROOT/tests/policy/env.sh"
e2e_require
need_helm
[ -x "$SIZEUP" ] || fail "no sizeup binary at $SIZEUP (run make first)"

E2E_W=$(mktemp -d /tmp/sizeup-journey.XXXXXX)
trap e2e_cleanup EXIT
journey_scratch "$E2E_W"
# The operator's image runs the binary under test, with the sanitizer settings of this run.
cat >"$E2E_W/images.json" <<EOF
{
  "example/web:*": {"command": ["python3", "\${FAKEAPI_APPS}/web.py"]},
  "registry.example.com/sizeup:*": {
    "entrypoint": ["$SIZEUP"], "cmd": ["operator"],
    "env": {"ASAN_OPTIONS": "${ASAN_OPTIONS:-detect_leaks=1}",
            "UBSAN_OPTIONS": "${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"}
  }
}
EOF
fake_start "$E2E_W/fake" --images "$E2E_W/images.json" || exit 1
journey_pod_support
cd "$E2E_W/work" || fail "no work directory"
T0=$SECONDS

echo "== 1. install the operator with helm; it runs as the chart's pod"
documented helm install sizeup charts/sizeup -n sizeup --create-namespace \
    --set image.repository=registry.example.com/sizeup >"$E2E_W/helm-install.out"
helm get manifest sizeup -n sizeup >"$E2E_W/sizeup-manifest.yaml" || fail "helm get manifest"
documented kubectl -n sizeup rollout status deployment/sizeup
op_pod=$(kubectl -n sizeup get pods -l app.kubernetes.io/instance=sizeup \
    -o jsonpath='{.items[0].metadata.name}')
[ -n "$op_pod" ] || fail "no operator pod"
ln -sf "$E2E_W/fake/pods/sizeup_${op_pod}_operator.log" "$E2E_W/op-pod.log"
journey_check_operator_pod sizeup "$op_pod" operator

echo "== 2. the user's app, from its own chart, swept on request"
helm install app ./chart >/dev/null || fail "helm install app ./chart"
kubectl rollout status deployment/app --timeout=60s >/dev/null || fail "app did not roll out"
# A short fixed load on a CPU-bound path, so that the two variants differ and the sweep is short.
cat >profile.yaml <<'EOF'
users: 4
duration: 3s
warmup: 1s
search: { mode: fixed }
requests:
  - { name: work, method: GET, path: "/work?ms=4", weight: 1 }
EOF
documented kubectl create configmap app-profile --from-file=profile.yaml
# The guide's annotate command with a two-variant list that fits a 2-core machine.
documented_shape 'kubectl annotate deployment app --overwrite sizeup.dev/configs=' \
    kubectl annotate deployment app --overwrite \
    sizeup.dev/configs="1@0.25/128Mi 2@0.5/256Mi" \
    sizeup.dev/profile=app-profile \
    sizeup.dev/workers-env=WORKERS
documented 'kubectl annotate deployment app sizeup.dev/sweep=$(date +%s) --overwrite'
journey_wait_status app "done" 90
documented kubectl get events --field-selector involvedObject.name=app >"$E2E_W/events.txt"
grep -q 'SweepCompleted' "$E2E_W/events.txt" || fail "no SweepCompleted Event: $(cat "$E2E_W/events.txt")"
journey_no_denials "system:serviceaccount:sizeup:sizeup"

echo "== 3. read the results, apply them with helm upgrade"
documented "kubectl get configmap app-sizing -o jsonpath='{.data.results\.md}'" \
    >"$E2E_W/results.md"
documented "kubectl get configmap app-sizing -o jsonpath='{.data.report\.html}' > report.html"
journey_check_results "$E2E_W/results.md" report.html
kubectl get deployment app -o json >"$E2E_W/app-before.json"
documented "kubectl get configmap app-sizing -o jsonpath='{.data.values\.yaml}' > sizing.yaml && helm upgrade app ./chart -f sizing.yaml"
kubectl rollout status deployment/app --timeout=60s >/dev/null || fail "app did not roll out after helm upgrade"
journey_check_applied app sizing.yaml "$E2E_W/app-before.json"

echo "== 4. uninstall the operator: only the results stay"
journey_uninstall_check sizeup sizeup "$E2E_W/sizeup-manifest.yaml" "$op_pod" app

echo "journey done in $((SECONDS - T0)) s"
