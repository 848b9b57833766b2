#!/usr/bin/env bash
# The operator's live progress against the fake API server: a real WebSocket client
# (python3-websockets) on the admin server's /progress sees the running sweep of default/web,
# about once a second, with its request count moving; the page at / answers; and with the admin
# server bound to every address, a connection that arrives on an address other than loopback's
# 127.0.0.1 (as one through the pod's IP or the Service would) is refused (the page 403, the feed
# never upgraded),
# while /healthz still answers there.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
PY=/usr/bin/python3
$PY -c 'import websockets' 2>/dev/null ||
    { echo "python3-websockets is missing for $PY (scripts/install-deps.sh test)"; exit 1; }
client="$ROOT/tests/servers/progress_client.py"
e2e_setup
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: feed-load}
data:
  profile.yaml: |
    users: 4
    duration: 8s
    warmup: 1s
    search: { mode: fixed }
    requests:
      - { name: work, method: GET, path: "/work?ms=5" }
YAML
op_start op
curl -s -o /dev/null -w '%{http_code}' "http://$OP_ADMIN/" | grep -qx 200 ||
    fail "the progress page did not answer on loopback"
k annotate deployment web sizeup.dev/profile=feed-load "sizeup.dev/configs=1@0.5/128Mi 1@1/128Mi" \
    sizeup.dev/sweep=feed1 >/dev/null
wait_status web '^running' 30
$PY "$client" watch "ws://$OP_ADMIN/progress" 10 >"$E2E_W/watch.json" ||
    fail "the WebSocket client failed"
wait_status web '^done$' 120
python3 - "$E2E_W/watch.json" <<'PY' || fail "the feed did not show the running sweep"
import json, sys
w = json.load(open(sys.argv[1]))
n = w["messages"]
assert 6 <= n <= 14, f"{n} messages in 10 s: want about one a second"
mine = [s for msg in w["sweeps"] for s in msg if s["name"] == "default/web"]
assert mine, "no message named default/web"
reqs = [s["requests"] for s in mine if s["phase"] == "measure"]
assert len(set(reqs)) >= 3, f"the request count did not move: {reqs}"
assert any(s["rps"] > 0 for s in mine), mine[-1]
print(f"  feed: {n} messages in 10 s, default/web measured requests {reqs[0]} -> {reqs[-1]}")
PY
op_stop >/dev/null

# Bound to every address: 127.0.0.2 stands for the pod's IP (not the loopback the default
# answers on). The operator watches a namespace with nothing to sweep.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
op_start op2 --admin-addr "0.0.0.0:$port" --namespace nothing-here
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.2:$port/")
[ "$code" = 403 ] || fail "the page answered $code off loopback, want 403"
$PY "$client" refused "ws://127.0.0.2:$port/progress" >"$E2E_W/off.json"
# Refused before the upgrade: libwebsockets closes the connection (no 101, no feed).
grep -q '"status": 101' "$E2E_W/off.json" && fail "the feed upgraded off loopback"
$PY "$client" refused "ws://127.0.0.1:$port/progress" >"$E2E_W/on.json"
grep -q '"status": 101' "$E2E_W/on.json" || fail "the feed on loopback: $(cat "$E2E_W/on.json")"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.2:$port/healthz")
[ "$code" = 200 ] || fail "/healthz answered $code off loopback"
echo "  off loopback: page 403, feed refused ($(cat "$E2E_W/off.json")), /healthz 200; on loopback: the feed upgrades (101)"
op_stop >/dev/null
echo "operator progress: ok"
