#!/usr/bin/env bash
# End to end over HTTP/2: the operator's whole sweep (clone mode, two variants) with every API
# request through nginx in front of the fake API server (tests/integration/lib/nginx_h2.sh): its
# informers' watches, the clone's create/patch/delete, the status annotations, the results
# ConfigMap, Events. The sweep must end done with its sizing, and nginx's log must show every
# request as HTTP/2.0, watches included.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
# shellcheck source=/dev/null
. "$ROOT/tests/integration/lib/nginx_h2.sh"
e2e_setup
trap 'rc=$?; nginx_h2_stop; (exit $rc); e2e_cleanup' EXIT

nginx_h2_start "$E2E_W/nginx" "$E2E_W/fake" "$FAKE_PORT" || fail "nginx did not start"
sed "s#https://127.0.0.1:$FAKE_PORT#https://127.0.0.1:$NGINX_PORT#" "$E2E_W/fake/kubeconfig" \
    >"$E2E_W/kubeconfig-h2"
grep -q "127.0.0.1:$NGINX_PORT" "$E2E_W/kubeconfig-h2" || fail "no kubeconfig for nginx"
export KUBECONFIG="$E2E_W/kubeconfig-h2"

op_start op
k annotate deployment web sizeup.dev/profile=web-load \
    "sizeup.dev/configs=1@0.2/128Mi 1@0.8/128Mi" sizeup.dev/sweep=e2e-h2-1 >/dev/null
wait_status web '^done$' 120
check_sizing web
op_stop

log="$E2E_W/nginx/logs/h2.log"
total=$(wc -l <"$log")
h2n=$(grep -c '^HTTP/2.0 ' "$log")
[ "$total" -gt 20 ] || fail "only $total requests through nginx"
[ "$total" = "$h2n" ] || { grep -v '^HTTP/2.0 ' "$log" | head; fail "$((total - h2n)) of $total requests not HTTP/2"; }
for what in 'GET .*watch=' 'POST /apis/apps/v1/namespaces/default/deployments ' 'PATCH ' 'DELETE '; do
    grep -Eq "^HTTP/2.0 $what" "$log" || fail "no '$what' over HTTP/2 in nginx's log"
done
echo "  $total requests through nginx, all HTTP/2.0 (watches, clone create/patch/delete)"
echo "e2e over HTTP/2: ok"
