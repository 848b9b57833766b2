#!/usr/bin/env bash
# slow: make e2e
# The capacity search on a CPU-bound app (tests/integration/cpu_server.py) at two CPU limits:
# the capacity grows with the limit (three times the CPU: at least twice the capacity), the CPU
# used at capacity stays within each limit, and the CFS throttling the smaller variant met near
# its limit is measured (cpu.stat), not guessed. Runs the optimised build.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
capacity_prerequisites
tmp=$(mktemp -d)
marker="sizeup-sweep-capacity-cpu-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
port=$(free_port)
cat >"$tmp/profile.yaml" <<'YAML'
users: 8
search: { warmup: 500ms, window: 2s, precision: 10%, repeats: 2 }
# A quarter core is throttled up to 75 ms in every 100 ms period; on a shared 2-core host a
# 100 ms objective would measure the neighbours as much as the app.
slo: { p95: 300ms }
YAML

run_sweep "$tmp" nice -n 5 "$BIN" sweep --configs "1@0.25/128Mi 1@0.75/128Mi" \
    --profile "$tmp/profile.yaml" --port "$port" --out "$tmp/out" -- \
    env WORK=20000 python3 "$ROOT/tests/integration/cpu_server.py" "$marker"
require_enforced "$tmp/out/results.json"

python3 - "$tmp/out/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["variants"]
assert len(v) == 2, v
for x in v:
    assert x["state"] == "measured", x.get("failure")
    c = x["slo_capacity"]
    limit = x["cpu_millicores"] / 1000.0
    t = c["throttling"]
    iv = c["interval"] or [float("nan")] * 2  # null when the repeats disagreed
    print(f'{x["spec"]}: {c["rps"]:.1f} req/s [{iv[0]:.1f}, {iv[1]:.1f}], '
          f'{c["per_core"]:.0f} per core, CPU at capacity {c["cpu_cores"]:.3f} of {limit}, '
          f'throttled {t["throttled_periods"]} of {t["periods"]} periods ({t["throttled_s"]:.2f} s), '
          f'limited by {c["limited_by"]}, {len([s for s in c["steps"] if s["kind"] == "search"])} '
          f'search steps')
    for s in c["steps"]:
        print(f'    {s["kind"]:7} offered {s["offered_rps"]:6.1f} sustained {s["sustained_rps"]:6.1f} '
              f'p95 {s["p95_ms"]:6.1f} ms cpu {s["cpu_cores"]:.2f} throttled '
              f'{s["throttling"]["throttled_periods"]}/{s["throttling"]["periods"]}  '
              f'{"pass" if s["pass"] else "fail"}')
    assert c["rps"] > 0 and c["limited_by"] in ("slo-p95", "slo-p99", "slo-errors"), c["limited_by"]
    assert "generator-limited" not in c["flags"]
    assert c["cpu_cores"] <= limit * 1.10, f'{c["cpu_cores"]} cores at capacity, limit {limit}'
    assert t["periods"] > 0
small, big = v[0]["slo_capacity"], v[1]["slo_capacity"]
assert big["rps"] > 2.0 * small["rps"], f'capacity did not grow with the CPU: {small["rps"]} -> {big["rps"]}'
# Overloaded steps of a quarter core spend most periods at the quota.
worst = max(s["throttling"]["throttled_periods"] for s in small["steps"])
assert worst > 0 and small["throttling"]["throttled_s"] > 0, "no throttling measured at 0.25 cores"
PY
left=$(leftover_procs "$marker")
[ -z "$left" ] || { echo "processes left behind: $left"; exit 1; }
cg=$(leftover_cgroups "$SWEEP_PID")
[ -z "$cg" ] || { echo "cgroups left behind: $cg"; exit 1; }
echo "ok"
