#!/usr/bin/env bash
# slow: make e2e
# The local scale-out: after the shape search, the variant measured at 2 and 3 replicas, each
# its own process group and cgroup on --port + i with its log DIR/logs/<variant>-r<i>.log. The
# app's capacity is known (tests/servers/capacity_server.py: SLOTS x 1000 / HOLD_MS per pod,
# a sleep, not CPU) and the pods share nothing, so each point is N x one pod within 15%; the
# point at 1 is the shape search's (from: shape-search); the USL fit says linear; results.json
# carries scale_out with its points and the terminal prints the table. Runs the optimised build.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
capacity_prerequisites
tmp=$(mktemp -d)
marker="sizeup-sweep-scaleout-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
port=$(free_port 3)
cat >"$tmp/profile.yaml" <<'YAML'
users: 8
search: { warmup: 500ms, window: 2s, precision: 5%, repeats: 2, max_steps: 6 }
slo: { p95: 200ms }
scale_out: { max: 3 }
YAML

run_sweep "$tmp" nice -n 5 "$BIN" sweep --configs "1@0.5/128Mi" --profile "$tmp/profile.yaml" \
    --port "$port" --out "$tmp/out" -- \
    env SLOTS_PER_WORKER=4 HOLD_MS=40 python3 "$ROOT/tests/servers/capacity_server.py" "$marker" ||
    { cat "$tmp/stderr"; exit 1; }
require_enforced "$tmp/out/results.json"
for i in 0 1 2; do
    [ -s "$tmp/out/logs/1_0.5_128Mi-r$i.log" ] || [ -e "$tmp/out/logs/1_0.5_128Mi-r$i.log" ] ||
        { ls "$tmp/out/logs"; echo "FAIL: no log for replica $i"; exit 1; }
done
python3 - "$tmp/out/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
so = d["scale_out"]
assert so, "no scale_out in results.json"
known = 4 * 1000 / 40
pts = so["points"]
print("variant %s, limited by %s" % (so["variant"], so["limited_by"]))
for p in pts:
    print("  %d replicas: %s req/s %s, from %s, flags %s, cpu %s per pod" %
          (p["replicas"], p["rps"], p["interval"], p["from"], p["flags"], p["cpu_cores"]))
assert [p["replicas"] for p in pts] == [1, 2, 3], pts
assert pts[0]["from"] == "shape-search"
assert all(p["from"] == "measured" for p in pts[1:]), pts
for p in pts:
    want = known * p["replicas"]
    assert abs(p["rps"] - want) <= 0.15 * want, "%s not within 15%% of %s" % (p["rps"], want)
u = so["usl"]
print("usl: s %.4f +/- %s, k %.5f +/- %s, residual %.3f, linear %s: %s" %
      (u["s"], u["s_err"], u["k"], u["k_err"], u["residual"], u["linear"], u["meaning"]))
assert u["residual"] < 0.1
# The header promises it: pods that share nothing scale linearly, and the fit must say so.
assert u["linear"] is True, "the USL fit does not say linear: %s" % u["meaning"]
PY
# A failed step is followed by a settle at every count: one user per replica (a single user
# cannot be split over the replicas' addresses, and the settle then ended at once).
python3 - "$tmp/stderr" <<'PY'
import re, sys
point, failed = None, False
for line in open(sys.argv[1]):
    assert "event=sweep.settle " not in line, line
    if "event=sweep.scale_out " in line:
        point, failed = re.search(r"replicas=(\d+)", line).group(1), False
    elif point and "event=sweep.step" in line and "outcome=pass" not in line:
        failed = True
    elif point and "event=sweep.capacity_time" in line:
        settle = float(re.search(r"settle_s=(\S+)", line).group(1))
        print("  %s replicas: a failed step %s, settles %.2f s" % (point, failed, settle))
        assert not failed or settle > 0, "%s replicas: failed steps, no settle" % point
PY
grep -q "Scale-out of" "$tmp/stdout" || { echo "FAIL: no scale-out table on the terminal"; exit 1; }
grep -q "### Scale-out of 1@0.5/128Mi" "$tmp/out/results.md" || { echo "FAIL: not in results.md"; exit 1; }
[ -z "$(leftover_procs "$marker")" ] || { echo "FAIL: replicas left running"; exit 1; }
echo "sweep_scale_out: ok"
