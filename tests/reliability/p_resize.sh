#!/usr/bin/env bash
# Promise: a resize the kubelet will not apply mid-sweep costs one row, nothing more. A
# Guaranteed one-pod Deployment whose app holds 100 MiB is swept in mode resize over
# 1@0.5/256Mi (its own size), 1@0.5/64Mi (a memory limit below its usage: the fake's kubelet,
# as a real one, leaves the resize in progress with reason Error) and 1@1/256Mi. The second row
# must be FAILED with the kubelet's reason, the sweep must go on to measure the third by resize,
# and at the end the status is done, the pod is the same pod (uid) with its own resources
# (500m/256Mi) back, no bookkeeping annotation is left and the pod template is unchanged.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oplib.sh"
cat >"$W/hungry.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: example/web:1
          ports: [{containerPort: 8080}]
          env: [{name: WORKERS, value: "1"}, {name: ALLOC_MB, value: "100"}]
          readinessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 1}
          resources:
            limits: {cpu: 500m, memory: 256Mi}
            requests: {cpu: 500m, memory: 256Mi}
YAML
op_cluster resize-error "$W/fake" "$W/hungry.yaml" --node-cpu 2 --node-memory 4Gi
op_identity rel-operator "$W" '["system:masters"]' || { result FAIL resize-error "no token"; exit 1; }
pod_of() {
    k get pods -l app=web -o json | python3 -c '
import json, sys
ps = [p for p in json.load(sys.stdin)["items"] if not p["metadata"].get("deletionTimestamp")]
print(" ".join(p["metadata"][k] for p in ps for k in ("name", "uid")))'
}
read -r pod uid < <(pod_of)
before=$(fingerprint)
op_bg op-resize
t0=$SECONDS
k annotate deployment web sizeup.dev/profile=rel-load sizeup.dev/mode=resize \
    "sizeup.dev/configs=1@0.5/256Mi 1@0.5/64Mi 1@1/256Mi" sizeup.dev/sweep=resize-1 >/dev/null
st=$(wait_status '^(done|failed:.*)$' 120)
took=$((SECONDS - t0))
op_stop "$OP"
keep_logs resize "$W/op-resize.log" "$W/fake/server.log"
rows=$(k get configmap web-sizing -o json | python3 -c '
import json, sys
r = json.loads(json.load(sys.stdin)["data"]["results.json"])
print("; ".join("%s %s %s%s" % (v["spec"], v.get("applied_by", "-"), v["state"],
      (" (" + (v.get("failure") or {}).get("reason", "")[:200] + ")") if v["state"] == "failed"
      else "") for v in r["variants"]))' 2>&1)
now=$(pod_of)
res=$(k get pod "$pod" -o jsonpath='{.spec.containers[0].resources.limits.cpu}/{.spec.containers[0].resources.limits.memory}' 2>/dev/null)
after=$(fingerprint)
left=$(ann sizeup.dev/original-resources)
why=
[ "$st" = done ] || why="$why; status '$st'"
[[ "$rows" == *"1@0.5/64Mi resize failed (resize not applied by the kubelet:"*"below its current usage"* ]] ||
    why="$why; the 64Mi row is not FAILED with the kubelet's reason"
[[ "$rows" == *"1@1/256Mi resize measured"* ]] || why="$why; the sweep did not go on to 1@1/256Mi by resize"
[ "$now" = "$pod $uid" ] || why="$why; the pod was replaced ($now)"
[ "$res" = 500m/256Mi ] || why="$why; the pod's resources are $res, not 500m/256Mi"
[ -z "$left" ] || why="$why; sizeup.dev/original-resources left"
[ "$after" = "$before" ] || why="$why; the Deployment differs from the original"
fig="rows: $rows; status '$st' after $took s; pod $pod uid unchanged: $([ "$now" = "$pod $uid" ] && echo yes || echo no), resources back: $res"
if [ -z "$why" ]; then
    result PASS resize-error "$fig"
else
    result FAIL resize-error "${why#; }; $fig"
    exit 1
fi
