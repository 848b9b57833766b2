#!/usr/bin/env bash
# End to end, a sweep that no variant survives: the example app against a profile whose P95
# threshold no variant can meet (each request burns 20 ms of CPU; OVERLOADED above 5 ms).
#  1. The sweep ends `done`, the ConfigMap holds every row in results.md, results.json,
#     report.html and state.json, no values.yaml key, and a Warning Event says, in the same
#     sentence as results.md, that no variant holds the load and which came closest.
#  2. The operator killed (kill -9) after the first variant: the ConfigMap already holds that
#     row; a new operator resumes and ends `done` with every row.
#  3. The final ConfigMap write failing with 503s is retried (status `pending: retrying ...`),
#     not failed, and ends `done` once the API answers again.
#  4. "No" is a quick answer: a capacity sweep of a 200 ms service time (a sleep) against a
#     100 ms p95 objective ends `done` within 2 minutes, each variant's capacity 0 and marked
#     unmeetable after the probe and one request at a time.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

k apply -f - >/dev/null <<'EOF' || fail "profile ConfigMap"
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-tight
data:
  profile.yaml: |
    users: 4
    duration: 2s
    warmup: 500ms
    timeout: 5s
    search: { mode: fixed }
    thresholds:
      healthy:    { p95: 2ms, errors: 1% }
      overloaded: { p95: 5ms, errors: 1% }
    requests:
      - { name: work, method: GET, path: "/work?ms=20", weight: 1 }
EOF

CONFIGS="1@0.2/128Mi 1@0.8/128Mi"

# check_overloaded ROWS PHASE: the ConfigMap web-sizing holds ROWS rows, all OVERLOADED, in
# every output, state.json at PHASE, and no values.yaml.
check_overloaded() {
    k get configmap web-sizing -o json >"$E2E_W/cm.json" || fail "no ConfigMap web-sizing"
    python3 - "$E2E_W/cm.json" "$1" "$2" <<'PY' || fail "ConfigMap web-sizing check failed"
import json, sys
cm, rows, phase = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
data = cm.get("data", {})
want = ["results.md", "results.json", "auto-sizing.yaml", "report.html", "state.json"]
missing = [k for k in want if not data.get(k)]
assert not missing, "missing keys: %s (have %s)" % (missing, sorted(data))
assert "values.yaml" not in data, "values.yaml written without a recommendation"
res = json.loads(data["results.json"])
vs = res["variants"]
assert len(vs) == rows, "results.json has %d rows, want %d" % (len(vs), rows)
assert res["recommendation"]["index"] is None, res["recommendation"]
for v in vs:
    assert v["state"] == "measured" and v["verdict"] == "OVERLOADED", (v["spec"], v["verdict"])
    for key in ("results.md", "report.html"):
        assert v["label"] in data[key], "%s lacks row %s" % (key, v["label"])
    print("  %-14s %6.1f req/s  p95 %7.1f ms  %s" % (v["spec"], v["throughput_rps"],
                                                     v["latency_ms"]["p95"], v["verdict"]))
state = json.loads(data["state.json"])
assert state["phase"] == phase and state["done"] == rows == len(state["rows"]), state
md = data["results.md"]
# The Results section's sentence (the answer above it says the same and that nothing applies).
start = md.index("No variant holds the load", md.index("## Results"))
sentence = md[start:md.index(" No `values.yaml` is written.", start)]
assert "the closest was " in sentence, sentence
open(sys.argv[1] + ".sentence", "w").write(sentence)
print("  %d rows in results.md, results.json, report.html, state.json (%s); no values.yaml"
      % (rows, phase))
PY
}

# The Warning Event NoRecommendation carries exactly results.md's sentence.
check_warning() {
    k get events.events.k8s.io -o json >"$E2E_W/events.json"
    python3 - "$E2E_W/events.json" "$E2E_W/cm.json.sentence" "$1" <<'PY' || fail "no Warning Event"
import json, sys
items = json.load(open(sys.argv[1]))["items"]
sentence = open(sys.argv[2]).read()
notes = [e.get("note", "") for e in items if e.get("reason") == "NoRecommendation"
         and e.get("type") == "Warning" and e.get("regarding", {}).get("name") == "web"]
assert len(notes) >= int(sys.argv[3]), "NoRecommendation Events: %d" % len(notes)
assert notes[-1] == sentence, "Event %r != results.md %r" % (notes[-1], sentence)
print("  Warning NoRecommendation: %s" % sentence)
PY
}

# ---- 1. every variant OVERLOADED: done, every row kept
start=$SECONDS
op_start op1
k annotate deployment web sizeup.dev/profile=web-tight "sizeup.dev/configs=$CONFIGS" \
    sizeup.dev/sweep=over-1 >/dev/null
wait_status web '^done$' 90
check_overloaded 2 done
check_warning 1
check_events web SweepStarted VariantMeasured SweepCompleted NoRecommendation
echo "  all-overloaded sweep done in $((SECONDS - start)) s"

# ---- 2. killed after the first variant: its row is already in the ConfigMap; a new operator
# resumes and ends done
k annotate --overwrite deployment web sizeup.dev/sweep=over-2 >/dev/null
wait_status web '^running 1/2(,|$)' 60
kill -KILL "$OP_PID"
wait "$OP_PID" 2>/dev/null
OP_PID=
check_overloaded 1 running
op_start op2
wait_status web '^done$' 90
grep -q 'event=sweep.resume' "$OP_LOG" || fail "done without a resume"
check_overloaded 2 done
check_warning 2

# ---- 3. the final write refused with 503s: retried, then done
fakectl POST /fake/faults \
    '{"type":"error","code":503,"match":{"verb":["create","update"],"resource":"configmaps"}}' \
    >/dev/null || fail "fault injection"
k annotate --overwrite deployment web "sizeup.dev/configs=1@0.5/128Mi" sizeup.dev/sweep=over-3 \
    >/dev/null
wait_status web '^pending: retrying after API errors' 90
fakectl DELETE /fake/faults >/dev/null || fail "clearing faults"
wait_status web '^done$' 90
check_overloaded 1 done

# ---- 4. a capacity sweep no load can pass: a quick "no"
k apply -f - >/dev/null <<'EOF' || fail "slow profile ConfigMap"
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-slow
data:
  profile.yaml: |
    users: 4
    timeout: 5s
    slo: { p95: 100ms, errors: 1% }
    search: { warmup: 300ms, window: 1s, max_steps: 12, budget: 10m }
    requests:
      - { name: slow, method: GET, path: "/sleep?ms=200", weight: 1 }
EOF
start=$SECONDS
k annotate --overwrite deployment web sizeup.dev/profile=web-slow "sizeup.dev/configs=$CONFIGS" \
    sizeup.dev/sweep=over-4 >/dev/null
wait_status web '^done$' 120
k get configmap web-sizing -o json >"$E2E_W/cm.json" || fail "no ConfigMap web-sizing"
python3 - "$E2E_W/cm.json" <<'PY' || fail "unmeetable capacities"
import json, sys
res = json.loads(json.load(open(sys.argv[1]))["data"]["results.json"])
assert res["recommendation"]["index"] is None, res["recommendation"]
for v in res["variants"]:
    c = v["slo_capacity"]
    assert c and c["rps"] == 0 and "unmeetable" in c["flags"], (v["spec"], c)
    assert c["limited_by"] == "slo-p95", (v["spec"], c["limited_by"])
    print("  %s: capacity 0, %s, one user p95 %.0f ms" % (v["spec"], c["flags"],
                                                        c["steps"][-1]["p95_ms"]))
PY
echo "  unmeetable capacity sweep done in $((SECONDS - start)) s"
op_stop
echo "e2e overloaded: ok"
