#!/usr/bin/env bash
# The stream-capacity search against a stream server whose cost and capacity are known in
# advance (tests/servers/streamd.py): every open stream holds a resident 512 KiB buffer, and a
# stream asked for while 200 are open is refused. One variant, a local sweep under real cgroup
# limits: the search grows the streams within one session and finds 200 (within the profile's
# 10% precision, never above), limited by the refused streams; the memory per stream, the slope
# of the variant's memory against its open streams, is within 15% of 512 KiB, from at least
# three points. Runs the optimised build.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
capacity_prerequisites
/usr/bin/python3 -c 'import aiohttp' 2>/dev/null ||
    { echo "python3-aiohttp is not installed (scripts/install-deps.sh test)"; exit 1; }
tmp=$(mktemp -d)
marker="sizeup-sweep-streams-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
port=$(free_port)
known=524288
cat >"$tmp/profile.yaml" <<'YAML'
timeout: 3s
search: { warmup: 500ms, window: 1s, precision: 10%, max_steps: 10, budget: 2m }
slo: { delivery_p95: 200ms }
target: { streams: 1000 }
streams: { url: /ws, count: 320, ramp: 2s }
producers:
  count: 2
  rate: 10
  request: { method: POST, path: /cmd, body: '{"seq":{{seq}}}', headers: { Content-Type: application/json } }
  match: seq
YAML

run_sweep "$tmp" nice -n 5 "$BIN" sweep --configs "1@1/512Mi" --profile "$tmp/profile.yaml" \
    --port "$port" --out "$tmp/out" -- /usr/bin/python3 "$ROOT/tests/servers/streamd.py" \
    --port "$port" --delay-ms 10 --stream-bytes $known --max-streams 200 "$marker"
require_enforced "$tmp/out/results.json"
grep "sweep.stream_step" "$tmp/stderr" | sed 's/^.*variant=/    /'
python3 - "$tmp/out" $known <<'PY'
import json, math, sys
out, known = sys.argv[1], int(sys.argv[2])
doc = json.load(open(out + "/results.json"))
v = doc["variants"][0]
assert v["slo_capacity"] is None, "a stream sweep searches streams, not req/s"
c = v["stream_capacity"]
steps = c["steps"]
streams, mps = c["streams"], c["memory_per_stream_bytes"]
print(f"found {streams} streams (known 200), {mps:.0f} bytes per stream (known {known}, "
      f"{100 * (mps - known) / known:+.1f}%), base {c['base_memory_bytes'] / 2**20:.1f} MiB from "
      f"{c['memory_points']} points, delivery p95 {c['delivery_p95_ms']} ms, limited by "
      f"{c['limited_by']}, {len(steps)} steps")
assert steps[0]["streams"] == 0, "the first window holds no stream: the memory at zero"
assert 180 <= streams <= 200, streams
assert c["limited_by"] == "dropped", c["limited_by"]
assert c["valid"] is True
assert c["memory_points"] >= 3, c["memory_points"]
assert abs(mps - known) <= 0.15 * known, f"{mps} is not within 15% of {known}"
assert 0 <= c["delivery_p95_ms"] <= 200, c["delivery_p95_ms"]
# Every passing step held every stream it asked for.
for s in steps:
    if s["pass"]:
        assert s["open"] == s["streams"], s
# The target of 1000 streams: replicas from the planned streams per pod, memory per pod from
# the line, with its arithmetic in a finding.
rec = doc["recommendation"]
planned = streams * 0.9 / 1.3  # the default planning: 10% buffer, 30% growth
assert rec["planned_streams_per_pod"] == math.floor(planned + 1e-9), rec
reps = rec["replicas"]
assert reps == math.ceil(1000 / planned - 1e-9), (reps, streams)
assert rec["streams_per_pod"] == math.ceil(1000 / reps - 1e-9), rec
found = [f for f in doc["findings"] if "memory per stream:" in f]
assert found and f"{reps} pods x {rec['streams_per_pod']} streams x" in found[0], doc["findings"]
print("sizing:", found[0])
md = open(out + "/results.md").read()
assert "Streams @SLO | Memory/stream |" in md, "results.md lacks the stream columns"
html = open(out + "/report.html").read()
assert "<th>Streams @SLO</th><th>Memory/stream</th>" in html
PY
python3 - "$port" <<'PY' 2>/dev/null && { echo "the app still answers after the sweep"; exit 1; }
import sys, urllib.request
urllib.request.urlopen("http://127.0.0.1:%s/__stats" % sys.argv[1], timeout=2)
PY
left=$(leftover_procs "$marker")
[ -z "$left" ] || { echo "processes left behind: $left"; exit 1; }
cg=$(leftover_cgroups "$SWEEP_PID")
[ -z "$cg" ] || { echo "cgroups left behind: $cg"; exit 1; }
echo "ok"
