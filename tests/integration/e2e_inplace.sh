#!/usr/bin/env bash
# End to end, in-place mode: the operator rolls the example Deployment itself through two
# variants and restores it; the pod template afterwards must equal the original exactly.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

deploy_fingerprint web template >"$E2E_W/before.json"
op_start op
k annotate deployment web sizeup.dev/profile=web-load sizeup.dev/mode=in-place \
    "sizeup.dev/configs=1@0.2/128Mi 1@0.8/128Mi" sizeup.dev/sweep=e2e-inplace-1 >/dev/null

# While it runs, the Deployment itself carries a variant's limits.
wait_status web '^running [01]/2(,|$)' 30
seen=0
for _ in $(seq 1 40); do
    cpu=$(k get deployment web -o jsonpath='{.spec.template.spec.containers[0].resources.limits.cpu}')
    if [ "$cpu" = 200m ] || [ "$cpu" = 800m ]; then seen=1; break; fi
    sleep 0.5
done
[ $seen = 1 ] || fail "the Deployment was never patched with a variant's limits"
echo "  patched in place (cpu limit $cpu)"

wait_status web '^done$' 90
check_sizing web
check_events web SweepStarted VariantMeasured SweepCompleted

deploy_fingerprint web template >"$E2E_W/after.json"
python3 - "$E2E_W/before.json" "$E2E_W/after.json" <<'PY' || fail "pod template not restored exactly"
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
assert a["template"] == b["template"], "template differs:\n%s\n%s" % (
    json.dumps(a["template"], sort_keys=True), json.dumps(b["template"], sort_keys=True))
# Rolling it changed the generation; everything else in spec must be back as it was.
assert a["spec"] == b["spec"], "spec differs"
print("  pod template restored exactly")
PY
k rollout status deployment/web --timeout=60s >/dev/null || fail "restored Deployment not rolled out"
op_stop
echo "e2e in-place: ok"
