#!/usr/bin/env bash
# slow: make e2e
# The scale-out against pods that share a backend of known capacity
# (tests/servers/shared_backend.py): each pod 4 slots x 40 ms = 100 req/s, the backend 5 slots x
# 20 ms = 250 req/s. At 1..4 replicas the points rise with N and flatten at the backend's 250
# (within 15%); the fit's s or k is clearly above 0 (not linear); a target above the plateau is
# not reachable from the curve, with the plateau's number: no hpa.yaml, nothing at values.yaml's
# replicaCount and autoscaling, no replicas in deployment-patch.yaml, recommendation.replicas
# null and target_reachable false. A target below the plateau gets the count the points support,
# and that count is the one recommendation.replicas, values.yaml and the patch carry. Runs the
# optimised build; about 3 minutes.
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
port=$(free_port 4)

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
        --port "$port" --out "$2" --deployment web -- env BACKEND_PORT="$backend" \
        python3 "$ROOT/tests/servers/shared_backend.py" "$marker" ||
        { cat "$tmp/stderr"; exit 1; }
}
sweep 400 "$tmp/high"
require_enforced "$tmp/high/results.json"
grep -i "scale-out" "$tmp/stdout" || true # the table, or why it did not run
python3 - "$tmp/high/results.json" <<'PY'
import json, sys
so = json.load(open(sys.argv[1]))["scale_out"]
pts = {p["replicas"]: p for p in so["points"]}
for n, p in sorted(pts.items()):
    print("  %d replicas: %.1f req/s %s %s %s %s" % (n, p["rps"] or 0, p["interval"], p["from"],
                                                    p["flags"], p.get("note", "")))
u, r = so["usl"], so["replicas"]
print("usl: s %.3f +/- %.3f, k %.4f +/- %s, peak %s, linear %s: %s" %
      (u["s"], u["s_err"], u["k"], u["k_err"], u["peak_replicas"], u["linear"], u["meaning"]))
print("target 400: %s" % r)
for n in (1, 2, 3, 4):
    assert pts[n]["rps"] is not None, "%d replicas not measured: %s" % (n, pts[n])
assert abs(pts[1]["rps"] - 100) <= 15, pts[1]
assert pts[2]["rps"] > 1.5 * pts[1]["rps"], "no rise from 1 to 2"
for n in (3, 4):
    assert abs(pts[n]["rps"] - 250) <= 0.15 * 250, "%d replicas: %s not near 250" % (n, pts[n]["rps"])
assert not u["linear"], "the plateau read as linear"
assert r["target_reachable"] is False and r["from_curve"] is None, r
assert "not reachable" in r["why"] and r["most_rps"] <= 290, r
PY
# The unreachable target: the shape stands, no count of it is written anywhere.
python3 - "$tmp/high" <<'PY'
import json, os, sys
out = sys.argv[1]
d = json.load(open(os.path.join(out, "results.json")))
rec = d["recommendation"]
print("recommendation: replicas %s, linear %s, reachable %s, from %s" %
      (rec["replicas"], rec["replicas_linear"], rec["target_reachable"], rec["replicas_from"]))
assert rec["index"] is not None, rec
assert rec["replicas"] is None and rec["target_reachable"] is False, rec
assert rec["replicas_from"] == "curve" and rec["hpa"] is None, rec
assert "not reachable" in rec["replicas_why"], rec
assert not os.path.exists(os.path.join(out, "hpa.yaml")), "hpa.yaml written"
values = open(os.path.join(out, "values.yaml")).read()
assert "workers:" in values and "resources:" in values, values
assert "replicaCount" not in values and "autoscaling" not in values, values
patch = open(os.path.join(out, "deployment-patch.yaml")).read()
assert "resources:" in patch and "replicas:" not in patch, patch
PY
grep -q "TargetUnreachable\|not reachable" "$tmp/high/results.md" ||
    { echo "FAIL: results.md does not say the target is unreachable"; exit 1; }

# A target below the plateau: the curve's count, the one every file carries.
sweep 120 "$tmp/low"
python3 - "$tmp/low" <<'PY'
import json, os, sys
out = sys.argv[1]
d = json.load(open(os.path.join(out, "results.json")))
rec, r = d["recommendation"], d["scale_out"]["replicas"]
print("target 120: replicas %s (linear %s), curve %s" % (rec["replicas"], rec["replicas_linear"], r))
assert rec["replicas_from"] == "curve" and rec["target_reachable"] is True, rec
assert r["from_curve"] is not None and rec["replicas"] == r["from_curve"], (rec, r)
values = open(os.path.join(out, "values.yaml")).read()
assert "replicaCount: %d\n" % rec["replicas"] in values, values
patch = open(os.path.join(out, "deployment-patch.yaml")).read()
assert "  replicas: %d\n" % rec["replicas"] in patch, patch
if rec["hpa"]:
    assert rec["hpa"]["min_replicas"] == rec["replicas"], rec["hpa"]
    assert rec["hpa"]["max_replicas"] <= r["cap"], (rec["hpa"], r)
PY
echo "sweep_scale_out_shared: ok"
