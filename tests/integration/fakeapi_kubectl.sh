#!/usr/bin/env bash
# kubectl, a client nobody here wrote, against the fake API server: apply, get, get -o json,
# annotate, the three patch types, rollout status, wait, jsonpath, apply -k, delete. Pods must
# really answer HTTP on their own loopback address and run under the container's cgroup limits.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/fakeapi/lib.sh"
fake_require
WORK=$(mktemp -d /tmp/fakeapi-kubectl.XXXXXX)
cleanup() { fake_stop; rm -rf "$WORK"; }
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    echo "--- server log" >&2
    tail -n 30 "$WORK/fake/server.log" >&2
    exit 1
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

fake_start "$WORK/fake"
echo "fake API server on port $FAKE_PORT"

mkdir -p "$WORK/m" "$WORK/kust"
cat >"$WORK/m/app.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  key: the-value
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: example/web:1
        ports:
        - containerPort: 8080
        env:
        - {name: WORKERS, value: "2"}
        - {name: GREETING, value: first}
        readinessProbe:
          httpGet: {path: /healthz, port: 8080}
          periodSeconds: 1
        resources:
          limits: {cpu: 250m, memory: 64Mi}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
YAML

k apply -f "$WORK/m/app.yaml"
out=$(k apply -f "$WORK/m/app.yaml")
grep -q "deployment.apps/web unchanged" <<<"$out" || fail "second apply changed something: $out"
k rollout status deployment/web --timeout=60s
k wait --for=condition=Available deployment/web --timeout=30s
k get deployments,services,configmaps
[ "$(k get configmap web-config -o jsonpath='{.data.key}')" = the-value ] || fail "jsonpath read"
k get deployment web -o json >"$WORK/d.json"
[ "$(json 'd["status"]["availableReplicas"]' <"$WORK/d.json")" = 1 ] || fail "availableReplicas"
[ "$(json 'd["metadata"]["generation"]' <"$WORK/d.json")" = 1 ] || fail "generation after create"

# The pod answers on its own loopback address and runs under its limits.
pod=$(k get pods -l app=web -o jsonpath='{.items[0].metadata.name}')
ip=$(k get pod "$pod" -o jsonpath='{.status.podIP}')
case $ip in 127.*) ;; *) fail "pod IP $ip is not loopback" ;; esac
out=$(curl -sf --max-time 5 "http://$ip:8080/")
[ "$out" = "hello from $pod first" ] || fail "pod answered '$out'"
# ... and through its Service's ClusterIP (a loopback proxy to the ready pods).
svcip=$(k get service web -o jsonpath='{.spec.clusterIP}')
out=$(curl -sf --max-time 5 "http://$svcip:80/")
[ "$out" = "hello from $pod first" ] || fail "service answered '$out'"
fakectl GET /fake/pods >"$WORK/pods.json"
read -r cgmode cpudir memdir pid1 < <(python3 - "$WORK/pods.json" "$pod" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = next(p for p in d["pods"] if p["name"] == sys.argv[2])
c = p["containers"][0]
print(d["cgroups"], c["cgroup"].get("cpuDir", "-"), c["cgroup"].get("memoryDir", "-"), c["pid"])
PY
)
echo "cgroups=$cgmode pid=$pid1"
case $cgmode in
v1)
    quota=$(cat "$cpudir/cpu.cfs_quota_us")
    [ "$quota" = 25000 ] || fail "cpu quota $quota"
    [ "$(cat "$cpudir/cpu.cfs_period_us")" = 100000 ] || fail "cpu period"
    [ "$(cat "$memdir/memory.limit_in_bytes")" = 67108864 ] || fail "memory limit"
    grep -qx "$pid1" "$cpudir/cgroup.procs" || fail "pod process not in its cpu cgroup"
    grep -qx "$pid1" "$memdir/cgroup.procs" || fail "pod process not in its memory cgroup"
    ;;
v2)
    [ "$(cat "$cpudir/cpu.max")" = "25000 100000" ] || fail "cpu.max"
    [ "$(cat "$memdir/memory.max")" = 67108864 ] || fail "memory.max"
    ;;
*) echo "cgroups unavailable here: limits not checked" ;;
esac

# label: metadata only, generation unchanged; annotate: a Deployment's generation counts its
# annotations too (the real API server's rule; tests/kcluster/differential.py), no rollout.
jp() { k get deployment web -o jsonpath="$1"; }
k label deployment web tier=web
[ "$(jp '{.metadata.generation}')" = 1 ] || fail "label bumped generation"
k annotate deployment web sizeup.dev/sweep=now
[ "$(jp '{.metadata.annotations.sizeup\.dev/sweep}')" = now ] || fail "annotation"
[ "$(jp '{.metadata.generation}')" = 2 ] || fail "annotate did not bump generation as a real API server does"
[ "$(k get pods -l app=web -o jsonpath='{.items[*].metadata.name}')" = "$pod" ] || fail "annotate rolled the pod"

# Strategic merge patch of one env var (merged by name): a rollout replaces the pod.
k patch deployment web -p '{"spec":{"template":{"spec":{"containers":[
    {"name":"web","env":[{"name":"GREETING","value":"patched"}]}]}}}}'
k rollout status deployment/web --timeout=60s
[ "$(jp '{.metadata.generation}')" = 3 ] || fail "generation after patch"
env=$(k get deployment web -o jsonpath='{.spec.template.spec.containers[0].env[*].name}')
[ "$env" = "WORKERS GREETING" ] || fail "env after strategic merge: $env"
pods=$(k get pods -l app=web -o jsonpath='{.items[*].metadata.name}')
[ "$pods" != "$pod" ] && [ "$(echo "$pods" | wc -w)" = 1 ] || fail "pods after rollout: $pods"
newip=$(k get pod "$pods" -o jsonpath='{.status.podIP}')
[ "$(curl -sf --max-time 5 "http://$newip:8080/")" = "hello from $pods patched" ] || fail "new pod"
for _ in $(seq 1 50); do kill -0 "$pid1" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$pid1" 2>/dev/null || fail "old pod process $pid1 still running"
[ "$cgmode" != v1 ] || [ ! -d "$cpudir" ] || fail "old pod cgroup $cpudir not removed"

# Merge patch and JSON patch.
k patch deployment web --type merge -p '{"metadata":{"labels":{"tier":"front"}}}'
[ "$(k get deployment web -o jsonpath='{.metadata.labels.tier}')" = front ] || fail "merge patch"
k patch deployment web --type json -p '[{"op":"replace","path":"/spec/replicas","value":2}]'
k rollout status deployment/web --timeout=60s
[ "$(k get pods -l app=web -o name | wc -l)" = 2 ] || fail "two replicas"
for ip in $(k get pods -l app=web -o jsonpath='{.items[*].status.podIP}'); do
    out=$(curl -sf --max-time 5 "http://$ip:8080/")
    grep -q "patched" <<<"$out" || fail "replica at $ip: $out"
done
k get pods -o wide

# apply -k (kustomize, run by kubectl).
cat >"$WORK/kust/kustomization.yaml" <<'YAML'
namePrefix: k-
labels:
- pairs: {via: kustomize}
resources: [cm.yaml]
configMapGenerator:
- name: gen
  literals: [a=1]
YAML
cat >"$WORK/kust/cm.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
data:
  x: "y"
YAML
k apply -k "$WORK/kust"
[ "$(k get configmap k-plain -o jsonpath='{.metadata.labels.via}')" = kustomize ] || fail "apply -k"
case $(k get configmaps -l via=kustomize -o name) in
*configmap/k-gen-*) ;;
*) fail "generated configmap" ;;
esac

# delete: the Deployment's ReplicaSets and pods are garbage-collected, processes stopped.
pids=$(fakectl GET /fake/pods | python3 -c '
import json, sys
print(" ".join(str(c["pid"]) for p in json.load(sys.stdin)["pods"] for c in p["containers"]
               if c["pid"]))')
k delete -f "$WORK/m/app.yaml"
k delete -k "$WORK/kust"
for _ in $(seq 1 100); do
    [ -z "$(k get pods,replicasets -o name)" ] && break
    sleep 0.1
done
left=$(k get pods,replicasets -o name)
[ -z "$left" ] || fail "dependents left after delete: $left"
for p in $pids; do ! kill -0 "$p" 2>/dev/null || fail "pod process $p survived delete"; done
if k get deployment web 2>/dev/null; then fail "deployment still there"; fi

cgbase=$(python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["pods"][0]["containers"][0]["cgroup"]
print(c.get("cpuDir", "").rsplit("/", 1)[0])' "$WORK/pods.json")
fake_stop
[ -z "$cgbase" ] || [ ! -d "$cgbase" ] || fail "cgroup base $cgbase left after SIGTERM"
if grep -q "Authorization\|$(cat "$WORK/fake/token")" "$WORK/fake/requests.log"; then
    fail "token in request log"
fi
echo "fakeapi_kubectl: ok"
