#!/usr/bin/env bash
# The scale-out's wall time per point: a local `sizeup sweep` of one variant with --scale-out 3
# of tests/servers/capacity_server.py (SLOTS_PER_WORKER x 1000 / HOLD_MS req/s per pod, a sleep,
# not CPU), the profile of tests/integration/sweep_scale_out.sh. Per point, from the log: the
# wall time from its sweep.scale_out line (replicas started) to its sweep.scale_out.point line
# (replicas stopped), its search steps and the load runs' planned warm-ups and windows, settles
# and the rest (start, readiness, stop); the point at 1 replica is the shape search's.
# Needs root (cgroups). Usage: SIZEUP=build/sizeup bench/scale_out_time.sh   (SCALE_OUT to change,
# KEEP=1 keeps the work directory)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZEUP=${SIZEUP:-$ROOT/build/sizeup}
# shellcheck source=tests/lib/common.sh
. "$ROOT/tests/lib/common.sh"
tmp=$(mktemp -d /tmp/sizeup-scaleout-bench.XXXXXX)
pid=
cleanup() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
    [ -n "$pid" ] && wait "$pid" 2>/dev/null
    if [ -n "${KEEP:-}" ]; then echo "kept: $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
port=$(free_port "${SCALE_OUT:-3}")
cat >"$tmp/profile.yaml" <<'YAML'
users: 8
search: { warmup: 500ms, window: 2s, precision: 5%, repeats: 2, max_steps: 6 }
slo: { p95: 200ms }
YAML
t0=$(date +%s.%N)
"$SIZEUP" sweep --configs "1@0.5/128Mi" --profile "$tmp/profile.yaml" --scale-out "${SCALE_OUT:-3}" \
    --port "$port" --out "$tmp/out" -- \
    env SLOTS_PER_WORKER=4 HOLD_MS=40 python3 "$ROOT/tests/servers/capacity_server.py" \
    >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
wait "$pid"
rc=$?
pid=
t1=$(date +%s.%N)
[ $rc -eq 0 ] || { echo "sweep exited $rc"; tail -20 "$tmp/stderr"; exit 1; }
python3 - "$tmp/stderr" "$t0" "$t1" <<'PY'
import re, sys
from datetime import datetime
log, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
def ts(line):
    m = re.search(r'ts=(\S+)Z', line)
    return datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f").timestamp()
cur, rows, shape = None, [], None
for line in open(log):
    f = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))
    if "event=sweep.scale_out " in line:
        cur = {"n": int(f["replicas"]), "t": ts(line), "start": float(f["start_rps"])}
    elif "event=sweep.capacity_time" in line:
        d = {k: float(f[k]) for k in ("window_s", "settle_s", "start_s", "hold_s")}
        d["steps"] = int(f["steps"])
        if cur is None:
            shape = d
        else:
            cur.update(d)
    elif "event=sweep.measured" in line and cur is None and shape is not None:
        shape["wall"] = float(f["wall_s"])
    elif "event=sweep.scale_out.point" in line and cur is not None:
        cur["wall"] = ts(line) - cur["t"]
        cur["rps"] = float(f["rps"])
        rows.append(cur)
        cur = None
print(f"{'replicas':>8} {'start rps':>9} {'rps':>7} {'steps':>5} {'windows':>8} {'settle':>7} {'other':>7} {'wall s':>7}")
if shape:
    print(f"{1:>8} {'(shape)':>9} {'':>7} {shape['steps']:>5} {shape['window_s']:8.1f} "
          f"{shape['settle_s']:7.1f} {shape.get('wall', 0) - shape['window_s'] - shape['settle_s']:7.1f} "
          f"{shape.get('wall', 0):7.1f}")
tot = 0.0
for r in rows:
    other = r["wall"] - r.get("window_s", 0) - r.get("settle_s", 0)
    tot += r["wall"]
    print(f"{r['n']:>8} {r['start']:9.1f} {r['rps']:7.1f} {r.get('steps', 0):>5} "
          f"{r.get('window_s', 0):8.1f} {r.get('settle_s', 0):7.1f} {other:7.1f} {r['wall']:7.1f}")
print(f"scale-out points: {tot:.1f} s; whole sweep: {t1 - t0:.1f} s")
if not rows:
    print("no scale-out point measured; the log says:")
    for line in open(log):
        if "scale_out" in line or "level=warn" in line:
            print("  " + line.rstrip()[:300])
PY
