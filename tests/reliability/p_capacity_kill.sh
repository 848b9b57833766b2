#!/usr/bin/env bash
# Promise: an operator killed during a capacity search is resumed and no step is measured
# twice. A clone capacity sweep of the example app over two variants (1 s windows, 3 repeats,
# at most 5 search steps); the operator is killed (-9) in the middle of the first variant's
# search, a second operator resumes, and it is killed again in the middle of the second
# variant's search; a third finishes. Then: status done; both rows have a capacity; row 1 is
# the one the second operator measured, read back from state.json (same rate and steps), and
# the third operator measured no step of it; each row's steps in results.json are exactly the
# steps the operator that finished its search logged (`event=sweep.step`), so the steps of a
# killed operator's cut-off search are neither kept nor counted twice.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oplib.sh"
op_cluster capacity-kill "$W/fake" "$ROOT/manifests/examples/" --metrics-window 1.5
op_identity rel-operator "$W" '["system:masters"]' || { result FAIL capacity-kill "no token"; exit 1; }
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: cap-load}
data:
  profile.yaml: |
    users: 8
    timeout: 5s
    search: { window: 1s, warmup: 500ms, repeats: 3, max_steps: 5 }
    slo: { p95: 300ms, errors: 1% }
    requests:
      - { name: work, method: GET, path: "/work?ms=20" }
YAML
why=
t0=$SECONDS
op_bg op-cap-1
k annotate deployment web sizeup.dev/profile=cap-load \
    "sizeup.dev/configs=1@0.2/128Mi 1@0.8/128Mi" sizeup.dev/sweep=cap-kill >/dev/null
# Mid search of row 1: its first steps are measured (a step is ~1.5 s), none is the result yet.
for _ in $(seq 1 300); do
    grep -q 'event=kube.platform.ready' "$W/op-cap-1.log" 2>/dev/null && break
    sleep 0.1
done
sleep 3
grep -q 'event=sweep.capacity' "$W/op-cap-1.log" && why="$why; row 1's search ended before the first kill"
kill -KILL "$OP" 2>/dev/null
wait "$OP" 2>/dev/null
op_bg op-cap-2
st=$(wait_status '^running 1/2(,|$)' 150)
[[ "$st" == "running 1/2"* ]] || why="$why; after the first kill: status '$st'"
k get configmap web-sizing -o jsonpath='{.data.state\.json}' >"$W/state1.json"
sleep 3 # mid search of row 2
kill -KILL "$OP" 2>/dev/null
wait "$OP" 2>/dev/null
op_bg op-cap-3
st=$(wait_status '^(done|failed:.*)$' 150)
op_stop "$OP"
took=$((SECONDS - t0))
keep_logs capacity-kill "$W"/op-cap-*.log "$W/fake/server.log"
k get configmap web-sizing -o jsonpath='{.data.results\.json}' >"$W/results.json"
fig=$(python3 - "$W/state1.json" "$W/results.json" "$W"/op-cap-{1,2,3}.log "$st" <<'PY'
import json, re, sys
bad = []
st = sys.argv[6]
if st != "done":
    bad.append("status '%s'" % st)
try:
    before = json.load(open(sys.argv[1]))["rows"][0]["capacity"]
    rows = json.load(open(sys.argv[2]))["variants"]
except Exception as e:
    print("bad cannot read state.json / results.json: %r" % e)
    sys.exit(0)
logs = [open(f).read() for f in sys.argv[3:6]]
def steps(log, spec):  # the search steps an operator measured for a variant
    return len(re.findall(r"event=sweep\.step variant=%s " % re.escape(spec), log))
def caps(log):
    return re.findall(r"event=sweep\.capacity .*?variant=(\S+)", log)
r1, r2 = "1@0.2/128Mi", "1@0.8/128Mi"
if len(rows) != 2:
    print("bad %d rows; status '%s'" % (len(rows), st))
    sys.exit(0)
n1, n2 = (len((v.get("slo_capacity") or {}).get("steps") or []) for v in rows)
# Each row's steps are those of the one operator that finished its search, none of them again:
# row 1 operator 2's (operator 1's were cut off), row 2 operator 3's (operator 2's cut off).
if n1 != steps(logs[1], r1):
    bad.append("row 1 has %d steps, operator 2 measured %d" % (n1, steps(logs[1], r1)))
if steps(logs[2], r1):
    bad.append("operator 3 measured %d steps of row 1 again" % steps(logs[2], r1))
if n2 != steps(logs[2], r2):
    bad.append("row 2 has %d steps, operator 3 measured %d" % (n2, steps(logs[2], r2)))
if caps(logs[0]) or caps(logs[1]) != [r1] or caps(logs[2]) != [r2]:
    bad.append("capacity results logged: %s / %s / %s" % tuple(",".join(caps(l)) or "none" for l in logs))
for v in rows:
    if not (v.get("slo_capacity") or {}).get("rps"):
        bad.append("%s: no capacity" % v["spec"])
kept = abs(rows[0]["slo_capacity"]["rps"] - before["rps"]) <= 1e-5 * before["rps"] and \
    n1 == len(before["steps"])
if not kept:
    bad.append("row 1 differs from what operator 2 saved")
print("%s row 1 %.1f req/s from %d steps (operator 1 killed after %d, operator 2 measured %d, "
      "operator 3 %d), row 2 %.1f req/s from %d steps (operator 2 killed after %d, operator 3 "
      "measured %d); row 1 read back from state.json: %s; status '%s'" % (
          "bad " + "; ".join(bad) + ";" if bad else "ok", rows[0]["slo_capacity"]["rps"], n1,
          steps(logs[0], r1), steps(logs[1], r1), steps(logs[2], r1),
          rows[1]["slo_capacity"]["rps"], n2, steps(logs[1], r2), steps(logs[2], r2),
          "yes" if kept else "no", st))
PY
)
[ -n "$why" ] && fig="bad ${why#; }; ${fig#* }"
if [[ "$fig" == ok* ]]; then
    result PASS capacity-kill "two kills (-9) mid search, ${fig#ok }, in $took s"
else
    result FAIL capacity-kill "${fig#bad }, in $took s"
    exit 1
fi
