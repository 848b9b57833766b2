#!/usr/bin/env bash
# Crash safety: kill -9 the operator in the middle of a sweep, restart it, and check the sweep is
# resumed (or restored and marked failed), never left half-patched: in-place, the pod template
# ends exactly as it was; clone mode, the clone ends deleted.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

allowed='sizeup.dev/(sweep|configs|profile|mode|status|last-sweep)$'
leftover_annotations() {
    k get deployment web -o json | python3 -c '
import json, re, sys
a = json.load(sys.stdin)["metadata"].get("annotations", {})
print(" ".join(k for k in a if k.startswith("sizeup.dev/") and not re.match(sys.argv[1], k)))' "$allowed"
}

# ---- in-place: killed while the Deployment carries a variant
deploy_fingerprint web template >"$E2E_W/before.json"
op_start op1
k annotate deployment web sizeup.dev/profile=web-load sizeup.dev/mode=in-place \
    "sizeup.dev/configs=1@0.2/128Mi 1@0.8/128Mi" sizeup.dev/sweep=kill-1 >/dev/null
wait_status web '^running 1/2(,|$)' 60
sleep 2 # into the second variant's rollout or load
kill -KILL "$OP_PID"
wait "$OP_PID" 2>/dev/null
OP_PID=
patched=$(k get deployment web -o jsonpath='{.spec.template.spec.containers[0].resources.limits.cpu}')
echo "  killed mid-sweep (status $(ann web sizeup.dev/status), cpu limit $patched)"

op_start op2
wait_status web '^(done|failed: .*)$' 90
final=$(ann web sizeup.dev/status)
if [ "$final" = done ]; then
    grep -q 'event=sweep.resume' "$OP_LOG" || fail "done without a resume"
    check_sizing web
    echo "  resumed to the end"
else
    [[ "$final" == *"original restored"* ]] || fail "failed without restoring: $final"
    echo "  restored and marked failed"
fi
deploy_fingerprint web template >"$E2E_W/after.json"
python3 - "$E2E_W/before.json" "$E2E_W/after.json" <<'PY' || fail "in-place Deployment left half-patched"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["spec"] == b["spec"], "spec differs after recovery"
print("  pod template exactly as before")
PY
left=$(leftover_annotations)
[ -z "$left" ] || fail "annotations left behind: $left"
op_stop

# ---- clone mode: killed while the clone runs
k annotate --overwrite deployment web sizeup.dev/mode=clone \
    "sizeup.dev/configs=1@0.2/128Mi 1@0.8/128Mi" sizeup.dev/sweep=kill-2 >/dev/null
deploy_fingerprint web >"$E2E_W/before2.json"
op_start op3
wait_status web '^running [01]/2(,|$)' 60
for _ in $(seq 1 40); do k get deployment web-sizeup >/dev/null 2>&1 && break; sleep 0.25; done
k get deployment web-sizeup >/dev/null 2>&1 || fail "no clone to kill the operator over"
kill -KILL "$OP_PID"
wait "$OP_PID" 2>/dev/null
OP_PID=
echo "  killed with the clone running"
op_start op4
wait_status web '^(done|failed: .*)$' 90
for _ in $(seq 1 20); do k get deployment web-sizeup >/dev/null 2>&1 || break; sleep 0.5; done
k get deployment web-sizeup >/dev/null 2>&1 && fail "clone left behind after recovery"
deploy_fingerprint web >"$E2E_W/after2.json"
diff -u "$E2E_W/before2.json" "$E2E_W/after2.json" || fail "original changed in clone mode"
echo "  clone gone, original unchanged ($(ann web sizeup.dev/status))"
op_stop
echo "e2e kill -9: ok"
