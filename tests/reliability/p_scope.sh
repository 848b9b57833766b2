#!/usr/bin/env bash
# Promise: the operator touches only what it was asked to. With --namespace default, a
# Deployment carrying sizeup.dev/ annotations but no sizeup.dev/sweep, and an annotated
# Deployment in another namespace, see zero writes (the fake's request log) and no clone; an
# annotated Deployment in scope gets its status written (the control that the operator worked).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oplib.sh"
fake_start "$W/fake" --no-kubelet || { result FAIL scope "the fake did not start"; exit 1; }
remember_secret "$W/fake/token" "$W/fake/control-token"
dep() { # NAMESPACE NAME ANNOTATIONS(yaml lines, 4-space indent)
    cat <<YAML
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: $2
  namespace: $1
  annotations:
    note: test
$3
spec:
  replicas: 1
  selector: {matchLabels: {app: $2}}
  template:
    metadata: {labels: {app: $2}}
    spec:
      containers: [{name: web, image: example/web:1, ports: [{containerPort: 8080}]}]
YAML
}
{
    echo "apiVersion: v1"; echo "kind: Namespace"; echo "metadata: {name: other}"
    dep default inscope '    sizeup.dev/sweep: "scope-1"
    sizeup.dev/configs: "1@0.2/128Mi"'
    dep default unasked '    sizeup.dev/configs: "1@0.2/128Mi"
    sizeup.dev/mode: in-place
    sizeup.dev/status: "running 1/3"'
    dep other outside '    sizeup.dev/sweep: "scope-1"
    sizeup.dev/configs: "1@0.2/128Mi"'
} >"$W/objs.yaml"
k apply -f "$W/objs.yaml" >"$W/apply.log" 2>&1 || { result FAIL scope "kubectl apply: $(tail -n 2 "$W/apply.log")"; exit 1; }
seq0=$(last_seq)
"$SIZEUP" operator --kubeconfig "$KUBECONFIG" --admin-addr off --namespace default \
    >"$W/operator.log" 2>&1 &
OP=$!
OPS+=("$OP")
# Wait for the control: the in-scope Deployment gets a status.
st=
for _ in $(seq 1 80); do
    st=$(k get deployment inscope -o jsonpath='{.metadata.annotations.sizeup\.dev/status}' 2>/dev/null)
    [ -n "$st" ] && break
    sleep 0.25
done
sleep 3 # time to misbehave, had it a mind to
op_stop "$OP"
fakectl GET "/fake/log?since=$seq0" >"$W/log.json"
keep_logs scope "$W/operator.log" "$W/fake/server.log" "$W/fake/requests.log"
figure=$(python3 - "$W/log.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["entries"]
writes = [x for x in e if x.get("verb") in ("create", "update", "patch", "delete")]
def on(ns, name):
    return [x for x in writes if x.get("ns") == ns and (x.get("name", "") == name or
            x.get("name", "").startswith(name + "-") or
            (x.get("verb") == "create" and x.get("resource") == "deployments"))]
unasked = [x for x in writes if x.get("ns") == "default" and x.get("name", "").startswith("unasked")]
outside_any = [x for x in e if x.get("ns") == "other"]
outside_w = [x for x in outside_any if x.get("verb") in ("create", "update", "patch", "delete")]
clones = [x for x in writes if x.get("verb") == "create" and x.get("resource") == "deployments"
          and not x.get("name", "").startswith("inscope") and x.get("ns") != "default"]
inscope = [x for x in writes if x.get("name", "").startswith("inscope")]
ok = not unasked and not outside_w and not outside_any and inscope
print("%s %d writes to the in-scope Deployment (control), %d to the one without sizeup.dev/sweep, "
      "%d requests of any kind into the namespace outside --namespace (%d writes)" %
      ("ok" if ok else "bad", len(inscope), len(unasked), len(outside_any), len(outside_w)))
PY
)
clone_out=$(k get deployment -n other -o name 2>/dev/null | grep -c sizeup)
st_out=$(k get deployment outside -n other -o jsonpath='{.metadata.annotations.sizeup\.dev/status}')
st_un=$(k get deployment unasked -o jsonpath='{.metadata.annotations.sizeup\.dev/status}')
verdict=PASS
[[ "$figure" == ok* ]] || verdict=FAIL
[ -n "$st" ] || { verdict=FAIL; figure="$figure; the control never got a status"; }
[ "$clone_out" = 0 ] && [ -z "$st_out" ] || verdict=FAIL
[ "$st_un" = "running 1/3" ] || { verdict=FAIL; figure="$figure; unasked status became '$st_un'"; }
result $verdict scope "${figure#* }; control status '$st'; outside status '${st_out}', clones there $clone_out"
[ $verdict = PASS ]
