#!/usr/bin/env bash
# Promise: a noisy host never passes for the app's capacity. A local capacity sweep of one
# variant of tests/servers/capacity_server.py (2 workers x 2 slots x 20 ms: at most 200 req/s)
# runs twice: on a quiet host, then beside a CPU hog at normal priority (one busy loop per
# online CPU, nice 0, for the whole sweep). In the noisy run every row is either marked
# (`contended` or `noisy` among its capacity flags, or not valid) or its valid capacity lies
# within search.precision (3%) of the quiet run's 95% interval.
set -u
. "$(dirname "$0")/lib.sh"
need python3
[ "$(id -u)" -eq 0 ] || { result FAIL noisy-host "not root: cgroups not writable"; exit 1; }
workdir W rel-noisy
marker="sizeup-rel-noisy-$$"
HOGS=()
stop_hogs() {
    local p
    for p in "${HOGS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    for p in "${HOGS[@]}"; do wait "$p" 2>/dev/null; done
    HOGS=()
}
on_exit pkill -KILL -f -- "$marker"
on_exit stop_hogs
cat >"$W/profile.yaml" <<'YAML'
users: 16
search: { warmup: 500ms, window: 2500ms, precision: 3% }
slo: { p95: 200ms }
YAML
sweep() { # NAME
    local port
    port=$(free_port)
    timeout 300 "$SIZEUP" sweep --configs "2@1/128Mi" --profile "$W/profile.yaml" --port "$port" \
        --out "$W/$1" -- env SLOTS_PER_WORKER=2 HOLD_MS=20 \
        python3 "$ROOT/tests/servers/capacity_server.py" "$marker" >"$W/$1.out" 2>"$W/$1.err"
}
t0=$SECONDS
sweep quiet || { result FAIL noisy-host "the quiet sweep failed: $(tail -n 2 "$W/quiet.err")"; exit 1; }
for _ in $(seq 1 "$(nproc)"); do
    timeout 300 python3 -c 'while True: pass' "$marker-hog" &
    HOGS+=($!)
done
sweep noisy
rc=$?
stop_hogs
keep_logs noisy "$W/quiet.err" "$W/noisy.err" "$W/quiet/results.json" "$W/noisy/results.json"
[ $rc -eq 0 ] || { result FAIL noisy-host "the noisy sweep exited $rc: $(tail -n 2 "$W/noisy.err")"; exit 1; }
fig=$(python3 - "$W/quiet/results.json" "$W/noisy/results.json" "$(nproc)" <<'PY'
import json, sys
q = json.load(open(sys.argv[1]))["variants"][0]["slo_capacity"]
n = json.load(open(sys.argv[2]))["variants"]
p = 0.03
lo, hi = q["interval"][0] * (1 - p), q["interval"][1] * (1 + p)
bad, parts = [], []
for v in n:
    c = v.get("slo_capacity") or {}
    flags = set(c.get("flags") or []) | set(v.get("marks") or [])
    marked = bool(flags & {"contended", "noisy"}) or not c.get("valid")
    inside = c.get("rps") is not None and lo <= c["rps"] <= hi
    if not marked and not inside:
        bad.append("%s: valid %.1f req/s outside [%.1f, %.1f], unmarked" % (v["spec"], c["rps"], lo, hi))
    parts.append("%s %.1f req/s [%.1f, %.1f] valid %s, flags %s" % (
        v["spec"], c.get("rps") or 0, (c.get("interval") or [0, 0])[0],
        (c.get("interval") or [0, 0])[1], "yes" if c.get("valid") else "no",
        ",".join(sorted(flags)) or "none"))
print("%s quiet %.1f req/s [%.1f, %.1f] (valid %s); beside %s busy loops: %s; allowed [%.1f, %.1f] "
      "unless marked" % ("bad " + "; ".join(bad) + ";" if bad else "ok", q["rps"], q["interval"][0],
                         q["interval"][1], "yes" if q.get("valid") else "no", sys.argv[3],
                         "; ".join(parts), lo, hi))
PY
)
if [[ "$fig" == ok* ]]; then
    result PASS noisy-host "${fig#ok } ($((SECONDS - t0)) s)"
else
    result FAIL noisy-host "${fig#bad } ($((SECONDS - t0)) s)"
    exit 1
fi
