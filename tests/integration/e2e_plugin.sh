#!/usr/bin/env bash
# End to end, the kubectl plugin: `make install` puts sizeup and kubectl-sizeup into a PREFIX,
# and real kubectl runs `kubectl sizeup ...` from there against the fake API server and a
# running operator: sweep --wait on a real short sweep (exit 0, each variant's verdict as it
# lands), status and status -A, results in every format, --open, a failing request followed to
# exit 1, cancel, usage errors; and the kubeconfig precedence kubectl has (--kubeconfig, then
# every file of $KUBECONFIG merged, --context, -n before or after the command).
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

PREFIX_DIR="$E2E_W/prefix"
make -s -C "$ROOT" install BUILD="$BUILD" SAN=1 CFLAGS="-O1 -g" PREFIX="$PREFIX_DIR" \
    >"$E2E_W/install.log" 2>&1 || { cat "$E2E_W/install.log"; fail "make install failed"; }
[ -x "$PREFIX_DIR/bin/sizeup" ] && [ -x "$PREFIX_DIR/bin/kubectl-sizeup" ] ||
    fail "make install did not put sizeup and kubectl-sizeup into PREFIX/bin"
export PATH="$PREFIX_DIR/bin:$PATH"
kubectl plugin list 2>/dev/null | grep -q "$PREFIX_DIR/bin/kubectl-sizeup" ||
    fail "kubectl does not list kubectl-sizeup as a plugin"
echo "  make install: sizeup and kubectl-sizeup in PREFIX/bin; kubectl lists the plugin"
ks() { kubectl sizeup "$@"; }

op_start op
cat >"$E2E_W/profile.yaml" <<'EOF'
users: 4
duration: 3s
warmup: 1s
search: { mode: fixed }
thresholds:
  healthy:    { p95: 500ms, errors: 1% }
  overloaded: { p95: 2s, errors: 5% }
requests:
  - { name: work, method: GET, path: "/work?ms=10" }
EOF

# sweep --wait: the request, each verdict as it lands, the final status, exit 0.
ks sweep deploy/web --configs "1@0.2/128Mi 1@0.8/128Mi" --profile "$E2E_W/profile.yaml" \
    --wait >"$E2E_W/wait.out" 2>&1
rc=$?
cat "$E2E_W/wait.out" | sed 's/^/    /'
[ $rc = 0 ] || fail "sweep --wait exited $rc"
grep -q '^deployment/web: sweep kubectl-.* requested, 2 variants, profile ConfigMap web-sizeup-profile' \
    "$E2E_W/wait.out" || fail "no request line"
grep -Eq '^variant 1/2 1@0.2/128Mi: (HEALTHY|STRESSED|OVERLOADED), [0-9.]+ req/s' "$E2E_W/wait.out" ||
    fail "no verdict line for variant 1"
grep -Eq '^variant 2/2 1@0.8/128Mi: (HEALTHY|STRESSED|OVERLOADED)' "$E2E_W/wait.out" ||
    fail "no verdict line for variant 2"
[ "$(tail -n 2 "$E2E_W/wait.out" | head -n 1)" = "status: done" ] || fail "the last status is not done"
[ "$(k get configmap web-sizeup-profile -o jsonpath='{.data.profile\.yaml}')" = \
    "$(cat "$E2E_W/profile.yaml")" ] || fail "profile ConfigMap differs from the file"
[ "$(ann web sizeup.dev/profile)" = web-sizeup-profile ] || fail "profile annotation not set"
echo "  sweep --wait: request, 2 verdict lines, status done, exit 0"

# status: one line per request; -n before the command, -A after it.
ks status >"$E2E_W/status.out" || fail "status failed"
grep -Eq '^web +done +kubectl-' "$E2E_W/status.out" || { cat "$E2E_W/status.out"; fail "status line"; }
ks -n default status -A >"$E2E_W/statusA.out" || fail "status -A failed"
grep -Eq '^default +web +done' "$E2E_W/statusA.out" || { cat "$E2E_W/statusA.out"; fail "status -A line"; }
echo "  status, -n default status -A: one line each"

# results in every format the sweep wrote, from the ConfigMap byte for byte.
for o in md json values patch; do
    key=$(case $o in md) echo results.md;; json) echo results.json;; values) echo values.yaml;;
          patch) echo deployment-patch.yaml;; esac)
    ks results deploy/web -o "$o" >"$E2E_W/r.$o" || fail "results -o $o failed"
    k get configmap web-sizing -o json | python3 -c '
import json, sys; sys.stdout.write(json.load(sys.stdin)["data"][sys.argv[1]])' "$key" >"$E2E_W/cm.$o"
    cmp -s "$E2E_W/r.$o" "$E2E_W/cm.$o" || fail "results -o $o differs from key $key"
done
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$E2E_W/r.json" || fail "-o json is not JSON"
out=$(ks results -o md deploy/web --open) || fail "results --open failed"
html=$(echo "$out" | sed -n 's/^report.html of deployment\/web written to \(.*\)$/\1/p')
[ -n "$html" ] && head -c 200 "$html" | grep -qi '<!doctype html' || fail "--open: '$out'"
rm -f "$html"
ks results deploy/web -o hpa >/dev/null 2>"$E2E_W/hpa.err"
[ $? = 1 ] && grep -q 'has no hpa.yaml' "$E2E_W/hpa.err" || fail "-o hpa without hpa.yaml: not a clear error"
echo "  results -o md/json/values/patch equal the ConfigMap keys; --open wrote report.html"

# Usage errors are exit 2, naming what is wrong.
ks results deploy/web -o xml >/dev/null 2>"$E2E_W/u.err"; [ $? = 2 ] || fail "-o xml not exit 2"
ks sweep pod/web >/dev/null 2>&1; [ $? = 2 ] || fail "pod/web not exit 2"
ks sweep deploy/web --configs "2@x/1Gi" >/dev/null 2>"$E2E_W/u.err"; [ $? = 2 ] || fail "bad configs not exit 2"
grep -q "configs" "$E2E_W/u.err" || fail "bad configs: no reason"
ks frobnicate >/dev/null 2>&1; [ $? = 2 ] || fail "unknown command not exit 2"
echo "  usage errors: exit 2"

# A request the operator refuses: --wait says why and exits 1.
k annotate deployment web sizeup.dev/container=nope >/dev/null
ks sweep deploy/web --wait >"$E2E_W/fail.out" 2>&1
rc=$?
[ $rc = 1 ] || { cat "$E2E_W/fail.out"; fail "a failed sweep: --wait exited $rc, not 1"; }
grep -q 'status: failed: container: "nope" is not in the pod template' "$E2E_W/fail.out" ||
    { cat "$E2E_W/fail.out"; fail "the failure reason is not shown"; }
k annotate deployment web sizeup.dev/container- >/dev/null
echo "  a refused request: --wait shows the reason, exit 1"

# cancel: a longer sweep, cancelled while it runs; a follower sees it end, exit 1.
cat >"$E2E_W/long.yaml" <<'EOF'
users: 2
duration: 30s
warmup: 1s
search: { mode: fixed }
requests:
  - { method: GET, path: "/work?ms=5" }
EOF
ks sweep deploy/web --configs "1@0.5/128Mi 1@1/128Mi" --profile "$E2E_W/long.yaml" --wait \
    >"$E2E_W/cancel.out" 2>&1 &
follower=$!
# The status still reads the refused request's "failed: ..." until the operator starts this one.
for _ in $(seq 1 60); do [[ "$(ann web sizeup.dev/status)" == running* ]] && break; sleep 0.5; done
wait_status web '^running [01]/2(,|$)' 5
ks cancel deploy/web >"$E2E_W/cancel1.out" || fail "cancel failed"
grep -q 'cancelled' "$E2E_W/cancel1.out" || fail "cancel said nothing"
wait_status web '^failed: cancelled' 30
for _ in $(seq 1 20); do kill -0 $follower 2>/dev/null || break; sleep 0.5; done
wait $follower
rc=$?
[ $rc = 1 ] || { cat "$E2E_W/cancel.out"; fail "the follower of a cancelled sweep exited $rc"; }
ks cancel deploy/web >/dev/null 2>&1 && fail "a second cancel succeeded"
echo "  cancel: the sweep stops (failed: cancelled), its follower exits 1"

# Kubeconfig precedence, as kubectl's. A Deployment in namespace team tells the two apart.
k create namespace team >/dev/null
k create deployment idle -n team --image=example/web:1 --replicas=0 --dry-run=client -o json |
    k apply -f - >/dev/null || fail "cannot create deployment idle"
k annotate deployment idle -n team sizeup.dev/status=done >/dev/null
fake_kc=$KUBECONFIG
# The first file sets current-context and the context (namespace team); the second the
# cluster and user: only merged do they make a configuration.
cat >"$E2E_W/first.yaml" <<'EOF'
apiVersion: v1
kind: Config
current-context: team
contexts:
- name: team
  context: {cluster: fake, user: admin, namespace: team}
EOF
export KUBECONFIG="/nonexistent/kc:$E2E_W/first.yaml:$fake_kc"
[ "$(kubectl config view --minify -o jsonpath='{..namespace}')" = team ] || fail "kubectl merges differently"
ks status | grep -Eq '^idle +done' || fail "merged \$KUBECONFIG: namespace team not used"
ks status --context fake | grep -Eq '^web ' || fail "--context fake: not namespace default"
ks status -n default | grep -Eq '^web ' || fail "-n default did not override the context's"
ks --namespace=default status | grep -Eq '^web ' || fail "--namespace= before the command"
ks status --kubeconfig "$fake_kc" | grep -Eq '^web ' || fail "--kubeconfig did not win over \$KUBECONFIG"
KUBECONFIG="$E2E_W/first.yaml" ks status >/dev/null 2>"$E2E_W/kc.err" && fail "first.yaml alone worked"
grep -q "no cluster named 'fake'" "$E2E_W/kc.err" || { cat "$E2E_W/kc.err"; fail "unclear kubeconfig error"; }
export KUBECONFIG=$fake_kc
echo "  kubeconfig: \$KUBECONFIG merged (as kubectl), --context, -n, --kubeconfig first"

op_stop
echo "e2e plugin: ok"
