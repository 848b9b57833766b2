#!/usr/bin/env bash
# slow: make e2e
# Crash safety of a capacity sweep: kill -9 the operator once the first variant is measured,
# start another; the resumed sweep ends "done" and its results.json still has the first row's
# capacity search (rps, interval, steps) read back from state.json beside the second row's.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup --metrics-window 1.5
cap_profile_apply

t0=$SECONDS
op_start op1
k annotate deployment web sizeup.dev/profile=cap-load \
    "sizeup.dev/configs=1@0.2/128Mi 1@0.8/128Mi" sizeup.dev/sweep=cap-kill >/dev/null
wait_status web '^running 1/2(,|$)' 90
k get configmap web-sizing -o jsonpath='{.data.state\.json}' >"$E2E_W/state1.json"
python3 - "$E2E_W/state1.json" <<'PY' || fail "state.json lacks the first row's capacity"
import json, sys
s = json.load(open(sys.argv[1]))
c = s["rows"][0]["capacity"]
assert c["rps"] > 0 and c["steps"] and c["repeat_rps"] is not None, c
print("  state.json row 1: capacity %.1f req/s, %d steps" % (c["rps"], len(c["steps"])))
PY
kill -KILL "$OP_PID"
wait "$OP_PID" 2>/dev/null
OP_PID=
echo "  operator killed after the first variant ($(ann web sizeup.dev/status))"

op_start op2
wait_status web '^done$' 120
grep -q 'event=sweep.resume' "$OP_LOG" || fail "done without a resume"
check_capacity web 2 1.5
python3 - "$E2E_W/state1.json" "$E2E_W/results.json" <<'PY' || fail "row 1 differs after resume"
import json, sys
before = json.load(open(sys.argv[1]))["rows"][0]["capacity"]
after = json.load(open(sys.argv[2]))["variants"][0]["slo_capacity"]
assert abs(after["rps"] - before["rps"]) <= 1e-5 * before["rps"], (after["rps"], before["rps"])
assert len(after["steps"]) == len(before["steps"]), "steps"
print("  row 1 after the resume: the capacity the first operator measured")
PY
op_stop
echo "e2e capacity resume: ok ($((SECONDS - t0)) s)"
