#!/usr/bin/env bash
# SIGTERM during an in-place sweep: the operator restores the pod template, keeps the progress
# in the ConfigMap, exits 0 within 10 s; the next operator resumes the sweep to the end.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

deploy_fingerprint web template >"$E2E_W/before.json"
op_start op1
k annotate deployment web sizeup.dev/profile=web-load sizeup.dev/mode=in-place \
    "sizeup.dev/configs=1@0.2/128Mi 1@0.8/128Mi" sizeup.dev/sweep=term-1 >/dev/null
wait_status web '^running 1/2(,|$)' 60
sleep 1
t0=$(date +%s.%N)
op_stop
python3 -c "import sys,time; d=time.time()-$t0; print('  SIGTERM to exit: %.1f s' % d); sys.exit(d > 10.5)" ||
    fail "shutdown took longer than 10 s"
deploy_fingerprint web template >"$E2E_W/after.json"
cmp -s "$E2E_W/before.json" "$E2E_W/after.json" || fail "template not restored at shutdown"
s=$(ann web sizeup.dev/status)
[[ "$s" == running* ]] || fail "status after shutdown is '$s', want the persisted running k/n"
phase=$(k get configmap web-sizing -o json | python3 -c '
import json, sys; print(json.loads(json.load(sys.stdin)["data"]["state.json"])["phase"])')
[ "$phase" = interrupted ] || fail "state.json phase '$phase', want interrupted"
echo "  restored, progress persisted ($s, phase $phase)"

op_start op2
wait_status web '^done$' 90
grep -q 'event=sweep.resume' "$OP_LOG" || fail "second operator did not resume"
check_sizing web
deploy_fingerprint web template >"$E2E_W/after2.json"
cmp -s "$E2E_W/before.json" "$E2E_W/after2.json" || fail "template not restored after resume"
op_stop
echo "SIGTERM: ok"
