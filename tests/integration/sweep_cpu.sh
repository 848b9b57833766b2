#!/usr/bin/env bash
# A real sweep of a CPU-bound test server over two variants under real cgroup limits:
# throughput is ordered as the CPU limits are, and the CPU the cgroup measured is not above
# each variant's limit (within 10%). Nothing is left running and no cgroup is left behind.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
command -v python3 >/dev/null || { echo "python3 is missing (scripts/install-deps.sh test)"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "not root: cgroups not writable"; exit 77; }
tmp=$(mktemp -d)
marker="sizeup-sweep-cpu-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
port=$(free_port)

set +e
"$SIZEUP" sweep --configs "1@0.25/128Mi 1@0.75/128Mi" --port "$port" --load fixed --users 8 \
    --duration 4s --warmup 1s --out "$tmp/out" -- \
    env WORK=100000 python3 "$ROOT/tests/integration/cpu_server.py" "$marker" \
    >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
wait $pid
rc=$?
set -e
cat "$tmp/stdout"
[ $rc -eq 0 ] || { echo "sweep exited $rc"; tail -20 "$tmp/stderr"; exit 1; }
require_enforced "$tmp/out/results.json"

python3 - "$tmp/out/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["variants"]
assert len(v) == 2, v
for x in v:
    assert x["state"] == "measured", x.get("failure")
    limit = x["cpu_millicores"] / 1000.0
    used = x["usage"]["cpu_cores"]
    print(f'{x["spec"]}: {x["throughput_rps"]:.1f} req/s, CPU used {used:.3f} of {limit} cores, '
          f'peak memory {x["usage"]["peak_memory_bytes"] / 1048576:.1f} MiB')
    assert used is not None and used > 0, "CPU use not measured"
    assert used <= limit * 1.10, f'{x["spec"]} used {used:.3f} cores, limit {limit}'
    assert x["usage"]["peak_memory_bytes"] > 0
    assert x["requests"] > 0 and x["error_rate"] == 0, x["errors"]
lo, hi = v[0]["throughput_rps"], v[1]["throughput_rps"]
# Three times the CPU: at least 1.5x the throughput even on a busy shared host.
assert hi > lo * 1.5, f"throughput not ordered as the CPU limits: {lo} vs {hi}"
import os
out = os.path.dirname(sys.argv[1])
for f in ["results.md", "auto-sizing.yaml", "report.html"]:
    assert os.path.getsize(os.path.join(out, f)) > 0, f
# values.yaml exists exactly when there is a recommendation (a busy host can leave none).
has_values = os.path.exists(os.path.join(out, "values.yaml"))
assert has_values == (d["recommendation"]["index"] is not None), "values.yaml vs recommendation"
PY

left=$(leftover_procs "$marker")
[ -z "$left" ] || { echo "processes left behind: $left"; exit 1; }
cg=$(leftover_cgroups "$pid")
[ -z "$cg" ] || { echo "cgroups left behind: $cg"; exit 1; }
grep -q '^| Config | Workers | CPU | Memory | Throughput' "$tmp/out/results.md" || { echo "no table in results.md"; exit 1; }
echo "ok"
