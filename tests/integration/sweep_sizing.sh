#!/usr/bin/env bash
# The sizing answer from a real capacity search with a target (--target-rps): results.json's
# recommendation carries the planned load per pod, the replicas and the HPA as the documented
# formulas give them from the variant's own slo_capacity; values.yaml carries the same numbers
# (a CPU HPA in its autoscaling block and no hpa.yaml beside it; a request-rate one in hpa.yaml,
# the chart's own off); `helm template` of a chart made by `helm create` with that values.yaml renders them;
# results.md and report.html show the Capacity @SLO and per core columns, and report.html (in
# headless Chromium) the capacity bars with their whisker and the knee chart. Runs the optimised
# build against tests/servers/capacity_server.py (known capacity 2 x 2 x 1000 / 20 = 200 req/s).
# --scale-out 0: the replica count here is the one-pod formula's; whether the default scale-out runs
# depends on the host's cores, and sweep_scale_out.sh measures it.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
capacity_prerequisites
# shellcheck source=tests/policy/env.sh
. "$ROOT/tests/policy/env.sh"
need_helm
need_pyyaml
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "chromium is missing (scripts/install-deps.sh test)"; exit 1; }
tmp=$(mktemp -d)
marker="sizeup-sweep-sizing-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
port=$(free_port)
cat >"$tmp/profile.yaml" <<'YAML'
users: 16
search: { warmup: 500ms, window: 2s, precision: 5% }
slo: { p95: 200ms }
YAML

attempt() {
rm -rf "$tmp/out"
run_sweep "$tmp" nice -n 5 "$BIN" sweep --configs "2@0.5/128Mi" --target-rps 1000 --scale-out 0 \
    --profile "$tmp/profile.yaml" --port "$port" --out "$tmp/out" -- \
    env SLOTS_PER_WORKER=2 HOLD_MS=20 python3 "$ROOT/tests/servers/capacity_server.py" "$marker" ||
    return 1
require_enforced "$tmp/out/results.json"
# A busy shared host can leave the one variant noisy, and then nothing to size: try again.
"$PY" - "$tmp/out/results.json" <<'PY' || return 1
import json, sys
d = json.load(open(sys.argv[1]))
c = d["variants"][0]["slo_capacity"]
iv = c["interval"] or [float("nan")] * 2  # null when the repeats disagreed
print(f'capacity {c["rps"]:.1f} req/s [{iv[0]:.1f}, {iv[1]:.1f}], '
      f'valid {c["valid"]}, flags {c["flags"]}')
sys.exit(0 if c["valid"] else 1)
PY
}
attempt || { echo "== the host was busy: one more try"; attempt; }

out="$tmp/out"
"$PY" - "$out" <<'PY'
import json, math, os, sys, yaml
out = sys.argv[1]
d = json.load(open(os.path.join(out, "results.json")))
v = d["variants"][0]
c = v["slo_capacity"]
r = d["recommendation"]
print("recommendation:", json.dumps(r))
low = c["interval"][0] if c["repeats"] >= 2 else c["rps"]
planned = low * (1 - 0.10) / (1 + 0.30)
assert r["index"] == 0 and r["by_target"] and r["target_rps"] == 1000, r
assert abs(r["planned_rps_per_pod"] - planned) <= 1e-6 * planned, (r["planned_rps_per_pod"], planned)
reps = math.ceil(1000 / planned - 1e-9)
assert r["replicas"] == reps, (r["replicas"], reps)
values = yaml.safe_load(open(os.path.join(out, "values.yaml")))
print("values.yaml:", values)
assert values["replicaCount"] == reps, values
want_cpu = max(10, math.ceil(c["cpu_cores"] * 100 - 1e-9) * 10)
assert values["resources"]["requests"]["cpu"] == f"{min(want_cpu, 500)}m", (values, c["cpu_cores"])
hpa_path = os.path.join(out, "hpa.yaml")
want_max = max(math.ceil(1000 * 1.3 / planned - 1e-9), math.ceil(1000 * 1.3 / low - 1e-9), reps + 1)
if r["hpa"] is None:
    assert values["autoscaling"] == {"enabled": False}, values
    assert not os.path.exists(hpa_path), "hpa.yaml without an HPA"
    print("no HPA:", [f for f in d["findings"] if f.startswith("Autoscaling")])
elif r["hpa"]["metric"] == "pods":
    # CPU that does not grow with load (the server only sleeps): the request-rate HPA.
    h = r["hpa"]
    assert h["min_replicas"] == reps and h["max_replicas"] == want_max, h
    assert planned - 0.0011 <= h["target_average_value"] <= planned, (h, planned)
    assert values["autoscaling"] == {"enabled": False}, values
    assert r["keda"]["threshold"] == h["target_average_value"], r["keda"]
    print("request-rate HPA:", h)
else:
    h = r["hpa"]
    assert h["metric"] == "cpu", h
    assert h["min_replicas"] == reps and h["max_replicas"] == want_max, h
    assert 10 <= h["target_cpu_utilization"] <= 100, h
    assert values["autoscaling"] == {"enabled": True, "minReplicas": h["min_replicas"],
                                     "maxReplicas": h["max_replicas"],
                                     "targetCPUUtilizationPercentage": h["target_cpu_utilization"]}
    # One autoscaler path: the chart's autoscaling is mapped, so values.yaml carries the HPA
    # and no hpa.yaml is written or offered.
    assert h["applied_by"] == "values.yaml", h
    assert not os.path.exists(hpa_path), "hpa.yaml beside values.yaml's autoscaling block"
    print("values.yaml's HPA:", h["min_replicas"], h["max_replicas"], h["target_cpu_utilization"])
assert any("the sweep measured one pod" in f for f in d["findings"]), d["findings"]
md = open(os.path.join(out, "results.md")).read()
assert "| Capacity @SLO | per core |" in md, "results.md lacks the capacity columns"
assert f'{c["rps"]:.0f} req/s [{c["interval"][0]:.0f}, {c["interval"][1]:.0f}]' in md
PY

# The values in a chart made by `helm create`.
"$HELM" create "$tmp/app" >/dev/null
"$HELM" template app "$tmp/app" -f "$out/values.yaml" >"$tmp/render.yaml"
reps=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["recommendation"]["replicas"])' "$out/results.json")
if grep -q "enabled: true" "$out/values.yaml"; then
    expect "helm template: the chart's HPA has the recommended minReplicas $reps" "$tmp/render.yaml" \
        "one('HorizontalPodAutoscaler')['spec']['minReplicas'] == $reps"
else
    expect "helm template: the Deployment runs the recommended $reps replicas" "$tmp/render.yaml" \
        "one('Deployment')['spec']['replicas'] == $reps and of('HorizontalPodAutoscaler') == []"
fi

# report.html in headless Chromium: the capacity bars with a whisker, one knee chart.
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run
       --disable-extensions --user-data-dir="$tmp/profile")
shot="${BUILD:-$tmp}/test-logs/sweep_sizing-report.png"
mkdir -p "$(dirname "$shot")"
timeout 60 "$chrome" "${flags[@]}" --window-size=1100,2400 --screenshot="$shot" \
    "file://$out/report.html" >"$tmp/shot.log" 2>&1 || { cat "$tmp/shot.log"; exit 1; }
timeout 60 "$chrome" "${flags[@]}" --dump-dom "file://$out/report.html" >"$tmp/dom.html" \
    2>"$tmp/dom.log" || { cat "$tmp/dom.log"; exit 1; }
"$PY" - "$tmp/dom.html" "$out/report.html" <<'PY'
import re, sys
import xml.etree.ElementTree as ET
dom, src = open(sys.argv[1]).read(), open(sys.argv[2]).read()
for needle in ('id="chart-capacity"', 'class="whisker"', 'id="chart-knee-0"', 'class="p95"',
               'class="p99"', 'class="slo"', 'class="capline"', "<th>Capacity @SLO</th>"):
    assert needle in dom, f"{needle} not in the rendered page"
steps = len(re.findall(r'<circle class="step"', dom))
assert steps >= 3, f"{steps} steps drawn"
for s in re.findall(r"<svg.*?</svg>", src, re.S):
    ET.fromstring(s)
print(f"report.html: capacity bars with whisker, knee chart with {steps} steps")
PY
[ "$FAILED" -eq 0 ] || exit 1
left=$(leftover_procs "$marker")
[ -z "$left" ] || { echo "processes left behind: $left"; exit 1; }
echo "ok"
