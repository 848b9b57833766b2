#!/usr/bin/env bash
# slow: make e2e
# End to end, the scale-out in the cluster (clone mode, one variant, sizeup.dev/scale-out: "3"):
# the clone is scaled to 2 and then 3 replicas of the variant, the load goes to every ready pod's
# own address (pod IP + port, as the operator logs them and the fake's pods had them), and
# results.json in the ConfigMap has the scale_out points 1 (from the shape search), 2 and 3
# (measured), each once, each N pods' known capacity (no max_rps caps them). Then the operator
# is killed after the 2-replica point: the next one resumes from state.json, measures only 3
# replicas, and results.json lists each point once.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_require
E2E_W=$(mktemp -d /tmp/sizeup-e2e-so.XXXXXX)
trap e2e_cleanup EXIT
# The example app is the app of known capacity (tests/servers/capacity_server.py): 2 slots held
# 40 ms each, so one pod serves 50 req/s, by sleeping rather than by CPU. The pods share nothing,
# so N pods serve N x 50 req/s: a figure that holds from run to run on a busy machine, without a
# max_rps that would cap every point at one figure. Past it the excess queues for a slot, so a
# p95 objective of 2.5 service times marks the knee within one short window.
cat >"$E2E_W/images.json" <<JSON
{"example/web:*": {"command": ["python3", "$ROOT/tests/servers/capacity_server.py"],
                   "env": {"SLOTS_PER_WORKER": "2", "HOLD_MS": "40"}}}
JSON
fake_start "$E2E_W/fake" --metrics-window 1.5 --images "$E2E_W/images.json" || exit 1
k apply -f "$ROOT/manifests/examples/" >/dev/null || fail "kubectl apply failed"
k rollout status deployment/web --timeout=60s >/dev/null || fail "example app did not roll out"
k apply -f - >/dev/null <<'YAML' || fail "so-load profile not applied"
apiVersion: v1
kind: ConfigMap
metadata:
  name: so-load
data:
  profile.yaml: |
    users: 8
    timeout: 5s
    search: { window: 1500ms, warmup: 500ms, precision: 10%, repeats: 3, max_steps: 5 }
    slo: { p95: 100ms, errors: 1% }
    requests:
      - { name: slot, method: GET, path: "/" }
YAML

t0=$SECONDS
op_start op
k annotate deployment web sizeup.dev/profile=so-load "sizeup.dev/configs=1@0.3/128Mi" \
    sizeup.dev/scale-out=3 sizeup.dev/sweep=so-1 >/dev/null

# While the 3-replica point runs: three Ready clone pods, each with its own address.
: >"$E2E_W/pods3.txt"
until=$((SECONDS + 150))
while [ $SECONDS -lt $until ]; do
    [ "$(ann web sizeup.dev/status)" = done ] && break
    k get pods -l sizeup.dev/clone-of=web -o json 2>/dev/null | python3 -c '
import json, sys
ips = sorted(p["status"].get("podIP", "") for p in json.load(sys.stdin)["items"]
             if not p["metadata"].get("deletionTimestamp") and
             any(c["type"] == "Ready" and c["status"] == "True"
                 for c in p["status"].get("conditions", [])))
if len(ips) == 3 and all(ips) and len(set(ips)) == 3:
    print(" ".join(ips))' >"$E2E_W/pods3.txt"
    [ -s "$E2E_W/pods3.txt" ] && break
    kill -0 "$OP_PID" 2>/dev/null || fail "operator died"
done
[ -s "$E2E_W/pods3.txt" ] ||
    fail "never saw 3 ready clone pods with 3 addresses ($(grep -c scale_out "$OP_LOG") scale_out log lines)"
echo "  3 ready clone pods: $(cat "$E2E_W/pods3.txt")"

wait_status web '^done$' 150

# The clone's replica history: scaled to 2, then to 3 (the fake's ScalingReplicaSet Events).
k get events.events.k8s.io -o json | python3 -c '
import json, re, sys
tos = [int(m.group(1)) for e in json.load(sys.stdin)["items"]
       if e["reason"] == "ScalingReplicaSet" and "web-sizeup" in e.get("note", "")
       for m in [re.search(r"from \d+ to (\d+)", e.get("note", ""))] if m]
print("  clone replica set scaled to: %s" % tos)
assert 2 in tos and 3 in tos, tos' || fail "the clone was not scaled to 2 and 3"

# The load went to the pods' own addresses: the operator's target list at 3 replicas names the
# three pods seen above.
line=$(grep 'event=kube.platform.targets' "$OP_LOG" | grep 'replicas=3' | tail -n 1)
[ -n "$line" ] || fail "no target list for 3 replicas in the operator log"
for ip in $(cat "$E2E_W/pods3.txt"); do
    grep -qE "(=|,)${ip//./\\.}(,| )" <<<"$line" || fail "pod $ip is not among the load's targets: $line"
done
echo "  load targets at 3 replicas: ${line##*pod_ips=}"

k get configmap web-sizing -o jsonpath='{.data.results\.json}' >"$E2E_W/results.json" ||
    fail "no results.json"
python3 - "$E2E_W/results.json" <<'PY' || fail "scale_out in results.json"
import json, sys
so = json.load(open(sys.argv[1]))["scale_out"]
assert so, "scale_out is null"
pts = so["points"]
reps = [p["replicas"] for p in pts]
assert reps == [1, 2, 3], reps
assert pts[0]["from"] == "shape-search", pts[0]
for p in pts[1:]:
    assert p["from"] == "measured" and p["rps"] > 0, p
print("  scale_out: %s, limited by %s" % (
    ", ".join("%d x %.1f req/s (%s)" % (p["replicas"], p["rps"], p["from"]) for p in pts),
    so["limited_by"]))
# Points measured, not capped: no max_rps ended a search, and each point is N pods' known
# capacity within 20% (a load sent to one pod, or capped, stays at one pod's).
assert so["limited_by"] != "max-rps", so["limited_by"]
for p in pts:
    want = 50.0 * p["replicas"]
    assert abs(p["rps"] - want) <= 0.2 * want, "%d replicas: %.1f req/s, known %.0f" % (
        p["replicas"], p["rps"], want)
PY
grep -q 'a cluster scale-out loads what the pods share' "$E2E_W/results.json" ||
    fail "no finding that a cluster scale-out loads what the pods share"
[ "$(k get deployment web -o jsonpath='{.spec.replicas}')" = 1 ] || fail "the original was scaled"
op_stop

# Killed during the scale-out: kill -9 the operator once the 2-replica point is recorded in the
# ConfigMap's state.json; the next operator keeps that point and measures only 3 replicas.
op_start op-kill
k annotate --overwrite deployment web sizeup.dev/sweep=so-2 >/dev/null
until=$((SECONDS + 150))
until grep -q 'event=sweep.scale_out.recorded .*replicas=2 ' "$OP_LOG"; do
    [ $SECONDS -lt $until ] || fail "the 2-replica point was never recorded"
    kill -0 "$OP_PID" 2>/dev/null || fail "operator died"
    sleep 0.2
done
kill -KILL "$OP_PID"
wait "$OP_PID" 2>/dev/null
OP_PID=
k get configmap web-sizing -o jsonpath='{.data.state\.json}' >"$E2E_W/state1.json"
python3 - "$E2E_W/state1.json" <<'PY' || fail "state.json lacks the scale-out's points"
import json, sys
so = json.load(open(sys.argv[1]))["scale_out"]
reps = [p["replicas"] for p in so["points"]]
assert reps == [1, 2], reps
print("  killed with state.json's scale-out at %s replicas (%.1f req/s at 2)" % (
    reps, so["points"][1]["capacity"]["rps"]))
PY

op_start op-resume
wait_status web '^done$' 150
grep -q 'event=sweep.scale_out.resume ' "$OP_LOG" || fail "done without resuming the scale-out"
grep -q 'event=sweep.scale_out variant=.* replicas=2 ' "$OP_LOG" && fail "2 replicas measured twice"
grep -q 'event=sweep.scale_out variant=.* replicas=3 ' "$OP_LOG" || fail "3 replicas not measured"
grep -q 'event=sweep.variant ' "$OP_LOG" && fail "the shape search ran again"
k get configmap web-sizing -o jsonpath='{.data.results\.json}' >"$E2E_W/results2.json"
python3 - "$E2E_W/state1.json" "$E2E_W/results2.json" <<'PY' || fail "results.json after the resume"
import json, sys
before = json.load(open(sys.argv[1]))["scale_out"]["points"][1]["capacity"]["rps"]
r = json.load(open(sys.argv[2]))
pts = r["scale_out"]["points"]
reps = [p["replicas"] for p in pts]
assert reps == [1, 2, 3], reps
assert abs(pts[1]["rps"] - before) <= 1e-5 * before, (pts[1]["rps"], before)
assert pts[2]["from"] == "measured" and pts[2]["rps"] > 0, pts[2]
assert len(r["variants"]) == 1, len(r["variants"])
print("  resumed: points %s, 2 replicas kept at %.1f req/s, 3 measured at %.1f req/s" % (
    reps, pts[1]["rps"], pts[2]["rps"]))
PY
op_stop
echo "e2e scale-out: ok ($((SECONDS - t0)) s)"
