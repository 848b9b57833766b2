#!/usr/bin/env bash
# The process kubelet against the real control plane (kcluster.sh up, one node): the node is
# Ready; a Deployment of example/web gets Ready pods that answer on their pod IPs from this
# machine; an Indexed Job completes with each pod's index; a crashing container restarts with
# a restartCount; a memory hog is OOMKilled; an in-place resize reaches the cgroup and the
# status; `kubectl logs` and `kubectl top pod` answer; a delete is graceful (SIGTERM, the
# grace period, SIGKILL); runAsUser holds with the token readable; and after SIGTERM to the
# kubelet nothing of its pods is left (network namespaces, cgroups, processes).
#
#   tests/kcluster/kubelet/test_kubelet.sh        (root; builds the cluster if needed)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
# shellcheck source=../../lib/common.sh
. "$root/tests/lib/common.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces and cgroups for the pods)"
need ip curl python3 nsenter unshare setpriv

workdir dir kubelet
images=$dir/images.json
cat >"$images" <<'EOF'
{
  "example/web:*": {"command": ["python3", "${FAKEAPI_APPS}/web.py"]},
  "example/crash:*": {"command": ["python3", "${FAKEAPI_APPS}/web.py"], "env": {"CRASH": "1"}},
  "example/shell:*": {"entrypoint": ["/bin/sh", "-c"], "cmd": ["exit 0"]}
}
EOF
cluster=$dir/cluster
on_exit "$root/tests/kcluster/kcluster.sh" down "$cluster"
"$root/tests/kcluster/kcluster.sh" up "$cluster" --images "$images" --nodes 1 ||
    fail "kcluster.sh up failed (logs in $cluster/logs)"
# shellcheck source=/dev/null
. "$cluster/env"
kubelet_pid=$(cat "$cluster/pids/kubelet-1")

# wait_for SECONDS WHAT COMMAND...: retries COMMAND every 0.5 s; fails with WHAT.
wait_for() {
    local secs=$1 what=$2 i
    shift 2
    for ((i = 0; i < secs * 2; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    fail "$what (not within $secs s)"
}
jpath() { kubectl get "$@" 2>/dev/null; }
pod_field() { kubectl get pod "$1" -o "jsonpath=$2"; }
passed() { echo "ok: $*"; }

# ---- the node --------------------------------------------------------------------------------
node_ready() { [ "$(jpath node kc-node-1 -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
wait_for 30 "node kc-node-1 Ready" node_ready
server_version=$(kubectl get --raw /version | python3 -c 'import json,sys; print(json.load(sys.stdin)["gitVersion"])')
[ "$(jpath node kc-node-1 -o 'jsonpath={.status.nodeInfo.kubeletVersion}')" = "$server_version" ] ||
    fail "kubeletVersion is not the server's $server_version"
[ "$(jpath node kc-node-1 -o 'jsonpath={.status.allocatable.pods}')" = 110 ] || fail "allocatable pods is not 110"
lease_holder=$(jpath lease -n kube-node-lease kc-node-1 -o 'jsonpath={.spec.holderIdentity}')
[ "$lease_holder" = kc-node-1 ] || fail "no Lease held by kc-node-1 (got '$lease_holder')"
passed "node Ready, version and Lease"

# ---- a Deployment reachable by pod IP ------------------------------------------------------------
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: web
        image: example/web:1
        ports: [{containerPort: 8080}]
        env: [{name: GREETING, value: from-the-real-api}]
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {cpu: 500m, memory: 128Mi}
        readinessProbe:
          httpGet: {path: /healthz, port: 8080}
          periodSeconds: 1
        livenessProbe:
          tcpSocket: {port: 8080}
          initialDelaySeconds: 5
EOF
deploy_ready() { [ "$(jpath deploy web -o 'jsonpath={.status.readyReplicas}')" = 2 ]; }
wait_for 60 "Deployment web with 2 ready replicas" deploy_ready
ips=$(kubectl get pods -l app=web -o 'jsonpath={.items[*].status.podIP}')
for ip in $ips; do
    case "$ip" in 10.210.1.*) ;; *) fail "pod IP $ip is not in node 1's 10.210.1.0/24" ;; esac
    out=$(curl -sf -m 5 "http://$ip:8080/") || fail "no answer from pod IP $ip"
    case "$out" in *from-the-real-api*) ;; *) fail "unexpected answer from $ip: $out" ;; esac
done
web=$(kubectl get pods -l app=web -o 'jsonpath={.items[0].metadata.name}')
web_ip=$(pod_field "$web" '{.status.podIP}')
[ "$(pod_field "$web" '{.status.hostIP}')" = 10.210.255.1 ] || fail "hostIP is not the node's address"
conds=$(pod_field "$web" '{range .status.conditions[*]}{.type}={.status} {end}')
for c in PodScheduled=True Initialized=True ContainersReady=True Ready=True PodReadyToStartContainers=True; do
    case " $conds " in *" $c "*) ;; *) fail "$web lacks condition $c (has: $conds)" ;; esac
done
env_json=$(curl -sf -m 5 "http://$web_ip:8080/env")
python3 - "$env_json" <<'PY' || fail "the pod's environment lacks the kubernetes Service variables"
import json, sys
e = json.loads(sys.argv[1])
assert e["KUBERNETES_SERVICE_HOST"] == "10.210.255.1" and e["KUBERNETES_SERVICE_PORT"] == "6443", e
PY
passed "Deployment Ready, pods answer on $ips"

# ---- the ServiceAccount token authenticates for real ---------------------------------------------
web_uid8=$(pod_field "$web" '{.metadata.uid}' | tr -d - | cut -c1-8)
web_pid=$(find /sys/fs/cgroup -path "*/skc-kubelet-kc-node-1/${web_uid8}_web" -name "${web_uid8}_web" \
    -exec cat {}/cgroup.procs \; 2>/dev/null | head -1)
[ -n "$web_pid" ] || fail "no process in $web's cgroup"
token=$(nsenter -t "$web_pid" -m cat /var/run/secrets/kubernetes.io/serviceaccount/token)
who=$(curl -sf -m 5 --cacert "$cluster/pki/ca.crt" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -X POST \
    -d '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}' \
    https://10.210.255.1:6443/apis/authentication.k8s.io/v1/selfsubjectreviews |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["userInfo"]["username"])') ||
    fail "the pod's token was not accepted by the API server"
[ "$who" = system:serviceaccount:default:default ] || fail "the pod's token is '$who'"
[ ! -e /var/run/secrets/kubernetes.io/serviceaccount/token ] || fail "the token is visible on the host"
passed "projected ServiceAccount token authenticates as $who"

# ---- logs and metrics --------------------------------------------------------------------------
kubectl logs "$web" | grep -q "listening on $web_ip:8080" || fail "kubectl logs lacks the app's line"
[ "$(kubectl logs "$web" --tail=1 | wc -l)" -eq 1 ] || fail "kubectl logs --tail=1"
top_ok() { kubectl top pod "$web" --no-headers | grep -q "^$web "; }
wait_for 60 "kubectl top pod (metrics-server scraping /metrics/resource)" top_ok
kubectl top node --no-headers | grep -q '^kc-node-1 ' || fail "kubectl top node"
passed "kubectl logs and kubectl top"

# ---- an Indexed Job ---------------------------------------------------------------------------
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: indexed}
spec:
  completions: 3
  parallelism: 2
  completionMode: Indexed
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: example/shell:1
        args: ['echo "index=$IDX"; test "$IDX" = "$JOB_COMPLETION_INDEX"']
        env:
        - name: IDX
          valueFrom: {fieldRef: {fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
EOF
job_done() { [ "$(jpath job indexed -o 'jsonpath={.status.succeeded}')" = 3 ]; }
wait_for 60 "Indexed Job with 3 completions" job_done
[ "$(kubectl logs -l job-name=indexed --tail=-1 | sort | tr '\n' ' ')" = "index=0 index=1 index=2 " ] ||
    fail "the Job's pods did not see their indexes"
passed "Indexed Job complete"

# ---- crash loop, OOM kill ------------------------------------------------------------------------
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  containers: [{name: app, image: example/crash:1}]
---
apiVersion: v1
kind: Pod
metadata: {name: oom}
spec:
  restartPolicy: Never
  containers:
  - name: app
    image: example/web:1
    env: [{name: ALLOC_MB, value: "200"}]
    resources: {limits: {memory: 64Mi, cpu: "1"}}
EOF
restarted() { [ "$(pod_field crash '{.status.containerStatuses[0].restartCount}')" -ge 2 ]; }
wait_for 60 "crash restarted twice" restarted
[ "$(pod_field crash '{.status.containerStatuses[0].lastState.terminated.exitCode}')" = 3 ] ||
    fail "crash's last exit code is not 3"
kubectl logs crash --previous | grep -q "crashing on purpose" || fail "kubectl logs --previous"
oomed() { [ "$(pod_field oom '{.status.containerStatuses[0].state.terminated.reason}')" = OOMKilled ]; }
wait_for 30 "oom OOMKilled" oomed
[ "$(pod_field oom '{.status.phase}')" = Failed ] || fail "the OOMKilled pod is not Failed"
passed "CrashLoopBackOff with restarts, OOMKilled"

# ---- in-place resize ---------------------------------------------------------------------------
uid8=$(pod_field "$web" '{.metadata.uid}' | tr -d - | cut -c1-8)
kubectl patch pod "$web" --subresource resize -p \
    '{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"200m","memory":"64Mi"},"limits":{"cpu":"1","memory":"256Mi"}}}]}}' >/dev/null
resized() {
    [ "$(pod_field "$web" '{.status.containerStatuses[0].resources.limits.cpu}')" = 1 ] &&
        [ "$(pod_field "$web" '{.status.containerStatuses[0].allocatedResources.cpu}')" = 200m ] &&
        [ -z "$(pod_field "$web" '{.status.conditions[?(@.type=="PodResizeInProgress")].type}')" ]
}
wait_for 20 "the resize in the status" resized
quota=
for d in $(find /sys/fs/cgroup -type d -name "${uid8}_web" 2>/dev/null); do
    [ -f "$d/cpu.cfs_quota_us" ] && quota=$(cat "$d/cpu.cfs_quota_us")
    [ -f "$d/cpu.max" ] && quota=$(cat "$d/cpu.max")
done
case "$quota" in 100000 | "100000 100000") ;; *) fail "the cgroup's CPU quota is '$quota', not 1 CPU" ;; esac
kubectl get events --field-selector "involvedObject.name=$web,reason=ResizeStarted" --no-headers | grep -q . ||
    fail "no ResizeStarted event"
[ "$(pod_field "$web" '{.status.containerStatuses[0].restartCount}')" = 0 ] || fail "the resize restarted the container"
# Beyond what is free beside the other pods: Deferred (the API server itself refuses what can
# never fit the node's allocatable).
kubectl patch pod "$web" --subresource resize -p \
    '{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"3950m"},"limits":{"cpu":"4"}}}]}}' >/dev/null
deferred() { [ "$(pod_field "$web" '{.status.conditions[?(@.type=="PodResizePending")].reason}')" = Deferred ]; }
wait_for 20 "PodResizePending/Deferred" deferred
kubectl patch pod "$web" --subresource resize -p \
    '{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"200m"},"limits":{"cpu":"1"}}}]}}' >/dev/null
undeferred() { [ -z "$(pod_field "$web" '{.status.conditions[?(@.type=="PodResizePending")].type}')" ]; }
wait_for 20 "PodResizePending cleared once the resize is reverted" undeferred
passed "in-place resize applied (cgroup quota $quota), Deferred when it does not fit"

# A memory resize whose resizePolicy is RestartContainer restarts the container with the limit.
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: memrestart}
spec:
  containers:
  - name: app
    image: example/web:1
    resizePolicy: [{resourceName: memory, restartPolicy: RestartContainer}]
    resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 500m, memory: 128Mi}}
EOF
mr_ready() { [ "$(pod_field memrestart '{.status.containerStatuses[0].ready}')" = true ]; }
wait_for 30 "memrestart ready" mr_ready
mr_uid8=$(pod_field memrestart '{.metadata.uid}' | tr -d - | cut -c1-8)
kubectl patch pod memrestart --subresource resize -p \
    '{"spec":{"containers":[{"name":"app","resources":{"limits":{"memory":"192Mi"}}}]}}' >/dev/null
mr_done() {
    [ "$(pod_field memrestart '{.status.containerStatuses[0].resources.limits.memory}')" = 192Mi ] &&
        [ "$(pod_field memrestart '{.status.containerStatuses[0].restartCount}')" = 1 ]
}
wait_for 20 "the RestartContainer memory resize (restartCount 1, limit 192Mi)" mr_done
mem_limit=
for d in $(find /sys/fs/cgroup -type d -name "${mr_uid8}_app" 2>/dev/null); do
    [ -f "$d/memory.limit_in_bytes" ] && mem_limit=$(cat "$d/memory.limit_in_bytes")
    [ -f "$d/memory.max" ] && mem_limit=$(cat "$d/memory.max")
done
[ "$mem_limit" = $((192 << 20)) ] || fail "the memory cgroup limit is '$mem_limit', not 192Mi"
passed "RestartContainer memory resize: restarted once with the new limit"

# ---- a failing liveness probe restarts the container -------------------------------------------
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: unlive}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: example/shell:1
    args: ["sleep 600"]
    livenessProbe:
      exec: {command: [/bin/sh, -c, "exit 1"]}
      periodSeconds: 1
      failureThreshold: 2
EOF
relived() { [ "$(pod_field unlive '{.status.containerStatuses[0].restartCount}')" -ge 1 ]; }
wait_for 30 "a restart after the liveness probe failed" relived
kubectl get events --field-selector "involvedObject.name=unlive,reason=Killing" --no-headers |
    grep -q "failed liveness probe" || fail "no Killing event for the liveness failure"
kubectl delete pod unlive memrestart --wait=false >/dev/null
passed "liveness failure: Killing event and a restart"

# ---- runAsUser ---------------------------------------------------------------------------------
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: user}
spec:
  restartPolicy: Never
  securityContext: {runAsUser: 1000, runAsGroup: 3000}
  containers:
  - name: app
    image: example/shell:1
    args: ['echo "$(id -u):$(id -g) $(wc -c < /var/run/secrets/kubernetes.io/serviceaccount/token)"']
EOF
user_done() { [ "$(pod_field user '{.status.phase}')" = Succeeded ]; }
wait_for 30 "the runAsUser pod Succeeded" user_done
line=$(kubectl logs user)
case "$line" in "1000:3000 "[1-9]*) ;; *) fail "runAsUser pod printed '$line'" ;; esac
passed "runAsUser/runAsGroup with the token readable ($line)"

# ---- graceful delete ------------------------------------------------------------------------------
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: graceful}
spec:
  terminationGracePeriodSeconds: 3
  containers:
  - name: app
    image: example/shell:1
    args: ["trap 'echo got SIGTERM' TERM; while :; do sleep 0.2; done"]
EOF
running() { [ "$(pod_field graceful '{.status.phase}')" = Running ]; }
wait_for 30 "graceful Running" running
g_uid8=$(pod_field graceful '{.metadata.uid}' | tr -d - | cut -c1-8)
g_log=$(ls "$cluster"/kubelet-1/logs/default_graceful_*/app/0.log)
t0=$(now_ms)
kubectl delete pod graceful --wait=true --timeout=30s >/dev/null
took=$(($(now_ms) - t0))
grep -q "got SIGTERM" "$g_log" 2>/dev/null || [ "$took" -ge 2500 ] || fail "the container did not get SIGTERM"
[ "$took" -ge 2500 ] && [ "$took" -le 15000 ] || fail "delete took $took ms, not the 3 s grace period"
! ip netns list | grep -q "skc-p-$g_uid8" || fail "the deleted pod's network namespace is left"
passed "graceful delete in $took ms (SIGTERM trapped, SIGKILL after the grace period)"

# ---- a restarted kubelet keeps each pod's address ------------------------------------------------
# The same command line and environment as kcluster.sh gave it.
mapfile -d '' kubelet_argv <"/proc/$kubelet_pid/cmdline"
apps=$(tr '\0' '\n' <"/proc/$kubelet_pid/environ" | sed -n 's/^FAKEAPI_APPS=//p')
before=$(kubectl get pods -l app=web -o 'jsonpath={range .items[*]}{.metadata.name}={.status.podIP} {end}')
restarts_before=$(pod_field "$web" '{.status.containerStatuses[0].restartCount}')
kill -TERM "$kubelet_pid"
for ((i = 0; i < 40; i++)); do kill -0 "$kubelet_pid" 2>/dev/null || break; sleep 0.25; done
! kill -0 "$kubelet_pid" 2>/dev/null || fail "the kubelet did not exit within 10 s of SIGTERM"
FAKEAPI_APPS=$apps setsid "${kubelet_argv[@]}" >>"$cluster/logs/kubelet-1.log" 2>&1 </dev/null &
kubelet_pid=$!
echo "$kubelet_pid" >"$cluster/pids/kubelet-1"
# The status still shows the earlier run's containers until the new kubelet writes its own.
recounted() { [ "$(pod_field "$web" '{.status.containerStatuses[0].restartCount}')" -gt "$restarts_before" ]; }
wait_for 30 "the kubelet restart counted as a container restart" recounted
wait_for 60 "Deployment web ready again after the kubelet restart" deploy_ready
after=$(kubectl get pods -l app=web -o 'jsonpath={range .items[*]}{.metadata.name}={.status.podIP} {end}')
[ "$before" = "$after" ] || fail "pod addresses changed across the kubelet restart: '$before' -> '$after'"
curl -sf -m 5 "http://$web_ip:8080/healthz" >/dev/null || fail "$web_ip does not answer after the kubelet restart"
passed "kubelet restart: same addresses ($after), restartCount counted"

# ---- SIGTERM to the kubelet leaves nothing ------------------------------------------------------
# The pods' processes are those in the node's cgroups (other tests on this machine may run the
# same apps under the fake API server).
pod_pids=$(find /sys/fs/cgroup -path '*/skc-kubelet-kc-node-1/*' -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
[ -n "$pod_pids" ] || fail "no pod processes found in the node's cgroups before SIGTERM"
kill -TERM "$kubelet_pid"
for ((i = 0; i < 40; i++)); do kill -0 "$kubelet_pid" 2>/dev/null || break; sleep 0.25; done
! kill -0 "$kubelet_pid" 2>/dev/null || fail "the kubelet did not exit within 10 s of SIGTERM"
left_ns=$(ip netns list | grep -c '^skc-p-' || true)
left_cg=$(find /sys/fs/cgroup -type d -name 'skc-kubelet-kc-node-1' 2>/dev/null | wc -l)
left_procs=0
for p in $pod_pids; do
    if kill -0 "$p" 2>/dev/null && ! grep -q fakeapi- "/proc/$p/cgroup" 2>/dev/null; then
        left_procs=$((left_procs + 1))
    fi
done
[ "$left_ns" = 0 ] || fail "$left_ns pod network namespaces left: $(ip netns list | grep skc-p-)"
[ "$left_cg" = 0 ] || fail "cgroups left: $(find /sys/fs/cgroup -type d -name 'skc-kubelet-*')"
[ "$left_procs" = 0 ] || fail "$left_procs pod processes left"
! ip -n skc-router link show | grep -q ' skv' || fail "veth ends left in the router namespace"
passed "SIGTERM: kubelet gone, no namespace, cgroup, link or process left"
echo "PASS: process kubelet against the real control plane"
