#!/usr/bin/env bash
# End to end, clone mode: annotate the example Deployment in the fake cluster, let `sizeup
# operator` sweep two variants on a temporary clone, then check the ConfigMap (every key, a
# values.yaml that parses, throughput ordered as CPU), the Events, the metrics, that the
# original Deployment is unchanged and that the clone is gone.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

deploy_fingerprint web >"$E2E_W/before.json"
uid=$(k get deployment web -o jsonpath='{.metadata.uid}')
op_start op
k annotate deployment web sizeup.dev/profile=web-load \
    "sizeup.dev/configs=1@0.2/128Mi 1@0.8/128Mi" sizeup.dev/sweep=e2e-clone-1 >/dev/null

# While it runs, the clone exists: one replica, owned by the original, selected by no Service.
wait_status web '^running [01]/2(,|$)' 30
for _ in $(seq 1 40); do k get deployment web-sizeup -o json >"$E2E_W/clone.json" 2>/dev/null && break; sleep 0.5; done
[ -s "$E2E_W/clone.json" ] || fail "no clone web-sizeup while the sweep runs"
python3 - "$E2E_W/clone.json" "$uid" <<'PY' || fail "clone is not isolated"
import json, sys
c = json.load(open(sys.argv[1]))
owners = c["metadata"].get("ownerReferences", [])
assert any(o.get("uid") == sys.argv[2] and o.get("kind") == "Deployment" for o in owners), owners
assert c["spec"].get("replicas", 1) == 1, "clone replicas"
labels = c["spec"]["template"]["metadata"].get("labels", {})
# The Service selects app.kubernetes.io/name=web: the clone's pods must not match it.
assert labels.get("app.kubernetes.io/name") != "web", "clone pods match the Service selector"
print("  clone: 1 replica, owned by web, not selected by the Service")
PY

wait_status web '^done$' 90
check_sizing web
check_events web SweepStarted VariantMeasured SweepCompleted
[ "$(ann web sizeup.dev/last-sweep)" = e2e-clone-1 ] || fail "last-sweep not recorded"

# The original is byte-for-byte what it was (minus the fields deploy_fingerprint explains).
deploy_fingerprint web >"$E2E_W/after.json"
diff -u "$E2E_W/before.json" "$E2E_W/after.json" || fail "the original Deployment changed"
echo "  original Deployment unchanged"

# The clone is gone (deleted at the end of the sweep).
gone=0
for _ in $(seq 1 20); do
    if ! k get deployment web-sizeup >/dev/null 2>&1; then gone=1; break; fi
    sleep 0.5
done
[ $gone = 1 ] || fail "clone web-sizeup still exists after the sweep"
echo "  clone deleted"

[ "$(metric 'sizeup_sweeps_total{result="done"}')" = 1 ] || fail "sweeps_total{done} != 1"
[ "$(metric sizeup_sweeps_in_progress)" = 0 ] || fail "sweeps_in_progress != 0"

# A restart does not run the finished sweep again.
op_stop
op_start op2
sleep 3
[ "$(ann web sizeup.dev/status)" = done ] || fail "status changed after a restart"
grep -q 'event=sweep.start' "$OP_LOG" && fail "restarted operator re-ran a finished sweep"
op_stop
echo "e2e clone: ok"
