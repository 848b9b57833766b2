#!/usr/bin/env bash
# "No" is a quick answer: a capacity sweep of an app whose service time (200 ms, a sleep) is above
# the SLO's p95 (100 ms). After the probe misses the SLO, one request at a time misses it too, so
# each variant's search ends there: slo_capacity 0 with limited_by slo-p95, the flag
# "unmeetable" and valid true, two steps per variant (the probe and the one-user step), the finding
# that says no load meets the SLO with the measured p95, no recommendation and no values.yaml,
# exit 0, within a bound far below what halving the rate to its floor takes.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/profile.yaml" <<'EOF2'
users: 4
timeout: 5s
slo: { p95: 100ms, errors: 1% }
search: { warmup: 300ms, window: 1s, max_steps: 12, repeats: 3, budget: 5m }
EOF2

port=$(free_port)
start=$(date +%s)
set +e
"$SIZEUP" sweep --configs "1@0.25/128Mi 1@0.5/128Mi" --profile "$tmp/profile.yaml" --port "$port" \
    --out "$tmp/out" -- env SLOTS_PER_WORKER=50 HOLD_MS=200 \
    python3 "$ROOT/tests/servers/capacity_server.py" >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
wait $pid
rc=$?
pid=
set -e
took=$(($(date +%s) - start))
[ $rc -eq 0 ] || { echo "exit $rc, want 0"; tail -20 "$tmp/stderr"; exit 1; }
[ ! -e "$tmp/out/values.yaml" ] || { echo "values.yaml written without a recommendation"; exit 1; }
python3 - "$tmp/out/results.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))
for v in res["variants"]:
    c = v["slo_capacity"]
    assert c is not None, "%s: no slo_capacity" % v["spec"]
    assert c["rps"] == 0, "%s: rps %s, want 0" % (v["spec"], c["rps"])
    assert c["interval"] == [0, 0], "%s: interval %s" % (v["spec"], c["interval"])
    assert c["limited_by"] == "slo-p95", "%s: limited_by %s" % (v["spec"], c["limited_by"])
    # A busy host may also mark the row contended, which makes any figure invalid.
    assert "unmeetable" in c["flags"], "%s: flags %s" % (v["spec"], c["flags"])
    assert set(c["flags"]) <= {"unmeetable", "contended"}, "%s: flags %s" % (v["spec"], c["flags"])
    assert c["valid"] is (c["flags"] == ["unmeetable"]), "%s: valid %s with flags %s" % (
        v["spec"], c["valid"], c["flags"])
    kinds = [s["kind"] for s in c["steps"]]
    assert kinds == ["probe", "probe"], "%s: steps %s, want the probe and one user" % (v["spec"], kinds)
    one = c["steps"][1]
    assert one["p95_ms"] >= 190, "%s: one user's p95 %s ms, the app holds 200 ms" % (v["spec"], one["p95_ms"])
rec = res["recommendation"]
assert rec["index"] is None, "a variant was recommended: %s" % rec
assert "miss the SLO even at one request at a time" in rec["why"], rec["why"]
print("unmeetable: %d variants, one-user p95 %s ms" % (len(res["variants"]),
      [s["steps"][1]["p95_ms"] for s in (v["slo_capacity"] for v in res["variants"])]))
PY
grep -q "Even one request at a time misses the SLO" "$tmp/out/results.md" ||
    { echo "results.md lacks the unmeetable finding"; grep -i slo "$tmp/out/results.md"; exit 1; }
# Two 1.3 s steps per variant plus start-up and stops; a search halving 200 req/s to its floor
# would take 8 steps per variant and more.
[ "$took" -le 60 ] || { echo "took $took s, want at most 60"; exit 1; }
echo "sweep_unmeetable: done in $took s"
