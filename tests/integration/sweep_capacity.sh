#!/usr/bin/env bash
# slow: make e2e
# The capacity search against an app whose capacity is known in advance
# (tests/servers/capacity_server.py: SLOTS requests at once, each holding its slot HOLD_MS, so at
# most SLOTS x 1000 / HOLD_MS req/s), with two variants whose WORKERS give different known
# capacities: each found capacity is within 10% of the known one, below it, reached in at most
# 8 search steps (probe and repeats not counted; the second variant, whose search starts from
# the capacity predicted by the first's, in at most 5), limited by the SLO, with 3 repeats (6
# when a noisy interval is measured again; at a lower passing rate when repeats did not hold)
# and an interval; each step carries its usage and the cgroup's throttling. Runs the optimised
# build.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
capacity_prerequisites
tmp=$(mktemp -d)
marker="sizeup-sweep-capacity-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
port=$(free_port)
cat >"$tmp/profile.yaml" <<'YAML'
users: 16
search: { warmup: 500ms, window: 2500ms, precision: 3% }
# 20 ms of work per request: a 200 ms objective leaves room for a busy shared host's scheduling
# delays, and above the capacity the queue still passes it within a window (10% over: +250 ms).
slo: { p95: 200ms }
YAML

attempt() {
rm -rf "$tmp/out"
run_sweep "$tmp" nice -n 5 "$BIN" sweep --configs "2@1/128Mi 4@1/128Mi" \
    --profile "$tmp/profile.yaml" --port "$port" --out "$tmp/out" -- \
    env SLOTS_PER_WORKER=2 HOLD_MS=20 python3 "$ROOT/tests/servers/capacity_server.py" "$marker" ||
    return 1
require_enforced "$tmp/out/results.json"

python3 - "$tmp/out/results.json" <<'PY' || return 1
import json, sys
d = json.load(open(sys.argv[1]))
v = d["variants"]
assert len(v) == 2, v
for i, x in enumerate(v):
    assert x["state"] == "measured", x.get("failure")
    known = x["workers"] * 2 * 1000 / 20
    c = x["slo_capacity"]
    steps = c["steps"]
    search = [s for s in steps if s["kind"] == "search"]
    # interval is null when the repeats disagreed (known false).
    iv = c["interval"] or [float("nan")] * 2
    print(f'{x["spec"]}: found {c["rps"]:.1f} req/s [{iv[0]:.1f}, {iv[1]:.1f}] (known '
          f'{c["known"]}) of known {known:.0f} in {len(search)} search steps, '
          f'limited by {c["limited_by"]}, flags {c["flags"]}')
    for s in steps:
        print(f'    {s["kind"]:7} offered {s["offered_rps"]:7.1f} achieved {s["achieved_rps"]:7.1f} '
              f'p95 {s["p95_ms"]:7.1f} ms  {"pass" if s["pass"] else "fail"}')
    assert abs(c["rps"] - known) <= 0.10 * known, f'{c["rps"]} not within 10% of {known}'
    assert len(search) <= 8, f"{len(search)} search steps"
    # Learned from the first: the prediction brackets the capacity within two steps and two
    # bisections reach the precision; one step of slack for a noisy knee.
    assert i == 0 or len(search) <= 5, f"predicted start, yet {len(search)} search steps"
    print(f'    wall time {x["timing"]["wall_s"]:.1f} s, {len(steps)} steps in all')
    assert c["limited_by"] in ("slo-p95", "slo-p99", "slo-errors"), c["limited_by"]
    assert "generator-limited" not in c["flags"] and "none passed" not in c["flags"]
    # Three repeats, or six where a noisy interval was measured again.
    assert c["repeats"] in (3, 6) and len(c["repeat_rps"]) == c["repeats"], c["repeats"]
    assert c["interval"] is None or 0 <= c["interval"][0] <= c["rps"] <= c["interval"][1]
    assert steps[0]["kind"] == "probe" and [s["kind"] for s in steps[-3:]] == ["repeat"] * 3
    # The repeats that count ran at one rate a search step passed: the highest pass, or, where
    # repeats there did not hold (most missed the SLO, or merged they did), a lower one.
    counted = [s for s in steps if s["kind"] == "repeat"][-c["repeats"]:]
    rate = counted[0]["offered_rps"]
    assert all(s["offered_rps"] == rate for s in counted), counted
    passed = [s["offered_rps"] for s in search if s["pass"]]
    assert rate in passed, (rate, passed)
    assert rate == max(passed) or any(s["kind"] == "repeat" and s["offered_rps"] > rate
                                      for s in steps), "repeats below the highest pass, unrefuted"
    assert abs(c["per_core"] - c["rps"]) < 1e-6  # one core
    for s in steps:
        assert s["cpu_cores"] is not None and s["cpu_cores"] >= 0, s
        # Use is measured over the step's window (2.5 s) and its drain.
        assert s["kind"] == "probe" or s["usage_window_s"] >= 2.45, s
        assert s["throttling"] is not None and s["throttling"]["periods"] > 0, s
    assert c["throttling"]["periods"] >= sum(s["throttling"]["periods"] for s in steps) - 1
    assert c["cpu_cores"] is not None and c["peak_memory_bytes"] > 0
    # The row's own figures are the last repeat's.
    assert abs(x["throughput_rps"] - steps[-1]["achieved_rps"]) <= 0.01 * c["rps"], x["throughput_rps"]
lo, hi = (x["slo_capacity"]["rps"] for x in v)
assert hi > lo * 1.6, f"4 workers ({hi}) not about twice 2 workers ({lo})"
PY
}
# A shared host busy enough to make the app miss its objective at random shows as a noisy or
# off capacity; like any timing test, one more try before believing it.
attempt || { echo "== the host was busy: one more try"; attempt; }
grep -q "capacity search" "$tmp/stderr" || { echo "no capacity search announced"; exit 1; }
grep -q "event=sweep.predict variant=4@1/128Mi" "$tmp/stderr" ||
    { echo "the second variant's start was not predicted"; exit 1; }
left=$(leftover_procs "$marker")
[ -z "$left" ] || { echo "processes left behind: $left"; exit 1; }
cg=$(leftover_cgroups "$SWEEP_PID")
[ -z "$cg" ] || { echo "cgroups left behind: $cg"; exit 1; }
echo "ok"
