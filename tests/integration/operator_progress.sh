#!/usr/bin/env bash
# The operator's live progress against the fake API server: a real WebSocket client
# (python3-websockets) on the admin server's /progress sees the running sweep of default/web,
# about once a second, with its request count moving; the page at / answers; and with the admin
# server bound to every address, a connection that arrives on an address other than loopback's
# 127.0.0.1 (as one through the pod's IP or the Service would) is refused (the page 403, the feed
# never upgraded),
# while /healthz still answers there. With --progress-public, off loopback a bearer token is
# checked by the fake API server's TokenReview and SubjectAccessReview, asked as the operator's
# own ServiceAccount: no token or an unknown one 401, a user without `get` on /progress 403, a
# reader a ClusterRole allows gets the page and the feed; the tokens never reach the log.
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
port=$(free_port)
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

# --progress-public: off loopback, a bearer token that the API server's TokenReview
# authenticates and whose identity its SubjectAccessReview allows to `get` /progress. The
# operator runs as its ServiceAccount with the manifests' RBAC and the chart's progress-auth rule
# (kept in step with charts/sizeup by the grep below).
grep -q 'resources: \["tokenreviews", "subjectaccessreviews"\]' \
    "$ROOT/charts/sizeup/templates/rbac.yaml" ||
    fail "the chart's progress-auth rule changed: give the operator here the same grant"
python3 - "$ROOT/manifests/sizeup.yaml" >"$E2E_W/rbac.yaml" <<'PY' || fail "manifests/sizeup.yaml"
import sys, yaml
keep = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] not in
        ("Deployment", "Service")]
print(yaml.safe_dump_all(keep))
PY
k apply -f "$ROOT/manifests/namespace.yaml" -f "$E2E_W/rbac.yaml" >/dev/null ||
    fail "the operator's RBAC did not apply"
k apply -f - >/dev/null <<'YAML' || fail "the review grants did not apply"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: sizeup-progress-auth}
rules:
  - apiGroups: ["authentication.k8s.io", "authorization.k8s.io"]
    resources: ["tokenreviews", "subjectaccessreviews"]
    verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: sizeup-progress-auth}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: sizeup-progress-auth}
subjects: [{kind: ServiceAccount, name: sizeup, namespace: sizeup}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: progress-reader}
rules: [{nonResourceURLs: ["/progress"], verbs: ["get"]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: progress-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: progress-reader}
subjects: [{kind: ServiceAccount, name: reader, namespace: default}]
YAML
token_for() { # USER [KUBECONFIG]: a bearer token the fake issues for USER
    local body="{\"user\": \"$1\"${2:+, \"kubeconfig\": \"$2\", \"namespace\": \"sizeup\"}}"
    fakectl POST /fake/tokens "$body" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])'
}
token_for system:serviceaccount:sizeup:sizeup "$E2E_W/op.kubeconfig" >/dev/null ||
    fail "no token for the operator"
reader=$(token_for system:serviceaccount:default:reader) || fail "no token for the reader"
nobody=$(token_for system:serviceaccount:default:nobody) || fail "no token for nobody"
port=$(free_port)
KUBECONFIG="$E2E_W/op.kubeconfig" op_start op3 --admin-addr "0.0.0.0:$port" \
    --namespace nothing-here --progress-public
off="127.0.0.2:$port"
page() { # TOKEN: the status of the page off loopback, with that bearer token if not empty
    curl -s -o /dev/null -w '%{http_code}' ${1:+-H "Authorization: Bearer $1"} "http://$off/"
}
code=$(page "") && [ "$code" = 401 ] || fail "the page answered $code to no token, want 401"
$PY "$client" refused "ws://$off/progress" >"$E2E_W/pub-none.json"
grep -q '"status": 101' "$E2E_W/pub-none.json" && fail "the feed upgraded without a token"
code=$(page "not-a-token") && [ "$code" = 401 ] || fail "an unknown token: $code, want 401"
code=$(page "$nobody") && [ "$code" = 403 ] || fail "a user without the right: $code, want 403"
$PY "$client" refused "ws://$off/progress" "$nobody" >"$E2E_W/pub-nobody.json"
grep -q '"status": 101' "$E2E_W/pub-nobody.json" && fail "the feed upgraded for nobody"
code=$(page "$reader") && [ "$code" = 200 ] || fail "the allowed reader's page: $code, want 200"
$PY "$client" watch "ws://$off/progress" 3 "$reader" >"$E2E_W/pub-reader.json" ||
    fail "the allowed reader's feed failed"
python3 - "$E2E_W/pub-reader.json" <<'PY' || fail "the allowed reader got no message"
import json, sys
n = json.load(open(sys.argv[1]))["messages"]
assert n >= 1, f"{n} messages in 3 s"
print(f"  public: the allowed reader's feed upgraded, {n} messages in 3 s")
PY
# The reviews were the API server's, asked as the operator's own identity.
fakectl GET /fake/log >"$E2E_W/fake-log.json"
python3 - "$E2E_W/fake-log.json" <<'PY' || fail "the operator did not ask the API server"
import json, sys
e = json.load(open(sys.argv[1]))["entries"]
for res in ("tokenreviews", "subjectaccessreviews"):
    mine = [x for x in e if x.get("resource") == res]
    assert mine and all(x["user"] == "system:serviceaccount:sizeup:sizeup" and x["code"] == 201
                        for x in mine), (res, mine)
    print(f"  {res}: {len(mine)} created by the operator's ServiceAccount")
PY
# Without the grant the operator cannot ask: a new token is neither accepted nor blamed on the
# reader (503), and is asked again next time.
k delete clusterrolebinding sizeup-progress-auth >/dev/null || fail "delete the grant"
late=$(token_for system:serviceaccount:default:reader) || fail "no second reader token"
code=$(page "$late") && [ "$code" = 503 ] || fail "without the grant: $code, want 503"
for t in "$reader" "$nobody" "$late"; do
    grep -qF -- "$t" "$OP_LOG" && fail "a bearer token appears in the operator's log"
done
echo "  public off loopback: no token 401 (feed $(cat "$E2E_W/pub-none.json")), unknown 401,"
echo "  nobody 403 (feed $(cat "$E2E_W/pub-nobody.json")),"
echo "  reader 200 and the feed; without the operator's grant 503; no token in the log"
op_stop >/dev/null
echo "operator progress: ok"
