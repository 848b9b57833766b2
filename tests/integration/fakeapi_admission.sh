#!/usr/bin/env bash
# The fake API server's pod admission, checked by clients nobody here wrote: kubectl and the
# official Python client (python3-kubernetes) see a ResourceQuota's "exceeded quota", a
# LimitRange's max per container and the restricted Pod Security level refuse pods with the
# real 403 messages, and a Deployment whose pods are refused carries ReplicaFailure/FailedCreate
# on it and its ReplicaSet, with a Warning Event, as a real cluster shows. Then the unit tests,
# tests/fakeapi/test_admission.py.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/fakeapi/lib.sh"
fake_require
# The Debian package installs for the system interpreter, not for one a user put first in PATH.
PYK=/usr/bin/python3
$PYK -c 'import kubernetes' 2>/dev/null || { echo "skip: python3-kubernetes is not installed"; exit 77; }
WORK=$(mktemp -d /tmp/fakeapi-admission.XXXXXX)
cleanup() { fake_stop; rm -rf "$WORK"; }
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    echo "--- server log" >&2
    tail -n 30 "$WORK/fake/server.log" >&2
    exit 1
}

fake_start "$WORK/fake" --no-kubelet
echo "fake API server on port $FAKE_PORT"

k create namespace adm >/dev/null
k label namespace adm pod-security.kubernetes.io/enforce=restricted >/dev/null
cat >"$WORK/policy.yaml" <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: adm}
spec:
  hard: {limits.cpu: "2", limits.memory: 1Gi, pods: "4"}
---
apiVersion: v1
kind: LimitRange
metadata: {name: per-container, namespace: adm}
spec:
  limits:
  - type: Container
    max: {cpu: "1", memory: 512Mi}
    default: {cpu: 500m, memory: 128Mi}
YAML
k apply -f "$WORK/policy.yaml" >/dev/null
k get quota -n adm compute >/dev/null || fail "kubectl get quota"
k get limits -n adm per-container >/dev/null || fail "kubectl get limits"

pod() { # NAME CPU SECURE(0|1)
    local sc='{}'
    [ "$3" = 1 ] && sc='{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}}'
    printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"adm"},"spec":{"containers":[{"name":"app","image":"example/web:1","resources":{"limits":{"cpu":"%s"}},"securityContext":%s}]}}' "$1" "$2" "$sc"
}

# kubectl: Pod Security first (a loose pod), then the LimitRange (a secure pod over max).
out=$(pod loose 500m 0 | k create -f - 2>&1) && fail "a loose pod was admitted: $out"
echo "$out" | grep -qF 'Error from server (Forbidden): error when creating "STDIN": pods "loose" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)' \
    || fail "kubectl PodSecurity message: $out"
out=$(pod wide 1500m 1 | k create -f - 2>&1) && fail "a pod over the LimitRange was admitted"
echo "$out" | grep -qF 'pods "wide" is forbidden: maximum cpu usage per Container is 1, but limit is 1500m' \
    || fail "kubectl LimitRange message: $out"
pod ok1 1 1 | k create -f - >/dev/null || fail "a compliant pod was refused"
pod ok2 1 1 | k create -f - >/dev/null || fail "a second compliant pod was refused"
# The LimitRange defaulted the memory limit (128Mi) that the quota counts.
mem=$(k get pod -n adm ok1 -o jsonpath='{.spec.containers[0].resources.limits.memory}')
[ "$mem" = 128Mi ] || fail "LimitRange default memory limit: '$mem'"
out=$(pod ok3 1 1 | k create -f - 2>&1) && fail "a pod over the quota was admitted"
echo "$out" | grep -qF 'pods "ok3" is forbidden: exceeded quota: compute, requested: limits.cpu=1, used: limits.cpu=2, limited: limits.cpu=2' \
    || fail "kubectl quota message: $out"
for i in $(seq 1 50); do
    used=$(k get quota -n adm compute -o jsonpath='{.status.used.limits\.cpu}/{.status.used.pods}')
    [ "$used" = 2/2 ] && break
    sleep 0.1
done
[ "$used" = 2/2 ] || fail "quota status.used: '$used'"
echo "kubectl: PodSecurity, LimitRange and quota refusals and quota status as a real cluster"

# A Deployment whose pods the quota refuses: kubectl sees the condition and the Event.
cat >"$WORK/web.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: adm}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: example/web:1
        resources: {limits: {cpu: "1"}}
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
          runAsNonRoot: true
          seccompProfile: {type: RuntimeDefault}
YAML
k apply -f "$WORK/web.yaml" >/dev/null
cond=
for i in $(seq 1 50); do
    cond=$(k get deploy -n adm web -o jsonpath='{.status.conditions[?(@.type=="ReplicaFailure")].reason}')
    [ "$cond" = FailedCreate ] && break
    sleep 0.1
done
[ "$cond" = FailedCreate ] || fail "Deployment ReplicaFailure reason: '$cond'"
msg=$(k get deploy -n adm web -o jsonpath='{.status.conditions[?(@.type=="ReplicaFailure")].message}')
echo "$msg" | grep -qE '^pods "web-[a-z0-9]+-[a-z0-9]{5}" is forbidden: exceeded quota: compute, requested: limits.cpu=1, used: limits.cpu=2, limited: limits.cpu=2$' \
    || fail "Deployment ReplicaFailure message: $msg"
k get events -n adm --field-selector reason=FailedCreate -o json | grep -q 'Error creating: pods' \
    || fail "no FailedCreate Event"
echo "kubectl: ReplicaFailure FailedCreate on the Deployment: $msg"

# The official Python client reads the same answers.
$PYK - "$KUBECONFIG" <<'PY' || fail "python3-kubernetes checks"
import json
import sys

from kubernetes import client, config
from kubernetes.client.rest import ApiException

config.load_kube_config(sys.argv[1])
core, apps = client.CoreV1Api(), client.AppsV1Api()
pod = client.V1Pod(metadata=client.V1ObjectMeta(name="py"), spec=client.V1PodSpec(containers=[
    client.V1Container(name="app", image="example/web:1",
                       resources=client.V1ResourceRequirements(limits={"cpu": "300m"}))]))
try:
    core.create_namespaced_pod("adm", pod)
    sys.exit("a loose pod was admitted")
except ApiException as e:
    st = json.loads(e.body)
    assert e.status == 403 and st["reason"] == "Forbidden", (e.status, st)
    assert st["message"].startswith('pods "py" is forbidden: violates PodSecurity '
                                    '"restricted:latest": '), st["message"]
q = core.read_namespaced_resource_quota("compute", "adm")
assert q.status.hard["limits.cpu"] == "2" and q.status.used["limits.cpu"] == "2", q.status
lr = core.read_namespaced_limit_range("per-container", "adm")
assert lr.spec.limits[0].max["cpu"] == "1", lr.spec
d = apps.read_namespaced_deployment("web", "adm")
rf = [c for c in d.status.conditions if c.type == "ReplicaFailure"]
assert rf and rf[0].status == "True" and rf[0].reason == "FailedCreate", d.status.conditions
rs = apps.list_namespaced_replica_set("adm").items[0]
rrf = [c for c in rs.status.conditions or [] if c.type == "ReplicaFailure"]
assert rrf and rrf[0].message == rf[0].message, rs.status
evs = core.list_namespaced_event("adm", field_selector="reason=FailedCreate").items
assert any(e.involved_object.kind == "ReplicaSet" and e.type == "Warning" and
           e.message.startswith("Error creating: pods") for e in evs), evs
print("python3-kubernetes: 403 Forbidden, quota status, LimitRange, ReplicaFailure, Event")
PY

# The quota freed (a pod deleted): the ReplicaSet creates its pod and the condition goes.
k delete pod -n adm ok1 --grace-period=0 --force >/dev/null 2>&1
for i in $(seq 1 100); do
    cond=$(k get deploy -n adm web -o jsonpath='{.status.conditions[?(@.type=="ReplicaFailure")].reason}')
    [ -z "$cond" ] && break
    sleep 0.1
done
[ -z "$cond" ] || fail "ReplicaFailure not cleared once the quota had room"
[ "$(k get pods -n adm -l app=web -o name | wc -l)" = 1 ] || fail "no web pod after the quota freed"
echo "kubectl: the quota freed, the pod created, ReplicaFailure cleared"
fake_stop

python3 "$ROOT/tests/fakeapi/test_admission.py" -v
