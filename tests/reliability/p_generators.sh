#!/usr/bin/env bash
# Promise: a generator pod killed mid-step fails its variant by name and leaves nothing behind.
# A clone sweep of the example app with its load from 3 generator pods (sizeup.dev/generators:
# an Indexed Job of `sizeup loadtest` workers in the operator's namespace, this build as the
# operator's image); worker 1's process is killed with SIGKILL inside the measured window. The
# variant must be FAILED with a reason naming "generator 1 of 3", the sweep must end done (its
# other variant measured), and afterwards no Job, no generator pod and no ServiceAccount token is
# left in the operator's namespace.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oplib.sh"
cat >"$W/images.json" <<JSON
{"example/web:*": {"command": ["python3", "\${FAKEAPI_APPS}/web.py"]},
 "example/sizeup:*": {"entrypoint": ["$SIZEUP"], "cmd": ["operator"]}}
JSON
op_cluster generator-killed "$W/fake" "$ROOT/manifests/examples/" --images "$W/images.json"
op_identity rel-operator "$W" '["system:masters"]' || { result FAIL generator-killed "no token"; exit 1; }
k create namespace sizeup >/dev/null
k -n sizeup create serviceaccount sizeup-generator >/dev/null
k -n sizeup patch serviceaccount sizeup-generator -p '{"automountServiceAccountToken": false}' >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: gen-load}
data:
  profile.yaml: |
    rate: 40
    duration: 6s
    warmup: 0s
    timeout: 3s
    search: { mode: fixed }
    requests:
      - { name: hello, method: GET, path: / }
YAML
POD_NAMESPACE=sizeup SIZEUP_GENERATOR_IMAGE=example/sizeup:1 \
    SIZEUP_GENERATOR_SERVICE_ACCOUNT=sizeup-generator SIZEUP_GENERATOR_CPU=250m \
    SIZEUP_GENERATOR_MEMORY=256Mi SIZEUP_GENERATOR_START_DELAY=2s op_bg op-gen
k annotate deployment web sizeup.dev/profile=gen-load sizeup.dev/generators=3 \
    "sizeup.dev/configs=1@0.5/128Mi 1@1/128Mi" sizeup.dev/sweep=gen-1 >/dev/null
pid=
for _ in $(seq 1 300); do
    pid=$(fakectl GET /fake/pods | python3 -c 'import json,sys; print(next((c["pid"] for p in json.load(sys.stdin)["pods"] if p["namespace"] == "sizeup" and "-1-" in p["name"] for c in p["containers"] if c["pid"]), ""))')
    [ -n "$pid" ] && break
    sleep 0.1
done
why= t0=$SECONDS
if [ -z "$pid" ]; then
    why="worker 1 never ran"
else
    sleep 4 # past the 2 s start delay, into the measured window
    kill -9 "$pid" 2>/dev/null || why="worker 1 ($pid) was gone before the kill"
fi
st=$(wait_status '^(done|failed:.*)$' 120)
took=$((SECONDS - t0))
row=$(k get configmap web-sizing -o json 2>/dev/null | python3 -c '
import json, sys
r = json.loads(json.load(sys.stdin)["data"]["results.json"])
print(" | ".join("%s %s%s" % (v["spec"], v["state"], (": " + (v.get("failure") or {}).get("reason", "")[:100])
                 if v["state"] == "failed" else "") for v in r["variants"]))' 2>&1)
jobs= pods= toks=
for _ in $(seq 1 100); do
    jobs=$(k -n sizeup get jobs -o name | wc -l)
    pods=$(k -n sizeup get pods -o name | wc -l)
    [ "$jobs" = 0 ] && [ "$pods" = 0 ] && break
    sleep 0.1
done
toks=$(fakectl GET /fake/pods | python3 -c 'import json,sys; print(sum(1 for p in json.load(sys.stdin)["pods"] if p["namespace"] == "sizeup" and p["serviceAccountDir"]))')
op_stop "$OP"
keep_logs generators "$W/op-gen.log" "$W/fake/server.log"
[ "$st" = done ] || why="$why; status '$st'"
[[ "$row" == "1@0.5/128Mi failed: "*"generator 1 of 3"* ]] || why="$why; the first variant is not FAILED naming generator 1 of 3"
[[ "$row" == *"1@1/128Mi measured"* ]] || why="$why; the second variant was not measured"
[ "$jobs" = 0 ] && [ "$pods" = 0 ] && [ "$toks" = 0 ] || why="$why; left: $jobs Jobs, $pods pods, $toks tokens"
fig="worker 1 (pid ${pid:-none}) killed -9 in the window; rows: $row; status '$st' $took s after the kill; left in sizeup: $jobs Jobs, $pods pods, $toks tokens"
if [ -z "$why" ]; then
    result PASS generator-killed "$fig"
else
    result FAIL generator-killed "${why#; }; $fig"
    exit 1
fi
