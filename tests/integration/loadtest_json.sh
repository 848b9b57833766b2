#!/usr/bin/env bash
# The --json report: every documented field is present and consistent with itself (totals
# equal the sums over names and stages, status codes plus errors account for every request),
# and with the text report of an identical deterministic run (open loop: exactly rate x
# duration requests, same status counts, same verdict). Stages appear per stage.
set -u
. "$ROOT/tests/servers/lib.sh"

srv_start s
P=$SRV_PORT_s
cat >"$SRV_TMP/p.yaml" <<'YAML'
rate: 100
duration: 2s
warmup: 0s
requests:
  - { name: ok,   path: /, weight: 3 }
  - { name: e500, path: /status/500, weight: 1 }
YAML
timeout 30 "$SIZEUP" loadtest --url "http://127.0.0.1:$P" --profile "$SRV_TMP/p.yaml" --seed 3 \
    --json --out "$SRV_TMP/r.json"
rc=$?
[ $rc -eq 99 ] || fail "exit $rc, want 99 (a quarter of the requests are 500s)"
timeout 30 "$SIZEUP" loadtest --url "http://127.0.0.1:$P" --profile "$SRV_TMP/p.yaml" --seed 3 \
    >"$SRV_TMP/r.txt"
cat "$SRV_TMP/r.txt"

python3 - "$SRV_TMP/r.json" "$SRV_TMP/r.txt" <<'PY' || fail "JSON report"
import json, re, sys
r = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
need = ["requests", "duration_s", "throughput_rps", "latency_ms", "status_codes", "errors",
        "bytes_in", "bytes_out", "tool_cpu_s", "verdict", "by_name", "target_rate_rps",
        "achieved_rate_rps", "failed", "interrupted", "threads", "peak_concurrency"]
missing = [k for k in need if k not in r]
if missing: sys.exit("missing fields: %s" % missing)
for k in ["mean", "p50", "p90", "p95", "p99", "p999", "max"]:
    if k not in r["latency_ms"]: sys.exit("latency_ms lacks " + k)
lat = r["latency_ms"]
if not (lat["p50"] <= lat["p90"] <= lat["p95"] <= lat["p99"] <= lat["p999"] <= lat["max"]):
    sys.exit("percentiles out of order: %r" % lat)
if r["requests"] != 200: sys.exit("open loop 100/s for 2 s must give 200 requests, got %d" % r["requests"])
if abs(r["achieved_rate_rps"] - 100) > 1: sys.exit("achieved rate")
if sum(v["requests"] for v in r["by_name"].values()) != r["requests"]: sys.exit("by_name sum")
codes = sum(r["status_codes"].values()); errs = sum(r["errors"].values())
if codes + errs != r["requests"]: sys.exit("status codes + errors != requests")
if r["by_name"]["e500"]["failed"] != r["by_name"]["e500"]["requests"]: sys.exit("500s not failed")
if r["failed"] != r["by_name"]["e500"]["requests"]: sys.exit("failed total")
if r["status_codes"].get("500") != r["by_name"]["e500"]["requests"]: sys.exit("500 count")
if r["bytes_out"] <= 0 or r["bytes_in"] <= 0 or r["tool_cpu_s"] < 0: sys.exit("bytes/cpu")
if r["verdict"] != "OVERLOADED": sys.exit("verdict %s" % r["verdict"])
# The text run is identical in count (same schedule) and seed (same mix).
if r["verdict"] not in text: sys.exit("text lacks the verdict")
num = lambda n: "{:,}".format(n)
if num(r["requests"]) not in text: sys.exit("text lacks the request count")
if not re.search(r"500: %s\b" % num(r["status_codes"]["500"]), text):
    sys.exit("text lacks the same count of 500s (%d)" % r["status_codes"]["500"])
print("json ok: %d requests, %d failed, verdict %s" % (r["requests"], r["failed"], r["verdict"]))
PY

# Stages: per-stage results, closed loop ramp 0 -> 4 -> 4 users.
cat >"$SRV_TMP/st.yaml" <<'YAML'
warmup: 0s
stages:
  - { duration: 1s, users: 4 }
  - { duration: 1s, users: 4 }
requests:
  - { path: / }
YAML
timeout 30 "$SIZEUP" loadtest --url "http://127.0.0.1:$P" --profile "$SRV_TMP/st.yaml" \
    --json --out "$SRV_TMP/st.json" || fail "stages run exit $?"
python3 - "$SRV_TMP/st.json" <<'PY' || fail "stages"
import json, sys
r = json.load(open(sys.argv[1]))
st = r.get("by_stage")
if not isinstance(st, list) or len(st) != 2: sys.exit("by_stage: %r" % (st,))
n = [s["requests"] for s in st]
print("stage requests", n, "total", r["requests"])
if sum(n) != r["requests"]: sys.exit("stages do not sum to the total")
if not (0 < n[0] < n[1]): sys.exit("a ramp from 0 must do less than the flat stage")
PY
echo ok
