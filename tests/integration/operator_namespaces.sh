#!/usr/bin/env bash
# --namespace scoping: an operator watching "default" acts there and never touches a Deployment
# in another namespace, however it is annotated.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

k apply -f - >/dev/null <<'YAML' || fail "cannot create namespace other"
apiVersion: v1
kind: Namespace
metadata:
  name: other
YAML
k apply -n other -f "$ROOT/manifests/examples/" >/dev/null || fail "apply in other"
op_start op --namespace default
k annotate -n other deployment web sizeup.dev/mode=sideways sizeup.dev/sweep=ns-1 >/dev/null
k annotate deployment web sizeup.dev/mode=sideways sizeup.dev/sweep=ns-1 >/dev/null
for _ in $(seq 1 40); do [ "$(ann web sizeup.dev/last-sweep)" = ns-1 ] && break; sleep 0.25; done
[ "$(ann web sizeup.dev/last-sweep)" = ns-1 ] || fail "operator did not act in its namespace"
sleep 2
other=$(k get deployment web -n other -o json | python3 -c '
import json, sys
a = json.load(sys.stdin)["metadata"].get("annotations", {})
print(a.get("sizeup.dev/status", "") + a.get("sizeup.dev/last-sweep", ""))')
[ -z "$other" ] || fail "operator touched namespace other: $other"
grep -q 'namespace=other' "$OP_LOG" && fail "operator logged work in namespace other"
echo "  acted in default, left other alone"
op_stop
echo "namespace scoping: ok"
