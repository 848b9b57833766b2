#!/usr/bin/env bash
# slow: make e2e
# The scale-out against pods that share a backend of known capacity
# (tests/servers/shared_backend.py): each pod 4 slots x 40 ms = 100 req/s, the backend 5 slots x
# 20 ms = 250 req/s. At 1..4 replicas the points rise with N and flatten at the backend's 250
# (within 15%); the fit's s or k is clearly above 0 (not linear); a target above the plateau is
# not reachable from the curve, with the plateau's number (a target below it getting the count
# the points support is tests/unit/test_sizing.c's test_curve_replicas). Runs the optimised
# build; about 2 minutes.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
capacity_prerequisites
tmp=$(mktemp -d)
marker="sizeup-sweep-shared-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
python3 "$ROOT/tests/servers/shared_backend.py" --backend --port-file "$tmp/backend.port" \
    "$marker" >"$tmp/backend.log" 2>&1 &
for _ in $(seq 50); do [ -s "$tmp/backend.port" ] && break; sleep 0.1; done
[ -s "$tmp/backend.port" ] || { echo "FAIL: the backend did not start"; exit 1; }
backend=$(cat "$tmp/backend.port")
port=$(free_port)

# A sweep with target TARGET req/s and 1..4 replicas into OUT.
sweep() { # TARGET OUT
    cat >"$tmp/profile.yaml" <<YAML
users: 8
search: { warmup: 500ms, window: 2s, precision: 5%, repeats: 2, max_steps: 6 }
slo: { p95: 300ms }
target: { rps: $1 }
scale_out: { max: 4 }
YAML
    run_sweep "$tmp" nice -n 5 "$BIN" sweep --configs "1@0.25/128Mi" --profile "$tmp/profile.yaml" \
        --port "$port" --out "$2" -- env BACKEND_PORT="$backend" \
        python3 "$ROOT/tests/servers/shared_backend.py" "$marker" ||
        { cat "$tmp/stderr"; exit 1; }
}
sweep 400 "$tmp/high"
require_enforced "$tmp/high/results.json"
python3 - "$tmp/high/results.json" <<'PY'
import json, sys
so = json.load(open(sys.argv[1]))["scale_out"]
pts = {p["replicas"]: p for p in so["points"]}
for n, p in sorted(pts.items()):
    print("  %d replicas: %.1f req/s %s %s %s" % (n, p["rps"] or 0, p["interval"], p["from"],
                                                 p["flags"]))
u, r = so["usl"], so["replicas"]
print("usl: s %.3f +/- %.3f, k %.4f +/- %s, peak %s, linear %s: %s" %
      (u["s"], u["s_err"], u["k"], u["k_err"], u["peak_replicas"], u["linear"], u["meaning"]))
print("target 400: %s" % r)
assert abs(pts[1]["rps"] - 100) <= 15, pts[1]
assert pts[2]["rps"] > 1.5 * pts[1]["rps"], "no rise from 1 to 2"
for n in (3, 4):
    assert abs(pts[n]["rps"] - 250) <= 0.15 * 250, "%d replicas: %s not near 250" % (n, pts[n]["rps"])
assert not u["linear"], "the plateau read as linear"
assert r["target_reachable"] is False and r["from_curve"] is None, r
assert "not reachable" in r["why"] and r["most_rps"] <= 290, r
PY
echo "sweep_scale_out_shared: ok"
