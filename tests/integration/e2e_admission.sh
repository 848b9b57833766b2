#!/usr/bin/env bash
# End to end, variants a real cluster's admission refuses: in a namespace with a LimitRange (at
# most 1 CPU per container) and a ResourceQuota (limits.memory 400Mi), the operator sweeps the
# example app over 1@0.3/96Mi (fits), 1@2/96Mi (over the LimitRange) and 1@0.3/512Mi (over the
# quota), both tried as in-place resizes (the 403 of pods/resize), and 2@0.3/512Mi (a rollout:
# the Deployment patch succeeds and the fake's ReplicaSet controller is refused, as in a real
# cluster: ReplicaFailure, FailedCreate). The sweep goes on and ends `done` well inside
# one --ready-timeout per refused variant: each refused row is failed, `could not start`, with
# the API server's own message; the fitting one is measured and recommended; the Deployment
# comes back to its original template.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

k apply -f - >/dev/null <<'EOF' || fail "policy objects"
apiVersion: v1
kind: LimitRange
metadata: {name: per-container}
spec:
  limits:
  - type: Container
    max: {cpu: "1", memory: 1Gi}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute}
spec:
  hard: {limits.memory: 400Mi}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-quick}
data:
  profile.yaml: |
    users: 2
    duration: 2s
    warmup: 500ms
    timeout: 5s
    search: { mode: fixed }
    thresholds:
      healthy:    { p95: 500ms, errors: 1% }
      overloaded: { p95: 2s, errors: 5% }
    requests:
      - { name: hello, method: GET, path: "/", weight: 1 }
EOF
before=$(deploy_fingerprint web template)

# The operator waits 60 s for a variant to become ready: a refused variant waited out would take
# a minute.
op_start op
start=$SECONDS
k annotate deployment web sizeup.dev/profile=web-quick \
    "sizeup.dev/configs=1@0.3/96Mi 1@2/96Mi 1@0.3/512Mi 2@0.3/512Mi" sizeup.dev/sweep=adm-1 >/dev/null
wait_status web '^done' 100
took=$((SECONDS - start))
op_stop
[ $took -lt 60 ] || fail "the sweep took $took s: a refused variant waited for its ready timeout"
echo "sweep done in $took s"

k get configmap web-sizing -o json >"$E2E_W/cm.json" || fail "no ConfigMap web-sizing"
python3 - "$E2E_W/cm.json" <<'PY' || fail "results check failed"
import json, re, sys
data = json.load(open(sys.argv[1]))["data"]
vs = {v["spec"]: v for v in json.loads(data["results.json"])["variants"]}
ok = vs["1@0.3/96Mi"]
assert ok["state"] == "measured" and ok["recommended"], ok
lr, q, rq = vs["1@2/96Mi"], vs["1@0.3/512Mi"], vs["2@0.3/512Mi"]
quota = (r"exceeded quota: compute, requested: limits.memory=\d+Mi, used: "
         r"limits.memory=\d+Mi, limited: limits.memory=400Mi")
for v, why in ((lr, r"maximum cpu usage per Container is 1, but limit is 2"), (q, quota),
               (rq, quota)):
    assert v["state"] == "failed", v
    f = v["failure"]
    assert f["kind"] == "could not start", f
    # Refused as a rollout (the ReplicaSet's FailedCreate) or as a resize (the 403 itself).
    assert re.search(r'(cannot create pods: FailedCreate: |refused at admission: .*)pods '
                     r'"web-[a-z0-9-]+" is forbidden: ' + why, f["reason"]), f["reason"]
    assert v["label"] in data["results.md"], v["label"]
    print("  %-12s failed: %s" % (v["spec"], f["reason"]))
print("  %-12s measured, recommended" % ok["spec"])
# Resized in place, the pod's resize is refused; a worker-count change is a rollout, whose new
# ReplicaSet is refused (ReplicaFailure on the Deployment).
assert lr["failure"]["reason"].startswith("refused at admission: "), lr
assert "cannot create pods: FailedCreate: " in rq["failure"]["reason"], rq
PY
after=$(deploy_fingerprint web template)
[ "$before" = "$after" ] || fail "the Deployment's template was not restored"
k rollout status deployment/web --timeout=60s >/dev/null || fail "no rollout after the restore"
echo "e2e admission: ok"
