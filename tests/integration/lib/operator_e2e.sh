# Helpers for the operator's end-to-end tests (tests/integration/e2e_*.sh, operator_*.sh).
# Source it from a test; it needs ROOT and SIZEUP (set by tests/run-tests.sh). It starts the fake
# API server (tests/fakeapi), applies manifests/examples, runs `sizeup operator` against it and
# cleans everything up on exit. Every process it starts is stopped by its own PID. Set E2E_KEEP=1
# to keep the work directory (logs, kubeconfig) for a look afterwards.

# free_port and jget (its EXIT trap gives way to e2e_cleanup's once e2e_setup runs).
. "$ROOT/tests/lib/common.sh"

E2E_W=
OP_PID=
OP_LOG=
OP_ADMIN=

# The fake and python3-yaml are part of the tree and of `scripts/install-deps.sh test`: a
# missing one is a broken test machine, so a failure, not a skip.
e2e_require() {
    # shellcheck source=/dev/null
    . "$ROOT/tests/fakeapi/lib.sh" || { echo "FAIL: tests/fakeapi/lib.sh is missing"; exit 1; }
    fake_require
    if ! python3 -c 'import yaml' 2>/dev/null; then
        echo "FAIL: the python3 yaml module is missing (scripts/install-deps.sh test)"
        exit 1
    fi
}

e2e_cleanup() {
    local rc=$?
    if [ -n "$OP_PID" ] && kill -0 "$OP_PID" 2>/dev/null; then
        kill -TERM "$OP_PID" 2>/dev/null
        for _ in $(seq 1 120); do kill -0 "$OP_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$OP_PID" 2>/dev/null || true
    fi
    fake_stop
    if [ $rc -ne 0 ] && [ -n "$E2E_W" ]; then
        echo "---- operator log (tail)"; tail -n 40 "$E2E_W"/op*.log 2>/dev/null
        echo "---- fake API server log (tail)"; tail -n 20 "$E2E_W/fake/server.log" 2>/dev/null
    fi
    if [ -n "${E2E_KEEP:-}" ] && [ -n "$E2E_W" ]; then
        echo "kept: $E2E_W (E2E_KEEP is set)"
    elif [ -n "$E2E_W" ]; then
        rm -rf "$E2E_W"
    fi
    exit $rc
}

# Starts the fake (with the flags given, if any), applies the example app and waits for it to
# roll out.
e2e_setup() {
    e2e_require
    E2E_W=$(mktemp -d /tmp/sizeup-e2e.XXXXXX)
    trap e2e_cleanup EXIT
    fake_start "$E2E_W/fake" "$@" || exit 1
    k apply -f "$ROOT/manifests/examples/" >/dev/null || fail "kubectl apply failed"
    k rollout status deployment/web --timeout=60s >/dev/null || fail "example app did not roll out"
}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Starts the operator in the background: op_start [LOGNAME] [extra flags]. Sets OP_PID, OP_LOG
# and OP_ADMIN (host:port of its admin server).
op_start() {
    local name=${1:-op}
    shift || true
    OP_LOG="$E2E_W/$name.log"
    "$SIZEUP" operator --kubeconfig "$KUBECONFIG" --admin-addr 127.0.0.1:0 "$@" >"$OP_LOG" 2>&1 &
    OP_PID=$!
    local port=
    for _ in $(seq 1 100); do
        port=$(sed -n 's/.*event=admin.listen .*port=\([0-9]*\).*/\1/p' "$OP_LOG" | head -n1)
        [ -n "$port" ] && break
        kill -0 "$OP_PID" 2>/dev/null || fail "operator exited at start: $(tail -n 5 "$OP_LOG")"
        sleep 0.1
    done
    [ -n "$port" ] || fail "operator admin server did not start"
    OP_ADMIN="127.0.0.1:$port"
    for _ in $(seq 1 100); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$OP_ADMIN/readyz")" = 200 ] && return 0
        sleep 0.1
    done
    fail "operator not ready after 10 s"
}

# Sends SIGTERM and checks the operator exits 0 within the 10 s budget (plus slack).
op_stop() {
    local start=$SECONDS rc
    kill -TERM "$OP_PID"
    for _ in $(seq 1 130); do kill -0 "$OP_PID" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$OP_PID" 2>/dev/null && fail "operator still running 13 s after SIGTERM"
    wait "$OP_PID"
    rc=$?
    OP_PID=
    [ $rc -eq 0 ] || fail "operator exited $rc after SIGTERM"
    echo "operator stopped in $((SECONDS - start)) s, exit 0"
}

# The value of one annotation of deployment $1.
ann() {
    k get deployment "$1" -o json | python3 -c '
import json, sys
print(json.load(sys.stdin)["metadata"].get("annotations", {}).get(sys.argv[1], ""))' "$2"
}

# wait_status DEPLOYMENT REGEX SECONDS: waits until sizeup.dev/status matches REGEX.
wait_status() {
    local d=$1 re=$2 secs=$3 s=
    local until=$((SECONDS + secs))
    while [ $SECONDS -lt "$until" ]; do
        s=$(ann "$d" sizeup.dev/status)
        if [[ "$s" =~ $re ]]; then
            echo "status of $d: $s"
            return 0
        fi
        if [[ "$s" == failed:* ]] && [[ ! "failed:" =~ $re ]]; then
            fail "sweep failed: $s"
        fi
        kill -0 "$OP_PID" 2>/dev/null || fail "operator died (status '$s')"
        sleep 0.5
    done
    fail "status of $d is '$s', not /$re/ after $secs s"
}

# The Deployment as JSON minus the fields a sweep may legitimately change, for byte-for-byte
# comparison: metadata.resourceVersion (bumped by every write, our status annotation included),
# metadata.managedFields (server bookkeeping), the sizeup.dev/ annotations (the request the test
# adds and the status the operator writes) and .status (the controller's).
deploy_fingerprint() {
    k get deployment "$1" -o json | python3 -c '
import json, sys
o = json.load(sys.stdin)
m = o["metadata"]
m.pop("resourceVersion", None)
m.pop("managedFields", None)
m.pop("generation", None)  # counts the operator annotation writes, as on a real API server
a = {k: v for k, v in m.get("annotations", {}).items() if not k.startswith("sizeup.dev/")}
m["annotations"] = a
o.pop("status", None)
if len(sys.argv) > 1 and sys.argv[1] == "template":
    o = {"template": o["spec"]["template"], "spec": {k: v for k, v in o["spec"].items()}}
print(json.dumps(o, sort_keys=True, indent=1))' "${2:-}"
}

# Checks the ConfigMap DEPLOYMENT-sizing: every key, values.yaml parses with the workers path,
# the label, and the variants' throughput ordered as their CPU limits. Prints the table.
check_sizing() {
    k get configmap "$1-sizing" -o json >"$E2E_W/cm.json" || fail "no ConfigMap $1-sizing"
    python3 - "$E2E_W/cm.json" <<'PY' || fail "ConfigMap $1-sizing check failed"
import json, sys, yaml
cm = json.load(open(sys.argv[1]))
data = cm.get("data", {})
want = ["results.md", "results.json", "values.yaml", "auto-sizing.yaml", "report.html", "state.json"]
missing = [k for k in want if not data.get(k)]
assert not missing, "missing keys: %s" % missing
assert cm["metadata"]["labels"].get("app.kubernetes.io/managed-by") == "sizeup", "label"
vals = yaml.safe_load(data["values.yaml"])
assert isinstance(vals, dict), "values.yaml is not a mapping"
assert "workers" in vals and "count" in vals["workers"], "values.yaml lacks workers.count: %r" % vals
assert "resources" in vals and "limits" in vals["resources"], "values.yaml lacks resources.limits"
yaml.safe_load(data["auto-sizing.yaml"])
assert data["report.html"].lstrip().lower().startswith("<!doctype html"), "report.html"
res = json.loads(data["results.json"])
rows = [(v["cpu_millicores"], v.get("throughput_rps", 0), v["spec"], v.get("verdict", v["state"]))
        for v in res["variants"]]
for r in rows:
    print("  %-16s cpu=%5dm  %8.1f req/s  %s" % (r[2], r[0], r[1], r[3]))
assert len(rows) >= 2, "fewer than 2 variants"
assert all(r[1] > 0 for r in rows), "a variant measured no throughput"
by_cpu = sorted(rows)
for a, b in zip(by_cpu, by_cpu[1:]):
    assert b[1] > a[1], "throughput does not order as CPU: %s %.1f vs %s %.1f" % (a[2], a[1], b[2], b[1])
state = json.loads(data["state.json"])
assert state["phase"] == "done" and state["done"] == state["total"] == len(rows), state
print("  ConfigMap keys ok, values.yaml parses, throughput orders as CPU")
PY
}

# Checks Events with the given reasons exist for deployment $1.
check_events() {
    local d=$1
    shift
    k get events.events.k8s.io -o json >"$E2E_W/events.json"
    python3 - "$E2E_W/events.json" "$d" "$@" <<'PY' || fail "Events missing"
import json, sys
items = json.load(open(sys.argv[1]))["items"]
d = sys.argv[2]
seen = {}
for e in items:
    if e.get("regarding", {}).get("name") == d:
        seen[e["reason"]] = seen.get(e["reason"], 0) + 1
for r in sys.argv[3:]:
    assert r in seen, "no %s Event (have %s)" % (r, seen)
print("  events: %s" % ", ".join("%s x%d" % kv for kv in sorted(seen.items())))
PY
}

metric() {
    curl -s "http://$OP_ADMIN/metrics" | awk -v s="$1" '$1 == s {print $2}'
}

# Applies ConfigMap cap-load: a capacity search with short windows (the operator's capacity
# tests; the fake is started with a short --metrics-window to match).
cap_profile_apply() {
    k apply -f - >/dev/null <<'YAML' || fail "cap-load profile not applied"
apiVersion: v1
kind: ConfigMap
metadata:
  name: cap-load
data:
  profile.yaml: |
    users: 8
    timeout: 5s
    search: { window: 1s, warmup: 500ms, repeats: 3, max_steps: 5 }
    slo: { p95: 300ms, errors: 1% }
    requests:
      - { name: work, method: GET, path: "/work?ms=20" }
YAML
}

# check_capacity DEPLOYMENT N WINDOW: results.json in the ConfigMap has slo_capacity for all N
# rows (rps, repeats, steps); a step reports CPU only when its measured window (usage_window_s:
# the 1 s window and the drain of what was in flight) held a whole metrics window of WINDOW
# seconds; and CPU at capacity is known wherever a repeat ran (held over a metrics window).
check_capacity() {
    k get configmap "$1-sizing" -o jsonpath='{.data.results\.json}' >"$E2E_W/results.json" ||
        fail "no results.json in $1-sizing"
    python3 - "$E2E_W/results.json" "$2" "$3" <<'PY' || fail "slo_capacity check failed"
import json, sys
r = json.load(open(sys.argv[1]))
metrics_window = float(sys.argv[3])
rows = r["variants"]
assert len(rows) == int(sys.argv[2]), "rows: %d" % len(rows)
for v in rows:
    c = v.get("slo_capacity")
    assert isinstance(c, dict), "%s: slo_capacity %r" % (v["spec"], c)
    assert c["rps"] > 0 and c["steps"], "%s: rps %r, %d steps" % (v["spec"], c["rps"], len(c["steps"]))
    assert c["limited_by"] != "none", v["spec"]
    for s in c["steps"]:
        w = s["usage_window_s"]
        assert w is not None and w > 0, "%s: a step's usage window unknown: %r" % (v["spec"], s)
        if s["cpu_cores"] is not None:
            assert w >= metrics_window - 0.05, "%s: a %.2f s step reported CPU %r (metrics window %g s)" % (
                v["spec"], w, s["cpu_cores"], metrics_window)
    reps = [s for s in c["steps"] if s["kind"] == "repeat"]
    if reps:
        assert c["cpu_cores"] is not None, "%s: repeats ran, CPU at capacity unknown" % v["spec"]
    iv = c["interval"] or [float("nan")] * 2  # null when the repeats disagreed
    print("  %s: capacity %.1f req/s [%.1f, %.1f], %d repeats, limited by %s, %d steps, "
          "CPU at capacity %s" % (v["spec"], c["rps"], iv[0], iv[1],
                                  c["repeats"], c["limited_by"], len(c["steps"]),
                                  "unknown" if c["cpu_cores"] is None else "%.2f" % c["cpu_cores"]))
PY
}
