#!/usr/bin/env bash
# sizeup loadtest against the counting test server: the completed count matches what the
# server received (within the requests in flight at the end), the weighted mix follows its
# weights (within 4 sigma), headers and bodies arrive as the profile says, and chunked,
# keep-alive, close and HTTP/1.0 responses all parse.
set -u
. "$ROOT/tests/servers/lib.sh"

srv_start a
P=$SRV_PORT_a
cat >"$SRV_TMP/mix.yaml" <<'YAML'
users: 6
duration: 3s
warmup: 0s
timeout: 5s
requests:
  - { name: list,  method: GET,  path: /api/list?page=1, weight: 6 }
  - { name: me,    method: GET,  path: /api/me, weight: 3, headers: { Authorization: "Bearer test-token", X-Trace: abc } }
  - { name: vote,  method: POST, path: /api/votes, weight: 1, body: '{"id":1}', headers: { Content-Type: application/json } }
YAML
timeout 30 "$SIZEUP" loadtest --url "http://127.0.0.1:$P" --profile "$SRV_TMP/mix.yaml" \
    --threads 2 --seed 7 --json --out "$SRV_TMP/r.json"
rc=$?
[ $rc -eq 0 ] || fail "loadtest exit $rc (want 0)"
srv_stats "$P" >"$SRV_TMP/s.json"

tool=$(jget "$SRV_TMP/r.json" 'j["requests"]')
srv=$(jget "$SRV_TMP/s.json" 'j["requests"]')
echo "tool completed $tool, server received $srv"
[ "$tool" -gt 1000 ] || fail "too few requests ($tool)"
diff=$((srv - tool))
[ $diff -ge 0 ] && [ $diff -le 6 ] || fail "server saw $srv, tool completed $tool: off by $diff (> 6 users in flight)"
[ "$(jget "$SRV_TMP/r.json" 'j["failed"]')" = 0 ] || fail "failures against a healthy server"

# Per name: the tool's count matches the server's per path; the mix follows 6:3:1.
python3 - "$SRV_TMP/r.json" "$SRV_TMP/s.json" <<'PY' || fail "mix or per-path counts"
import json, math, sys
r = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
paths = {"list": "GET /api/list", "me": "GET /api/me", "vote": "POST /api/votes"}
weights = {"list": 6, "me": 3, "vote": 1}
n = r["requests"]
for name, path in paths.items():
    got = r["by_name"][name]["requests"]
    seen = s["by_request"].get(path, 0)
    if not (0 <= seen - got <= 6):
        sys.exit("%s: tool %d, server %d" % (name, got, seen))
    p = weights[name] / 10
    sigma = math.sqrt(n * p * (1 - p))
    dev = (got - n * p) / sigma
    print("%-5s %6d expected %8.1f  %+.2f sigma" % (name, got, n * p, dev))
    if abs(dev) > 4:
        sys.exit("%s deviates %.1f sigma from its weight" % (name, dev))
# Headers and bodies exactly as the profile says, on exactly the requests that carry them.
me = s["by_request"]["GET /api/me"]
if s["headers"].get("authorization: Bearer test-token") != me: sys.exit("Authorization count")
if s["headers"].get("x-trace: abc") != me: sys.exit("X-Trace count")
votes = s["by_request"]["POST /api/votes"]
if s["bodies"].get('{"id":1}') != votes: sys.exit("body count %r vs %d" % (s["bodies"], votes))
if s["headers"].get("content-type: application/json") != votes: sys.exit("Content-Type count")
if s["bad_requests"]: sys.exit("server saw malformed requests")
PY

# Response framings: chunked, keep-alive, Connection: close and HTTP/1.0 all parse.
cat >"$SRV_TMP/framing.yaml" <<'YAML'
users: 4
duration: 2s
warmup: 0s
requests:
  - { name: chunked, path: /chunked }
  - { name: keepalive, path: / }
  - { name: close, path: /close }
  - { name: http10, path: /http10 }
  - { name: head, method: HEAD, path: / }
  - { name: big, path: /big/200000 }
YAML
timeout 30 "$SIZEUP" loadtest --url "http://127.0.0.1:$P" --profile "$SRV_TMP/framing.yaml" \
    --json --out "$SRV_TMP/f.json" || fail "framing run exit $?"
python3 - "$SRV_TMP/f.json" <<'PY' || fail "framings"
import json, sys
r = json.load(open(sys.argv[1]))
for name, st in r["by_name"].items():
    print("%-10s requests %d failed %d" % (name, st["requests"], st["failed"]))
    if st["requests"] < 10 or st["failed"] != 0 or st["status_codes"].get("200") != st["requests"]:
        sys.exit(name + " did not parse cleanly")
PY
echo "ok"
