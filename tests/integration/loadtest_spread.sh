#!/usr/bin/env bash
# `sizeup loadtest` with --url repeated spreads one load over several targets. Open loop: each
# of 3 servers gets rate / 3 (their own counters agree), the total keeps the schedule, and the
# JSON has by_url beside the total with each target's own figures adding up to it. Closed
# loop: 5 users split 2, 2, 1. A worker share spreads too, and served (--serve-result) every
# series point carries its histogram. A bad URL among good ones and a stream profile are
# refused.
set -u
. "$ROOT/tests/servers/lib.sh"

srv_start a
srv_start b
srv_start c
A="http://127.0.0.1:$SRV_PORT_a" B="http://127.0.0.1:$SRV_PORT_b" C="http://127.0.0.1:$SRV_PORT_c"

timeout 40 "$SIZEUP" loadtest --url "$A" --url "$B" --url "$C" --rate 300 --duration 5s \
    --warmup 0 --threads 2 --json --out "$SRV_TMP/open.json"
echo "open loop exit $?"
for s in a b c; do
    p=SRV_PORT_$s
    srv_stats "${!p}" >"$SRV_TMP/$s.stats" || fail "stats of $s"
done
python3 - "$SRV_TMP" "$A" "$B" "$C" <<'PY' || fail "open loop spread"
import json, sys
d, urls = sys.argv[1], sys.argv[2:]
r = json.load(open(d + "/open.json"))
by = r["by_url"]
if sorted(by) != sorted(urls): sys.exit("by_url keys %s, want %s" % (sorted(by), urls))
t, a = r["target_rate_rps"], r["achieved_rate_rps"]
print("total: target %.1f achieved %.2f req/s, %d requests" % (t, a, r["requests"]))
if abs(t - 300) > 0.5: sys.exit("target rate %.1f, want 300" % t)
if abs(a - t) > 0.01 * t: sys.exit("achieved rate off by more than 1%")
if sum(by[u]["requests"] for u in urls) != r["requests"]: sys.exit("by_url does not add up")
for u, s in zip(urls, "abc"):
    got = json.load(open("%s/%s.stats" % (d, s)))["requests"]
    mine = by[u]["requests"]
    print("%s: %d requests by sizeup's count, %d by the server's, %.1f req/s" %
          (u, mine, got, by[u]["throughput_rps"]))
    if abs(mine - r["requests"] / 3) > 0.02 * r["requests"] / 3:
        sys.exit("%s got %d of %d: not a third" % (u, mine, r["requests"]))
    if got < mine: sys.exit("the server counted fewer requests than were reported")
if r["failed"]: sys.exit("failures")
PY

timeout 30 "$SIZEUP" loadtest --url "$A" --url "$B" --url "$C" --users 5 --duration 2s \
    --warmup 0 --json --out "$SRV_TMP/closed.json"
echo "closed loop exit $?"
python3 - "$SRV_TMP/closed.json" <<'PY' || fail "closed loop spread"
import json, sys
r = json.load(open(sys.argv[1]))
print("closed: %d users, %d requests over %s" % (r["users"], r["requests"], list(r["by_url"])))
if r["users"] != 5: sys.exit("users %d, want 5 (2 + 2 + 1)" % r["users"])
if len(r["by_url"]) != 3 or any(v["requests"] == 0 for v in r["by_url"].values()):
    sys.exit("a target got nothing")
PY

# A single --url has no by_url (the JSON is as before).
timeout 20 "$SIZEUP" loadtest --url "$A" --users 1 --duration 1s --warmup 0 --json \
    --out "$SRV_TMP/one.json"
[ "$(jget "$SRV_TMP/one.json" "'by_url' in j")" = False ] || fail "by_url with one --url"

# A generator pod of a scale-out: its share (2 of 4 users), spread over both targets.
timeout 20 "$SIZEUP" loadtest --url "$A" --url "$B" --share 0/2 --users 4 --duration 1s \
    --warmup 0 --json --out "$SRV_TMP/share.json" 2>"$SRV_TMP/e" ||
    fail "--share with two --url: $(cat "$SRV_TMP/e")"
python3 - "$SRV_TMP/share.json" <<'PY' || fail "a share over two targets"
import json, sys
r = json.load(open(sys.argv[1]))
print("share 0/2 over 2 targets: %d users, by_url %s" % (
    r["users"], {k: v["requests"] for k, v in r["by_url"].items()}))
if r["users"] != 2: sys.exit("users %d, want 2 (share 0 of 4 over 2)" % r["users"])
if len(r["by_url"]) != 2 or any(v["requests"] == 0 for v in r["by_url"].values()):
    sys.exit("a target got nothing")
PY
# The same share served as a generator pod serves it (--serve-result): the total, by_url, and
# every series point with its interval's latency_hist (what the operator adds point by point);
# the --json file above has no point histograms.
port=$(free_port)
timeout 20 "$SIZEUP" loadtest --url "$A" --url "$B" --share 1/2 --users 4 --duration 2s \
    --warmup 0 --serve-result "127.0.0.1:$port" 2>"$SRV_TMP/serve.e" &
wpid=$!
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/result" -o "$SRV_TMP/served.json" && break
    sleep 0.1
done
wait "$wpid" || fail "the worker exited $?: $(cat "$SRV_TMP/serve.e")"
python3 - "$SRV_TMP/served.json" "$SRV_TMP/share.json" <<'PY' || fail "the served result"
import base64, json, sys
r = json.load(open(sys.argv[1]))["result"]
pts = r["series"]
if len(pts) < 2 or any(not base64.b64decode(p["latency_hist"]) for p in pts):
    sys.exit("a point without latency_hist: %s" % pts)
if sum(p["requests"] for p in pts) != r["requests"]:
    sys.exit("points add to %d, total %d" % (sum(p["requests"] for p in pts), r["requests"]))
if sum(v["requests"] for v in r["by_url"].values()) != r["requests"]:
    sys.exit("by_url does not add up to the total")
if any("latency_hist" in p for p in json.load(open(sys.argv[2]))["series"]):
    sys.exit("--json carries the point histograms")
print("served share 1/2: %d points, each with its histogram, %d requests" % (len(pts), r["requests"]))
PY
"$SIZEUP" loadtest --url "$A" --url "ftp://x" --users 2 --duration 1s 2>"$SRV_TMP/e"
rc=$?
[ $rc -eq 2 ] && grep -q "ftp://x" "$SRV_TMP/e" || fail "a bad URL among good ones: exit $rc $(cat "$SRV_TMP/e")"
printf 'streams: { url: /ws, count: 2 }\n' >"$SRV_TMP/streams.yaml"
"$SIZEUP" loadtest --url "$A" --url "$B" --profile "$SRV_TMP/streams.yaml" 2>"$SRV_TMP/e"
rc=$?
[ $rc -eq 2 ] && grep -q "give --url once" "$SRV_TMP/e" || fail "streams with two --url: exit $rc $(cat "$SRV_TMP/e")"
echo ok
