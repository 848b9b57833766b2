#!/usr/bin/env bash
# Coordinated omission: against a server that stalls for 1 s every 5 s, an open-loop run keeps
# its schedule (achieved rate within 1% of the target) and its latency, measured from when each
# request was due, shows the stalls (p99 >= 0.8 s). The same server in closed loop hides them:
# its p99 is far lower, because a stalled user simply stops sending.
set -u
. "$ROOT/tests/servers/lib.sh"

srv_start s --stall-every 5 --stall-for 1
P=$SRV_PORT_s

timeout 40 "$SIZEUP" loadtest --url "http://127.0.0.1:$P" --rate 200 --duration 10s --warmup 0 \
    --timeout 5s --threads 2 --json --out "$SRV_TMP/open.json"
rc=$?
echo "open loop exit $rc"
python3 - "$SRV_TMP/open.json" <<'PY' || fail "open loop"
import json, sys
r = json.load(open(sys.argv[1]))
t, a, p99 = r["target_rate_rps"], r["achieved_rate_rps"], r["latency_ms"]["p99"]
print("open loop: target %.1f achieved %.2f req/s, p99 %.1f ms, peak concurrency %d, failed %d"
      % (t, a, p99, r["peak_concurrency"], r["failed"]))
if abs(a - t) > 0.01 * t: sys.exit("achieved rate off by more than 1%")
if p99 < 800: sys.exit("p99 %.1f ms hides the 1 s stalls" % p99)
if r["failed"]: sys.exit("failures")
if r["peak_concurrency"] < 50: sys.exit("a 1 s stall at 200/s needs ~200 connections")
PY

timeout 40 "$SIZEUP" loadtest --url "http://127.0.0.1:$P" --users 10 --duration 10s --warmup 0 \
    --timeout 5s --threads 2 --json --out "$SRV_TMP/closed.json"
echo "closed loop exit $?"
python3 - "$SRV_TMP/open.json" "$SRV_TMP/closed.json" <<'PY' || fail "closed loop comparison"
import json, sys
o = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
po, pc = o["latency_ms"]["p99"], c["latency_ms"]["p99"]
print("closed loop: %d requests, p99 %.2f ms, max %.1f ms (open loop p99 %.1f ms)"
      % (c["requests"], pc, c["latency_ms"]["max"], po))
if c["latency_ms"]["max"] < 500: sys.exit("closed loop never saw a stall")
if not pc * 4 < po: sys.exit("closed-loop p99 is not much lower than open-loop p99")
PY
echo ok
