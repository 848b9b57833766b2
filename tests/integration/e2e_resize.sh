#!/usr/bin/env bash
# slow: make e2e
# End to end, in-place resize (pods/resize) against the fake, whose node has 2 CPUs:
#  1. mode resize, a CPU-only sweep of a Guaranteed Deployment with the capacity search (and
#     search.max_rps): every variant applied by resize to the one pod (its uid unchanged, no
#     other pod ever created, checked every 0.2 s from start to end), the container's cgroup CPU
#     limit following each variant, the pod's own resources back at the end;
#  1b. mode resize, a worker-count change rolled out, the next CPU-only step resized on the
#     pod the rollout started;
#  2. clone mode (resize used on its own): a CPU-only step resized, a worker-count change and an
#     Infeasible resize (3 CPUs on the 2-CPU node) rolled out instead;
#  3. mode resize on a Burstable Deployment: the first step would make it Guaranteed (a QoS
#     class change), so it is rolled out; the template ends exactly as it was;
#  4. a server that refuses a memory-limit decrease (422): that step is rolled out;
#  5. a memory limit below the app's usage: a FAILED row with the kubelet's reason, and the
#     sweep goes on;
#  6. kill -9 of the operator after a resize: the next operator resizes the pod back, resumes,
#     and the pod ends with its own resources, its uid unchanged.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
# Metrics every 1.5 s: section 1's capacity search holds each boundary repeat over a whole
# metrics window (2 windows and a bit), which at the default 15 s would take half a minute.
e2e_setup --node-cpu 2 --node-memory 4Gi --metrics-window 1.5
k apply -f "$ROOT/tests/integration/fixtures/quick-profile.yaml" >/dev/null || fail "profile"
# A capacity search (the default search mode) with search.max_rps, short steps.
k apply -f - >/dev/null <<'EOF' || fail "capacity profile"
apiVersion: v1
kind: ConfigMap
metadata: {name: quick-cap}
data:
  profile.yaml: |
    timeout: 5s
    search: { max_rps: 40, window: 1s, warmup: 500ms, repeats: 2, max_steps: 3 }
    slo: { p95: 1s }
    requests:
      - { name: work, method: GET, path: "/work?ms=20" }
EOF
# gapp NAME CPU MEM [ALLOC_MB]: a one-pod Guaranteed Deployment (requests = limits), WORKERS=1.
gapp() {
    k apply -f - >/dev/null <<EOF || fail "create $1"
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: 1
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      containers:
        - name: web
          image: example/web:1
          ports: [{containerPort: 8080}]
          env: [{name: WORKERS, value: "1"}, {name: ALLOC_MB, value: "${4:-0}"}]
          readinessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 1}
          resources:
            limits: {cpu: $2, memory: $3}
            requests: {cpu: $2, memory: $3}
EOF
    k rollout status "deployment/$1" --timeout=60s >/dev/null || fail "$1 did not roll out"
}

# The one pod of app $1 as "name uid".
pod_of() {
    k get pods -l "app=$1" -o json | python3 -c '
import json, sys
ps = [p for p in json.load(sys.stdin)["items"] if not p["metadata"].get("deletionTimestamp")]
print(" ".join(p["metadata"][k] for p in ps for k in ("name", "uid")))'
}

# applied_by and state of each row of DEPLOYMENT-sizing's results.json, one "spec by state" a line.
rows() {
    k get configmap "$1-sizing" -o json | python3 -c '
import json, sys
r = json.loads(json.load(sys.stdin)["data"]["results.json"])
for v in r["variants"]:
    print(v["spec"], v.get("applied_by", "-"), v["state"],
          (v.get("failure") or {}).get("reason", ""))'
}

# The container's cgroup CPU limit in millicores (as the fake's kubelet set it) for pod $1.
cgroup_cpu() {
    fakectl GET /fake/pods | python3 -c '
import json, sys
for p in json.load(sys.stdin)["pods"]:
    if p["name"] == sys.argv[1] and not p["stopping"]:
        print(p["containers"][0]["cgroup"].get("cpuMillis"))' "$1"
}

op_start op

# ---- 1. mode resize, CPU only: one pod, cgroup limits following each variant
gapp gweb 300m 128Mi
read -r pod uid < <(pod_of gweb)
deploy_fingerprint gweb template >"$E2E_W/g-before.json"
k annotate deployment gweb sizeup.dev/profile=quick-cap sizeup.dev/mode=resize \
    "sizeup.dev/configs=1@0.25/128Mi 1@0.5/128Mi 1@0.75/128Mi 1@1/128Mi" \
    sizeup.dev/sweep=r1 >/dev/null
seen=""
until=$((SECONDS + 240))
while [ $SECONDS -lt $until ]; do
    c=$(cgroup_cpu "$pod")
    case " $seen " in *" $c "*) ;; *) [ -n "$c" ] && seen="$seen $c" ;; esac
    pods=$(pod_of gweb)
    [ "$pods" = "$pod $uid" ] || fail "the pod changed during a resize sweep: '$pods'"
    [ "$(ann gweb sizeup.dev/status)" = "done" ] && break
    sleep 0.2
done
wait_status gweb '^done$' 5
echo "  cgroup CPU limits seen on pod $pod:$seen"
for want in 250 500 750 1000; do
    case " $seen " in *" $want "*) ;; *) fail "cgroup never at ${want}m (saw:$seen)" ;; esac
done
r=$(rows gweb)
printf '  %s\n' "${r//$'\n'/$'\n'  }"
[ "$(echo "$r" | grep -c ' resize measured')" = 4 ] || fail "not every variant applied by resize"
[ "$(pod_of gweb)" = "$pod $uid" ] || fail "pod replaced: $(pod_of gweb)"
for _ in $(seq 1 40); do [ "$(cgroup_cpu "$pod")" = 300 ] && break; sleep 0.25; done
[ "$(cgroup_cpu "$pod")" = 300 ] || fail "pod's CPU limit not put back: $(cgroup_cpu "$pod")m"
[ "$(k get pod "$pod" -o jsonpath='{.spec.containers[0].resources.limits.cpu}')" = 300m ] ||
    fail "pod spec not put back"
[ -z "$(ann gweb sizeup.dev/original-resources)" ] || fail "original-resources left behind"
deploy_fingerprint gweb template >"$E2E_W/g-after.json"
cmp -s "$E2E_W/g-before.json" "$E2E_W/g-after.json" || fail "gweb's template changed"
echo "  mode resize: 4 variants on pod $pod (uid unchanged), resources back to 300m/128Mi"

# ---- 1b. mode resize, a worker-count change first: that step is rolled out, and the next
# CPU-only step resizes the pod the rollout started (not a rollout for want of the old pod)
gapp gw 300m 128Mi
k annotate deployment gw sizeup.dev/profile=quick sizeup.dev/mode=resize \
    "sizeup.dev/configs=2@0.3/128Mi 2@0.5/128Mi" sizeup.dev/sweep=w1 >/dev/null
wait_status gw '^done$' 120
r=$(rows gw)
printf '  %s\n' "${r//$'\n'/$'\n'  }"
echo "$r" | grep -q '^2@0.3/128Mi rollout measured' || fail "worker-count change not rolled out"
echo "$r" | grep -q '^2@0.5/128Mi resize measured' ||
    fail "the CPU-only step after a rollout was not resized on the new pod"
echo "  mode resize: a rolled-out step, then a resize of its successor pod"

# ---- 2. clone mode: resize used on its own; worker-count and Infeasible fall back
k annotate deployment web sizeup.dev/profile=quick \
    "sizeup.dev/configs=1@0.25/128Mi 1@0.5/128Mi 1@3/128Mi 2@0.5/128Mi" \
    sizeup.dev/sweep=r2 >/dev/null
wait_status web '^done$' 120
r=$(rows web)
printf '  %s\n' "${r//$'\n'/$'\n'  }"
echo "$r" | grep -q '^1@0.25/128Mi rollout measured' || fail "the clone's first variant"
echo "$r" | grep -q '^1@0.5/128Mi resize measured' || fail "CPU-only step not resized"
echo "$r" | grep -q '^1@3/128Mi rollout' || fail "Infeasible resize not rolled out"
echo "$r" | grep -q '^2@0.5/128Mi rollout measured' || fail "worker-count change not rolled out"
grep -q 'event=kube.platform.resize_fallback.*variant=1@3/128Mi.*resize infeasible' "$OP_LOG" ||
    fail "no Infeasible fallback in the operator log"
grep -q 'event=kube.platform.rollout.*variant=2@0.5/128Mi.*worker count changes' "$OP_LOG" ||
    fail "no worker-count fallback in the operator log"
k get deployment web-sizeup >/dev/null 2>&1 && fail "clone left behind"
echo "  clone mode: resize, Infeasible and worker-count fallbacks"

# ---- 3. mode resize on a Burstable Deployment: a QoS class change is rolled out
deploy_fingerprint web template >"$E2E_W/w-before.json"
k annotate --overwrite deployment web sizeup.dev/mode=resize \
    "sizeup.dev/configs=1@0.25/128Mi 1@0.5/128Mi" sizeup.dev/sweep=r3 >/dev/null
wait_status web '^done$' 120
r=$(rows web)
printf '  %s\n' "${r//$'\n'/$'\n'  }"
echo "$r" | grep -q '^1@0.25/128Mi rollout measured' || fail "QoS change not rolled out"
echo "$r" | grep -q '^1@0.5/128Mi resize measured' || fail "second step not resized"
grep -q "event=kube.platform.rollout.*deployment=default/web.*QoS class would change (Burstable to Guaranteed)" \
    "$OP_LOG" || fail "no QoS fallback in the operator log"
k rollout status deployment/web --timeout=60s >/dev/null || fail "web not rolled back"
deploy_fingerprint web template >"$E2E_W/w-after.json"
cmp -s "$E2E_W/w-before.json" "$E2E_W/w-after.json" || fail "web's template not restored exactly"
echo "  QoS class change rolled out; template restored exactly"

# ---- 4. an older server refuses the memory-limit decrease: that step is rolled out
fakectl POST /fake/config '{"resizeForbidMemoryDecrease": true}' >/dev/null
k annotate --overwrite deployment gweb sizeup.dev/mode=clone \
    "sizeup.dev/configs=1@0.5/256Mi 1@0.5/128Mi" sizeup.dev/sweep=r4 >/dev/null
wait_status gweb '^done$' 120
fakectl POST /fake/config '{"resizeForbidMemoryDecrease": false}' >/dev/null
r=$(rows gweb)
printf '  %s\n' "${r//$'\n'/$'\n'  }"
echo "$r" | grep -q '^1@0.5/128Mi rollout measured' || fail "422 not rolled out"
grep -q 'event=kube.platform.resize_fallback.*variant=1@0.5/128Mi.*memory limits cannot be decreased' \
    "$OP_LOG" || fail "no 422 fallback in the operator log"
echo "  422 on a memory-limit decrease: rolled out"

# ---- 5. a memory limit below the app's usage: FAILED, and the sweep goes on
gapp hungry 500m 256Mi 100
k annotate deployment hungry sizeup.dev/profile=quick sizeup.dev/mode=resize \
    "sizeup.dev/configs=1@0.5/256Mi 1@0.5/64Mi 1@1/256Mi" sizeup.dev/sweep=r5 >/dev/null
wait_status hungry '^done$' 120
r=$(rows hungry)
printf '  %s\n' "${r//$'\n'/$'\n'  }"
echo "$r" | grep -q '^1@0.5/64Mi resize failed resize not applied by the kubelet: .*below its current usage' ||
    fail "a memory limit below usage is not a FAILED row with the kubelet's reason"
echo "$r" | grep -q '^1@1/256Mi resize measured' || fail "the sweep did not go on after the FAILED row"
echo "  memory limit below usage: FAILED with the kubelet's reason, sweep went on"

# ---- 6. kill -9 after a resize: the next operator resizes back and resumes
read -r pod uid < <(pod_of gweb)
k annotate --overwrite deployment gweb sizeup.dev/mode=resize \
    "sizeup.dev/configs=1@0.5/128Mi 1@0.75/128Mi 1@1/128Mi" sizeup.dev/sweep=r6 >/dev/null
until=$((SECONDS + 60))
while [ $SECONDS -lt $until ]; do
    c=$(cgroup_cpu "$pod")
    [ -n "$c" ] && [ "$c" != 300 ] && break
    sleep 0.1
done
[ "$(cgroup_cpu "$pod")" != 300 ] || fail "no resize to kill the operator over"
[ -n "$(ann gweb sizeup.dev/original-resources)" ] || fail "resources not saved before the resize"
kill -KILL "$OP_PID"
wait "$OP_PID" 2>/dev/null
OP_PID=
echo "  killed with pod $pod at $(cgroup_cpu "$pod")m"
op_start op2
wait_status gweb '^done$' 120
grep -q "event=kube.platform.resized_back pod=default/$pod" "$OP_LOG" ||
    fail "the next operator did not resize the pod back"
[ "$(pod_of gweb)" = "$pod $uid" ] || fail "pod replaced: $(pod_of gweb)"
for _ in $(seq 1 40); do [ "$(cgroup_cpu "$pod")" = 300 ] && break; sleep 0.25; done
[ "$(cgroup_cpu "$pod")" = 300 ] || fail "pod's CPU limit not put back: $(cgroup_cpu "$pod")m"
[ -z "$(ann gweb sizeup.dev/original-resources)" ] || fail "original-resources left behind"
echo "  kill -9: resized back by the next operator, resumed to done, pod $pod kept"
op_stop
echo "e2e resize: ok"
