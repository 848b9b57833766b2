#!/usr/bin/env bash
# Exec credential plugins end to end: the fake API server accepts one bearer token only, and
# only a plugin script knows it. Real kubectl runs `kubectl sizeup status` (the binary under its
# plugin name) with a kubeconfig whose user is that plugin: the status line comes back, the
# plugin got KUBERNETES_EXEC_INFO with the cluster, and the token appears in no output or log.
# Then: a plugin whose first token is refused (401) is run once more and the request retried; a
# plugin that fails, hangs or prints bad JSON is an error naming it and its installHint;
# interactiveMode Always without a terminal is refused; a tls-server-name libcurl cannot honour
# is refused; proxy-url is honoured (a request through a dead proxy fails naming the proxy).
set -u
: "${ROOT:?}" "${SIZEUP:?}"
# shellcheck source=/dev/null
. "$ROOT/tests/fakeapi/lib.sh"
fake_require
W=$(mktemp -d /tmp/kube_exec_credential.XXXXXX)
cleanup() {
    local rc=$?
    fake_stop
    [ $rc -ne 0 ] && tail -n 20 "$W/fake/server.log" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

TOKEN="plugin-only-$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')"
fake_start "$W/fake" --no-kubelet --token "$TOKEN" || fail "fake API server did not start"
# Set-up through kubectl with the fake's own kubeconfig (the same, only, token).
cat >"$W/web.json" <<'EOF'
{"apiVersion": "apps/v1", "kind": "Deployment",
 "metadata": {"name": "web", "annotations": {"sizeup.dev/status": "done"}},
 "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
          "template": {"metadata": {"labels": {"app": "web"}},
                       "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}
EOF
k apply -f "$W/web.json" >/dev/null || fail "create deployment"

mkdir -p "$W/bin"
ln -s "$SIZEUP" "$W/bin/kubectl-sizeup"
export PATH="$W/bin:$PATH"
CA=$(python3 -c 'import base64,sys; print(base64.b64encode(open(sys.argv[1],"rb").read()).decode())' \
    "$W/fake/ca.crt")

# plugin NAME BODY: an executable script in $W/bin.
plugin() {
    printf '#!/bin/sh\n%s\n' "$2" >"$W/bin/$1"
    chmod 755 "$W/bin/$1"
}
cred() { # TOKEN [EXPIRY]: the ExecCredential a plugin prints
    printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"%s}}' \
        "$1" "${2:+,\"expirationTimestamp\":\"$2\"}"
}
# kubeconfig FILE COMMAND [extra exec lines] [extra cluster lines]
kubeconfig() {
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
current-context: fake
contexts:
- name: fake
  context: {cluster: fake, user: plug, namespace: default}
clusters:
- name: fake
  cluster:
    server: https://127.0.0.1:$FAKE_PORT
    certificate-authority-data: $CA
${4:-}
users:
- name: plug
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: $2
      args: [get-token, --cluster, fake]
      env: [{name: PLUG_MODE, value: test}]
      interactiveMode: Never
      provideClusterInfo: true
      installHint: "install it with: apt install sizeup-test-plugin"
${3:-}
EOF
}
ks() { # KUBECONFIG-FILE ARGS...: kubectl sizeup, output to $W/out, stderr to $W/err
    local kc=$1; shift
    local rc=0
    KUBECONFIG="$kc" kubectl sizeup "$@" >"$W/out" 2>"$W/err" </dev/null || rc=$?
    cat "$W/out" "$W/err" >>"$W/all.log"
    return $rc
}

# 1. The plugin's token works; the plugin saw its args, env and KUBERNETES_EXEC_INFO.
plugin good "echo \"\$1 \$PLUG_MODE\" >> '$W/good.runs'; printf '%s' \"\$KUBERNETES_EXEC_INFO\" > '$W/good.info'
echo 'stderr noise $TOKEN' >&2
echo '$(cred "$TOKEN" 2099-01-01T00:00:00Z)'"
kubeconfig "$W/kc-good" good
ks "$W/kc-good" status || { cat "$W/err"; fail "status through the exec plugin failed"; }
grep -Eq '^web +done' "$W/out" || { cat "$W/out" "$W/err"; fail "no status line for web"; }
[ "$(cat "$W/good.runs")" = "get-token test" ] || fail "plugin args/env: '$(cat "$W/good.runs")'"
python3 - "$W/good.info" "$FAKE_PORT" <<'EOF' || fail "KUBERNETES_EXEC_INFO is not what kubectl passes"
import json, sys
i = json.load(open(sys.argv[1]))
assert i["kind"] == "ExecCredential" and i["apiVersion"] == "client.authentication.k8s.io/v1", i
assert i["spec"]["interactive"] is False, i
c = i["spec"]["cluster"]
assert c["server"] == "https://127.0.0.1:%s" % sys.argv[2], c
assert c["certificate-authority-data"], c
EOF
echo "  status through the exec plugin: ok (args, env, KUBERNETES_EXEC_INFO with the cluster)"

# 2. A refused token: the plugin runs once more and the request is retried once.
plugin flaky "n=\$(cat '$W/flaky.n' 2>/dev/null || echo 0); n=\$((n+1)); echo \$n > '$W/flaky.n'
if [ \$n = 1 ]; then echo '$(cred wrong-token 2099-01-01T00:00:00Z)'; else echo '$(cred "$TOKEN")'; fi"
kubeconfig "$W/kc-flaky" flaky
ks "$W/kc-flaky" status || { cat "$W/err"; fail "status after a 401 failed"; }
grep -Eq '^web +done' "$W/out" || fail "no status line after the 401"
[ "$(cat "$W/flaky.n")" = 2 ] || fail "the plugin ran $(cat "$W/flaky.n") times, want 2"
echo "  a 401: the plugin ran again, the request was retried: ok"

# 3. A plugin whose token is always refused: 401, after exactly one more run.
plugin wrong "n=\$(cat '$W/wrong.n' 2>/dev/null || echo 0); echo \$((n+1)) > '$W/wrong.n'
echo '$(cred wrong-token)'"
kubeconfig "$W/kc-wrong" wrong
ks "$W/kc-wrong" status && fail "status with a refused token succeeded"
grep -q '401' "$W/err" || { cat "$W/err"; fail "no 401 in the error"; }
[ "$(cat "$W/wrong.n")" = 2 ] || fail "the refused plugin ran $(cat "$W/wrong.n") times, want 2"
echo "  a token always refused: 401 after one more run: ok"

# 4. Failing, hanging, bad JSON: errors name the plugin and its installHint, quickly.
plugin failing "echo 'secret-looking output'; exit 4"
plugin hanging "exec sleep 60"
plugin badjson "echo 'Please open https://login.example/ and paste the code'"
for p in failing:'exited with status 4' hanging:'did not finish within 2 s' badjson:'not a JSON object'; do
    name=${p%%:*} want=${p#*:}
    kubeconfig "$W/kc-$name" "$name"
    t0=$(date +%s)
    SIZEUP_EXEC_TIMEOUT=2 ks "$W/kc-$name" status && fail "$name: status succeeded"
    [ $(($(date +%s) - t0)) -le 15 ] || fail "$name: took $(($(date +%s) - t0)) s"
    grep -q "exec plugin '$name'" "$W/err" || { cat "$W/err"; fail "$name: the error does not name it"; }
    grep -qF "$want" "$W/err" || { cat "$W/err"; fail "$name: the error lacks '$want'"; }
    grep -qF 'install hint: install it with: apt install sizeup-test-plugin' "$W/err" ||
        { cat "$W/err"; fail "$name: no installHint"; }
    grep -q 'secret-looking\|login.example' "$W/err" "$W/out" && fail "$name: plugin output in sizeup's"
done
echo "  failing, hanging (2 s), bad JSON: errors name the plugin and its installHint: ok"

# 5. interactiveMode Always without a terminal.
plugin always "touch '$W/always.ran'; echo '$(cred "$TOKEN")'"
kubeconfig "$W/kc-always" always
sed -i 's/interactiveMode: Never/interactiveMode: Always/' "$W/kc-always"
ks "$W/kc-always" status && fail "interactiveMode Always without a terminal succeeded"
grep -q 'interactiveMode is Always, but there is no terminal' "$W/err" || { cat "$W/err"; fail "Always: unclear"; }
[ -e "$W/always.ran" ] && fail "interactiveMode Always: the plugin ran without a terminal"
echo "  interactiveMode Always without a terminal: refused, plugin not run: ok"

# 6. tls-server-name other than the server's host: refused; proxy-url: honoured.
kubeconfig "$W/kc-sni" good "" "    tls-server-name: kubernetes.default.svc"
ks "$W/kc-sni" status && fail "an unhonourable tls-server-name was accepted"
grep -q 'tls-server-name kubernetes.default.svc, which sizeup cannot honour' "$W/err" ||
    { cat "$W/err"; fail "tls-server-name: unclear"; }
kubeconfig "$W/kc-sni-ok" good "" "    tls-server-name: 127.0.0.1"
ks "$W/kc-sni-ok" status || { cat "$W/err"; fail "tls-server-name equal to the host refused"; }
dead=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
kubeconfig "$W/kc-proxy" good "" "    proxy-url: http://127.0.0.1:$dead"
ks "$W/kc-proxy" status && fail "a request through a dead proxy succeeded"
grep -qi "proxy\|127.0.0.1:$dead\|connect" "$W/err" || { cat "$W/err"; fail "proxy-url not used"; }
echo "  tls-server-name for another host refused, for the same host accepted; proxy-url used: ok"

# 7. The token in no output or log: sizeup's, the fake's server log and request log.
if grep -rqF -- "$TOKEN" "$W/all.log" "$W/fake/server.log" "$W/fake/requests.log" 2>/dev/null; then
    fail "the plugin's token appeared in an output or a log"
fi
echo "kube exec credential plugins: ok"
