#!/usr/bin/env bash
# A generator that cannot deliver: sizeup runs with a descriptor limit (prlimit) that caps its
# connections far below what the app needs at the rates the search reaches (an app answering in
# 400 ms, well within a 1 s objective, with room for thousands of requests at once). The row is
# flagged generator-limited, its capacity reported as "at least X" and never as the app's:
# limited_by generator, not valid, not counted as capacity, no recommendation from it.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
command -v prlimit >/dev/null || { echo "prlimit (util-linux) not installed"; exit 77; }
capacity_prerequisites
tmp=$(mktemp -d)
marker="sizeup-sweep-capacity-gen-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
port=$(free_port)
cat >"$tmp/profile.yaml" <<'YAML'
users: 20
timeout: 3s
search: { warmup: 500ms, window: 1500ms }
slo: { p95: 1s }
YAML

# 200 descriptors: about 70 connections for the generator once its own files are set aside.
run_sweep "$tmp" prlimit --nofile=200:200 nice -n 5 "$BIN" sweep --configs "1@1/128Mi" \
    --profile "$tmp/profile.yaml" --port "$port" --out "$tmp/out" -- \
    env SLOTS_PER_WORKER=1000 HOLD_MS=400 python3 "$ROOT/tests/servers/capacity_server.py" "$marker"

python3 - "$tmp/out/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
x = d["variants"][0]
assert x["state"] == "measured", x.get("failure")
c = x["slo_capacity"]
for s in c["steps"]:
    print(f'    {s["kind"]:7} offered {s["offered_rps"]:6.1f} sustained {s["sustained_rps"]:6.1f} '
          f'p95 {s["p95_ms"]:6.1f} ms  {"pass" if s["pass"] else "generator" if s["generator_limited"] else "fail"}')
print(f'capacity: at least {c["rps"]:.1f} req/s, limited by {c["limited_by"]}, flags {c["flags"]}')
assert c["limited_by"] == "generator", c["limited_by"]
assert "generator-limited" in c["flags"] and c["valid"] is False
assert any(s["generator_limited"] for s in c["steps"])
# The lower bound is real: some rate passed, and every passing rate is below the limited one.
limited = min(s["offered_rps"] for s in c["steps"] if s["generator_limited"])
assert 0 < c["rps"] < limited
assert x["capacity"] is False and "load_generator_saturated" in x["marks"], x["marks"]
assert d["recommendation"]["index"] is None
PY
left=$(leftover_procs "$marker")
[ -z "$left" ] || { echo "processes left behind: $left"; exit 1; }
echo "ok"
