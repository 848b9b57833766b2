#!/usr/bin/env bash
# slow: make e2e
# Recovery proven before the next step, against a real server that stays slow after an overload
# (tests/servers/capacity_server.py with SLOW_AFTER_S: once a request has waited 5 service times
# for a slot, every request takes 3 times as long for the next 5 s, while one user is still
# answered within the SLO). Its capacity is known: 7 slots x 1000 / 50 ms = 140 req/s. From one
# user's 20 req/s the search doubles past it to 160, the app storms, and the bisection's next
# steps (120, below the capacity) come while it may still be slow. The settle after each failed
# step alternates one user with bursts at 90% of the last passing rate until a burst meets the
# SLO, so those steps measure the app, and the capacity found is within 15% of the known one
# (with one user's answer as the test of recovery they measured the slow app: about 95 req/s);
# results.json records the recovery (slo_capacity.recovery: settles, none ran out, the longest
# above 0), results.md shows it beside the capacity, and the answer has the recovery finding. Runs
# the optimised build.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
capacity_prerequisites
tmp=$(mktemp -d)
marker="sizeup-sweep-recovery-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
port=$(free_port)
cat >"$tmp/profile.yaml" <<'YAML'
users: 1
search: { warmup: 500ms, window: 2s, precision: 5%, repeats: 3, settle: 15s }
slo: { p95: 200ms }
YAML

run_sweep "$tmp" nice -n 5 "$BIN" sweep --configs "1@1/128Mi" --profile "$tmp/profile.yaml" \
    --port "$port" --out "$tmp/out" -- \
    env SLOTS_PER_WORKER=7 HOLD_MS=50 SLOW_AFTER_S=5 \
    python3 "$ROOT/tests/servers/capacity_server.py" "$marker" ||
    { cat "$tmp/stderr"; exit 1; }
require_enforced "$tmp/out/results.json"
python3 - "$tmp/out/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["variants"][0]
c = v["slo_capacity"]
rec = c["recovery"]
known = 7 * 1000 / 50
for s in c["steps"]:
    print(f'    {s["kind"]:7} offered {s["offered_rps"]:7.1f} achieved {s["achieved_rps"]:7.1f} '
          f'p95 {s["p95_ms"]:7.1f} ms  {"pass" if s["pass"] else "fail"}')
print(f'found {c["rps"]:.1f} req/s of known {known:.0f}, flags {c["flags"]}; recovery {rec}')
assert abs(c["rps"] - known) <= 0.15 * known, f'{c["rps"]:.1f} not within 15% of {known:.0f}'
assert rec["settles"] >= 1, rec
assert rec["ran_out"] == 0, rec
assert rec["held"] == "rate", rec
assert rec["longest_s"] is not None and rec["longest_s"] >= 1, rec
assert rec["bound_s"] == 15, rec
assert d["profile"]["search"]["settle_s"] == 15
if v.get("recommended"):
    assert any(f.startswith("Recovery: after an overload") for f in d["findings"]), d["findings"]
PY
grep -q "recovered in [0-9]* s" "$tmp/out/results.md" ||
    { echo "FAIL: results.md does not show the recovery"; exit 1; }
grep -q "event=sweep.recovery .*recovered_s=" "$tmp/stderr" ||
    { echo "FAIL: no sweep.recovery in the log"; exit 1; }
[ -z "$(leftover_procs "$marker")" ] || { echo "FAIL: app left running"; exit 1; }
echo "sweep_recovery: ok"
