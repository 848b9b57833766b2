#!/usr/bin/env bash
# Generator pods refused at admission, end to end against the fake: the operator's namespace
# holds a LimitRange that allows at most 100m CPU per container, and the generators ask for 250m,
# so the Job controller cannot create one pod (Warning FailedCreate on the Job, the API server's
# message). The load step fails at once with that message, instead of waiting out the start
# delay, the run and the report wait for pods that never come ("never ran (its pod got no
# address)"): the variant is FAILED naming the LimitRange's refusal, the sweep ends within a few
# seconds, and no Job or pod is left behind.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SIZEUP=${SIZEUP:-$ROOT/build/sizeup}
# shellcheck source=tests/integration/lib/operator_e2e.sh
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_require
E2E_W=$(mktemp -d /tmp/sizeup-e2e-genref.XXXXXX)
trap e2e_cleanup EXIT

cat >"$E2E_W/images.json" <<JSON
{"example/web:*": {"command": ["python3", "\${FAKEAPI_APPS}/web.py"]},
 "example/sizeup:*": {"entrypoint": ["$SIZEUP"], "cmd": ["operator"]}}
JSON
fake_start "$E2E_W/fake" --images "$E2E_W/images.json" || exit 1
k apply -f "$ROOT/manifests/examples/web.yaml" >/dev/null || fail "kubectl apply failed"
k rollout status deployment/web --timeout=60s >/dev/null || fail "example app did not roll out"
k create namespace sizeup >/dev/null
k -n sizeup create serviceaccount sizeup-generator >/dev/null
k -n sizeup apply -f - >/dev/null <<'YAML' || fail "the LimitRange"
apiVersion: v1
kind: LimitRange
metadata: {name: small}
spec:
  limits:
  - type: Container
    max: {cpu: 100m}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: gen-load}
data:
  profile.yaml: |
    rate: 50
    duration: 4s
    warmup: 0s
    timeout: 5s
    search: { mode: fixed }
    requests:
      - { name: hello, method: GET, path: /, weight: 1 }
YAML
k -n sizeup get configmap gen-load -o json | python3 -c '
import json, sys
c = json.load(sys.stdin)
print(json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gen-load"},
                  "data": c["data"]}))' | k apply -f - >/dev/null || fail "the profile in default"

# A start delay of 10 s: the old wait (start delay + run + 30 s) would take 44 s.
export POD_NAMESPACE=sizeup SIZEUP_GENERATOR_IMAGE=example/sizeup:1 \
    SIZEUP_GENERATOR_SERVICE_ACCOUNT=sizeup-generator SIZEUP_GENERATOR_CPU=250m \
    SIZEUP_GENERATOR_MEMORY=256Mi SIZEUP_GENERATOR_START_DELAY=10s
op_start op
t0=$SECONDS
k annotate --overwrite deployment web sizeup.dev/generators=2 sizeup.dev/configs=1@1/256Mi \
    sizeup.dev/profile=gen-load sizeup.dev/sweep=refused-1 >/dev/null
wait_status web '^done$' 90
took=$((SECONDS - t0))
op_stop
k get configmap web-sizing -o jsonpath='{.data.results\.json}' >"$E2E_W/results.json"
python3 - "$E2E_W/results.json" <<'PY' || fail "the refused generators are not reported as designed"
import json, sys
v = json.load(open(sys.argv[1]))["variants"][0]
why = json.dumps(v)
assert v["state"] == "failed", v["state"]
st = v["state_text"]
assert "was refused by the API server" in st, st
assert "maximum cpu usage per Container is 100m" in st, st
assert "never ran" not in why, why[:600]
print("ok: variant failed:", st)
PY
[ "$took" -lt 30 ] || fail "the sweep took $took s: the step waited for pods that never came"
echo "ok: the sweep ended in $took s (the run alone was planned to start 10 s after the Job)"
for _ in $(seq 1 100); do
    jobs=$(k -n sizeup get jobs -o name | wc -l)
    [ "$jobs" = 0 ] && break
    sleep 0.1
done
[ "$jobs" = 0 ] || fail "$jobs generator Jobs left in sizeup"
echo "ok: no generator Job left"
