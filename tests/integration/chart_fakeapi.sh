#!/usr/bin/env bash
# The plain-YAML install against the fake API server (tests/fakeapi), and the RBAC it grants,
# enforced by the fake's authorizer:
#   1. `kubectl apply -k manifests/` succeeds, creates every object, and is idempotent;
#   2. as the operator's ServiceAccount (a token the fake issues for
#      system:serviceaccount:sizeup:sizeup), every permission the operator needs is granted and
#      the things it must never do (Secrets, updates outside its verbs, Leases elsewhere or by
#      another name, RBAC objects) are refused with 403;
#   3. namespaced mode (`watchNamespaces`) grants the same in the listed namespace and nothing
#      elsewhere;
#   4. when this build has `sizeup operator`, it runs with the chart's own flags and the
#      ServiceAccount's kubeconfig, sweeps an annotated Deployment to `done`, and the fake logs
#      no 403 for it.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/policy/env.sh
. "$ROOT/tests/policy/env.sh"
need_helm
need_kubectl
need_pyyaml
[ -f "$ROOT/tests/fakeapi/fakeapi.py" ] || skip "the fake API server (tests/fakeapi) is not in this tree"
command -v openssl >/dev/null || skip "openssl is needed by the fake API server"
SIZEUP=${SIZEUP:-$ROOT/build/sizeup}

tmp=$(mktemp -d)
fake="$tmp/fake"
fake_pid="" op_pid=""
cleanup() {
    [ -n "$op_pid" ] && kill "$op_pid" 2>/dev/null && wait "$op_pid" 2>/dev/null
    if [ -n "$fake_pid" ]; then
        kill "$fake_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$fake_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$fake_pid" 2>/dev/null || true
        wait "$fake_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$fake"
python3 "$ROOT/tests/fakeapi/fakeapi.py" --dir "$fake" >"$tmp/fake.log" 2>&1 &
fake_pid=$!
for _ in $(seq 200); do [ -s "$fake/ready" ] && break; sleep 0.1; done
[ -s "$fake/ready" ] || { cat "$tmp/fake.log"; echo "the fake API server did not start"; exit 1; }
port=$(cat "$fake/ready")
admin=(kubectl --kubeconfig "$fake/kubeconfig" --request-timeout=20s)
echo "fake API server on 127.0.0.1:$port"

# --- 1. the plain-YAML install.
if "${admin[@]}" apply -k "$ROOT/manifests" >"$tmp/apply.out" 2>&1; then
    PASSED=$((PASSED + 1)); echo "ok   kubectl apply -k manifests/:"; sed 's/^/     /' "$tmp/apply.out"
else
    FAILED=$((FAILED + 1)); echo "FAIL kubectl apply -k manifests/:"; sed 's/^/     /' "$tmp/apply.out"
fi
"${admin[@]}" get -n sizeup deployment/sizeup serviceaccount/sizeup service/sizeup \
    role/sizeup-leader-election rolebinding/sizeup-leader-election \
    serviceaccount/sizeup-generator role/sizeup-generators rolebinding/sizeup-generators \
    -o yaml >"$tmp/got-ns.yaml"
"${admin[@]}" get clusterrole/sizeup clusterrolebinding/sizeup namespace/sizeup -o yaml \
    >"$tmp/got-cluster.yaml"
kubectl kustomize "$ROOT/manifests" >"$tmp/want.yaml"
expect "every object of manifests/ is in the fake as applied" "$tmp/want.yaml" "$(cat <<'PY'
(lambda got: all(any(g["kind"] == o["kind"] and g["metadata"]["name"] == o["metadata"]["name"]
     for g in got) for o in objs))(
    [i for f in (sys.argv[1].replace("want.yaml", "got-ns.yaml"),
                 sys.argv[1].replace("want.yaml", "got-cluster.yaml"))
     for i in yaml.safe_load(open(f))["items"]])
PY
)"
expect "the Deployment in the fake has the rendered args and security context" "$tmp/want.yaml" "$(cat <<'PY'
(lambda d: d["spec"]["template"]["spec"]["containers"][0]["args"] == args
   and d["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == 65532)(
    [i for i in yaml.safe_load(open(sys.argv[1].replace("want.yaml", "got-ns.yaml")))["items"]
     if i["kind"] == "Deployment"][0])
PY
)"
if "${admin[@]}" apply -k "$ROOT/manifests" >"$tmp/apply2.out" 2>&1 &&
    ! grep -qvE ' unchanged$' "$tmp/apply2.out"; then
    PASSED=$((PASSED + 1)); echo "ok   a second kubectl apply -k manifests/ changes nothing"
else
    FAILED=$((FAILED + 1)); echo "FAIL a second apply was not a no-op:"; sed 's/^/     /' "$tmp/apply2.out"
fi

# The namespace enforces the restricted Pod Security level, and so does the fake's admission:
# the operator's pod is created (its ReplicaSet has no FailedCreate).
admitted=""
for _ in $(seq 100); do
    admitted=$("${admin[@]}" get pods -n sizeup -o name 2>/dev/null | head -n 1)
    [ -n "$admitted" ] && break
    sleep 0.1
done
refused=$("${admin[@]}" get deployment -n sizeup sizeup \
    -o jsonpath='{.status.conditions[?(@.type=="ReplicaFailure")].message}' 2>&1)
if [ -n "$admitted" ] && [ -z "$refused" ] &&
    [ "$("${admin[@]}" get namespace sizeup \
        -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}')" = restricted ]; then
    PASSED=$((PASSED + 1)); echo "ok   the operator's pod passes restricted Pod Security admission ($admitted)"
else
    FAILED=$((FAILED + 1)); echo "FAIL the operator's pod was not admitted: ${refused:-no pod}"
fi

# --- 2. the operator's permissions, as its ServiceAccount.
sa_kubeconfig() { # USER OUT: a kubeconfig for USER with a token the fake issues
    local tok
    tok=$(curl -sf --cacert "$fake/ca.crt" -H "Authorization: Bearer $(cat "$fake/control-token")" \
        -d "{\"user\": \"$1\"}" "https://127.0.0.1:$port/fake/tokens" |
        "$PY" -c 'import json, sys; print(json.load(sys.stdin)["token"])')
    "$PY" - "$fake/kubeconfig" "$2" "$tok" <<'PY'
import sys, yaml
k = yaml.safe_load(open(sys.argv[1]))
k["users"] = [{"name": "admin", "user": {"token": sys.argv[3]}}]
k["contexts"] = [c for c in k["contexts"] if c["name"] == k["current-context"]]
open(sys.argv[2], "w").write(yaml.safe_dump(k))
PY
    chmod 600 "$2"
    printf '%s' "$tok" >"$2.token"
}
http_code() { # TOKEN-FILE PATH: the HTTP status the fake answers a GET of PATH with
    curl -s -o /dev/null -w '%{http_code}' --cacert "$fake/ca.crt" \
        -H "Authorization: Bearer $(cat "$1")" "https://127.0.0.1:$port$2"
}
sa_kubeconfig system:serviceaccount:sizeup:sizeup "$tmp/sa.kubeconfig"
sa=(kubectl --kubeconfig "$tmp/sa.kubeconfig" --request-timeout=20s)

can() { # DESCRIPTION kubectl-args...: allowed
    local desc=$1 out
    shift
    if out=$("${sa[@]}" "$@" 2>&1); then
        PASSED=$((PASSED + 1)); echo "ok   allowed: $desc"
    else
        FAILED=$((FAILED + 1)); echo "FAIL should be allowed: $desc"; sed 's/^/     /' <<<"$out" | head -n 3
    fi
}
cannot() { # DESCRIPTION kubectl-args...: refused with 403 Forbidden
    local desc=$1 out
    shift
    if out=$("${sa[@]}" "$@" 2>&1); then
        FAILED=$((FAILED + 1)); echo "FAIL should be forbidden, was allowed: $desc"
    elif grep -qi 'forbidden' <<<"$out"; then
        PASSED=$((PASSED + 1)); echo "ok   forbidden: $desc"
    else
        FAILED=$((FAILED + 1)); echo "FAIL failed, but not with 403: $desc"; sed 's/^/     /' <<<"$out" | head -n 3
    fi
}

cat >"$tmp/app.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels: {app: app}
  template:
    metadata:
      labels: {app: app}
    spec:
      containers:
        - name: web
          image: example/web:1
          ports: [{containerPort: 8080}]
          env: [{name: WORKERS, value: "1"}]
          resources:
            limits: {cpu: "1", memory: 256Mi}
EOF
# The fake speaks JSON only, so objects are created from YAML (kubectl create -f), not with
# kubectl's protobuf generators (kubectl create secret/configmap/namespace ...).
obj() { # NAME YAML: writes $tmp/NAME.yaml
    printf '%s\n' "$2" >"$tmp/$1.yaml"
    echo "$tmp/$1.yaml"
}
"${admin[@]}" apply -f "$tmp/app.yaml" >/dev/null
"${admin[@]}" create -f "$(obj secret 'apiVersion: v1
kind: Secret
metadata: {name: app-secret, namespace: default}
stringData: {k: v}')" >/dev/null

can "list Deployments in every namespace" get deployments -A
can "watch Deployments" get deployments -n default --watch-only --request-timeout=1s
can "list Pods and Services" get pods,services -A
can "read ConfigMaps" get configmaps -n default
can "create a ConfigMap (results)" create -f "$(obj cm 'apiVersion: v1
kind: ConfigMap
metadata: {name: rbac-check, namespace: default}
data: {results.md: x}')"
can "update a ConfigMap" patch configmap rbac-check -n default -p '{"data":{"values.yaml":"a: 1"}}'
can "patch a Deployment (status annotation)" annotate deployment app -n default sizeup.dev/status=done --overwrite
sed 's/name: app$/name: app-sizeup/' "$tmp/app.yaml" >"$tmp/clone.yaml"
"${sa[@]}" get deployment app -n default -o yaml >"$tmp/app-cur.yaml"
can "update (PUT) a Deployment (in-place save and restore)" replace -f "$tmp/app-cur.yaml"
can "create the clone Deployment" create -f "$tmp/clone.yaml"
can "delete the clone Deployment" delete deployment app-sizeup -n default --wait=false
cat >"$tmp/event.yaml" <<'EOF'
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: app.sizeup.1, namespace: default}
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: sizeup.dev/operator
reportingInstance: sizeup-0
action: Sweep
reason: SweepStarted
type: Normal
note: sweep started
regarding: {apiVersion: apps/v1, kind: Deployment, name: app, namespace: default}
EOF
can "create an events.k8s.io Event" create -f "$tmp/event.yaml"
cat >"$tmp/lease.yaml" <<'EOF'
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: sizeup-leader, namespace: sizeup}
spec: {holderIdentity: sizeup-0, leaseDurationSeconds: 15}
EOF
can "create its Lease in its namespace" create -f "$tmp/lease.yaml"
can "read its Lease" get lease sizeup-leader -n sizeup
"${sa[@]}" get lease sizeup-leader -n sizeup -o yaml >"$tmp/lease-cur.yaml"
sed -i 's/holderIdentity: sizeup-0/holderIdentity: sizeup-1/' "$tmp/lease-cur.yaml"
can "update (renew) its Lease" replace -f "$tmp/lease-cur.yaml"

cat >"$tmp/genjob.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: sizeup-load-check, namespace: sizeup}
spec:
  completionMode: Indexed
  completions: 1
  template:
    spec:
      restartPolicy: Never
      automountServiceAccountToken: false
      containers: [{name: load, image: none/none:1}]
EOF
can "create a generator Job in its namespace" create -f "$tmp/genjob.yaml"
can "list Jobs in its namespace (leftovers)" get jobs -n sizeup
can "read its generator pods (IPs)" get pods -n sizeup
cannot "patch a generator Job" label job sizeup-load-check -n sizeup x=y
can "delete a generator Job" delete job sizeup-load-check -n sizeup --wait=false
sed 's/namespace: sizeup/namespace: default/' "$tmp/genjob.yaml" >"$tmp/genjob-other.yaml"

# Nodes: the fake serves the (here empty) node list: 200 for the operator, 403 for a
# ServiceAccount without the rule.
sa_kubeconfig system:serviceaccount:default:default "$tmp/nobody.kubeconfig"
code=$(http_code "$tmp/sa.kubeconfig.token" /api/v1/nodes)
nobody=$(http_code "$tmp/nobody.kubeconfig.token" /api/v1/nodes)
if [ "$code" = 200 ] && [ "$nobody" = 403 ]; then
    PASSED=$((PASSED + 1)); echo "ok   allowed: list nodes (403 for a ServiceAccount without the rule)"
else
    FAILED=$((FAILED + 1)); echo "FAIL list nodes: $code for the operator, $nobody for another ServiceAccount (want 200, 403)"
fi
cannot "read Secrets" get secret app-secret -n default
cannot "list Secrets" get secrets -A
can "delete a ConfigMap (a saved pod template's, once restored)" delete configmap rbac-check -n default
cannot "delete Pods" delete pods -n default --all
cannot "update a Pod" label pods -n default --all x=y
pod=
for _ in $(seq 1 50); do
    pod=$("${admin[@]}" get pods -n default -l app=app -o jsonpath='{.items[0].metadata.name}')
    [ -n "$pod" ] && break
    sleep 0.2
done
# The operator only PATCHes pods/resize (kubectl patch would GET it first, which it may not).
resize_body='{"spec":{"containers":[{"name":"web","resources":{"limits":{"cpu":"600m","memory":"256Mi"},"requests":{"cpu":"600m","memory":"256Mi"}}}]}}'
code=$(curl -s -o "$tmp/resize.out" -w '%{http_code}' --cacert "$fake/ca.crt" -X PATCH \
    -H "Authorization: Bearer $(cat "$tmp/sa.kubeconfig.token")" \
    -H 'Content-Type: application/strategic-merge-patch+json' --data "$resize_body" \
    "https://127.0.0.1:$port/api/v1/namespaces/default/pods/$pod/resize")
if [ "$code" = 200 ]; then
    PASSED=$((PASSED + 1)); echo "ok   allowed: resize a Pod (PATCH pods/resize)"
else
    FAILED=$((FAILED + 1)); echo "FAIL PATCH pods/resize answered $code: $(head -c 300 "$tmp/resize.out")"
fi
cannot "patch a Pod's spec outside resize" patch pod "$pod" -n default --type merge \
    -p '{"spec":{"activeDeadlineSeconds":5}}'
cannot "create a Service" create -f "$(obj svc 'apiVersion: v1
kind: Service
metadata: {name: evil, namespace: default}
spec: {ports: [{port: 80}]}')"
sed 's/namespace: sizeup/namespace: default/' "$tmp/lease.yaml" >"$tmp/lease-other-ns.yaml"
cannot "create a Lease outside its namespace" create -f "$tmp/lease-other-ns.yaml"
sed 's/name: sizeup-leader/name: someone-else/' "$tmp/lease.yaml" >"$tmp/lease-other.yaml"
"${admin[@]}" create -f "$tmp/lease-other.yaml" >/dev/null
cannot "read another Lease in its namespace" get lease someone-else -n sizeup
cannot "delete its Lease" delete lease sizeup-leader -n sizeup
cannot "read Roles" get roles -A
cannot "create a ClusterRoleBinding" create -f "$(obj crb 'apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: evil}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: sizeup}
subjects: [{kind: User, name: x}]')"
cannot "read ServiceAccounts" get serviceaccounts -n sizeup
cannot "create a Job outside its namespace" create -f "$tmp/genjob-other.yaml"
cannot "create Pods in its namespace" run evil -n sizeup --image=none/none:1 --restart=Never

# --- 3. namespaced mode: the same rules in "shop" only.
"${admin[@]}" create -f "$(obj shop 'apiVersion: v1
kind: Namespace
metadata: {name: shop}')" >/dev/null
"$HELM" template scoped "$ROOT/charts/sizeup" --namespace sizeup --set 'watchNamespaces={shop}' \
    >"$tmp/scoped.yaml"
if "${admin[@]}" apply -f "$tmp/scoped.yaml" >"$tmp/apply-scoped.out" 2>&1; then
    PASSED=$((PASSED + 1)); echo "ok   helm template --set watchNamespaces={shop} | kubectl apply -f -"
else
    FAILED=$((FAILED + 1)); echo "FAIL applying the namespaced render:"; sed 's/^/     /' "$tmp/apply-scoped.out"
fi
sa_kubeconfig system:serviceaccount:sizeup:scoped-sizeup "$tmp/sa.kubeconfig"
can "(namespaced) list Deployments in shop" get deployments -n shop
can "(namespaced) create a ConfigMap in shop" create -f "$(obj cm-shop 'apiVersion: v1
kind: ConfigMap
metadata: {name: x-sizing, namespace: shop}')"
cannot "(namespaced) list Deployments in default" get deployments -n default
cannot "(namespaced) list Deployments in every namespace" get deployments -A
# rbac.nodes: the DaemonSets' templates need list on daemonsets cluster-wide, and nothing more;
# no pod outside the watched namespace is readable.
can "(namespaced) list DaemonSets in every namespace (their templates' requests)" get daemonsets -A
cannot "(namespaced) list pods in every namespace" get pods -A
cannot "(namespaced) get a pod outside shop" get pod anything -n default
cannot "(namespaced) watch pods outside shop" get pods -n default --watch --request-timeout=2s
cannot "(namespaced) create a ConfigMap in default" create -f "$(obj cm-default 'apiVersion: v1
kind: ConfigMap
metadata: {name: y-sizing, namespace: default}')"

# --- 4. the operator with the chart's flags, as its ServiceAccount.
[ -x "$SIZEUP" ] || { echo "FAIL no sizeup binary at $SIZEUP (make unit-bins)"; exit 1; }
{
    # sweep_as RENDER USER NS: runs the operator with the args of the Deployment in RENDER, as
    # ServiceAccount USER, asks for a one-variant sweep of app in NS with a short profile, and
    # checks the sweep ends "done" and that the fake refused none of the operator's requests.
    sweep_as() {
        local render=$1 user=$2 ns=$3 a status total denied mark
        sa_kubeconfig "system:serviceaccount:sizeup:$user" "$tmp/op.kubeconfig"
        mapfile -t chart_args < <("$PY" -c 'import sys, yaml
d = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o and o["kind"] == "Deployment"][0]
for a in d["spec"]["template"]["spec"]["containers"][0]["args"]: print(a)' "$render")
        # The chart's args start with the subcommand; the admin port moves off 8081 so that
        # parallel tests cannot collide.
        args=()
        for a in "${chart_args[@]}"; do [ "$a" = ":8081" ] && a="127.0.0.1:0"; args+=("$a"); done
        "${admin[@]}" apply -f - >/dev/null <<EOT
apiVersion: v1
kind: ConfigMap
metadata: {name: quick, namespace: $ns}
data:
  profile.yaml: |
    users: 4
    duration: 2s
    warmup: 1s
    search: { mode: fixed }
EOT
        sed "s/namespace: default/namespace: $ns/" "$tmp/app.yaml" | "${admin[@]}" apply -f - >/dev/null
        # Section 2 wrote a status by hand: clear it before asking.
        "${admin[@]}" annotate deployment app -n "$ns" sizeup.dev/status- >/dev/null
        mark=$(wc -l <"$fake/requests.log")
        echo "running: sizeup ${args[*]} --kubeconfig <$user's token>"
        "$SIZEUP" "${args[@]}" --kubeconfig "$tmp/op.kubeconfig" >"$tmp/operator.log" 2>&1 &
        op_pid=$!
        "${admin[@]}" annotate deployment app -n "$ns" --overwrite sizeup.dev/sweep="$ns-1" \
            sizeup.dev/configs="1@0.5/128Mi" sizeup.dev/profile=quick >/dev/null
        status=""
        for _ in $(seq 240); do
            status=$("${admin[@]}" get deploy app -n "$ns" \
                -o jsonpath='{.metadata.annotations.sizeup\.dev/status}' 2>/dev/null || true)
            case $status in "done" | failed*) break ;; esac
            kill -0 "$op_pid" 2>/dev/null || break
            sleep 0.5
        done
        if [ "$status" = "done" ]; then
            PASSED=$((PASSED + 1)); echo "ok   as $user, the operator swept $ns/app: status $status"
        else
            FAILED=$((FAILED + 1)); echo "FAIL as $user, the sweep of $ns/app ended '$status'"
            tail -n 30 "$tmp/operator.log" | sed 's/^/     /'
        fi
        kill "$op_pid" 2>/dev/null || true
        wait "$op_pid" 2>/dev/null || true
        op_pid=""
        # Only the operator's own requests: the ones after it started, by its ServiceAccount.
        tail -n +"$((mark + 1))" "$fake/requests.log" |
            grep -F "\"user\":\"system:serviceaccount:sizeup:$user\"" >"$tmp/op-requests.log" || true
        total=$(wc -l <"$tmp/op-requests.log")
        denied=$(grep -c '"code":403' "$tmp/op-requests.log" || true)
        if [ "$total" -gt 0 ] && [ "$denied" -eq 0 ]; then
            PASSED=$((PASSED + 1)); echo "ok   $total API requests by the operator as $user, none refused (403)"
        else
            FAILED=$((FAILED + 1)); echo "FAIL the operator as $user made $total requests, $denied refused (403):"
            grep '"code":403' "$tmp/op-requests.log" | head -n 10 | sed 's/^/     /'
        fi
    }
    sweep_as "$tmp/want.yaml" sizeup default
    # Namespaced mode: the flags (--namespace shop) and Roles of the "scoped" release.
    sweep_as "$tmp/scoped.yaml" scoped-sizeup shop

    # Leader election with the flags the chart adds for replicaCount > 1: the operator must take
    # the Lease the Role names, renew it, and release it on SIGTERM, with no 403.
    "$HELM" template sizeup "$ROOT/charts/sizeup" --namespace sizeup --set replicaCount=2 \
        >"$tmp/leader.yaml"
    mapfile -t chart_args < <("$PY" -c 'import sys, yaml
d = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o and o["kind"] == "Deployment"][0]
for a in d["spec"]["template"]["spec"]["containers"][0]["args"]: print(a)' "$tmp/leader.yaml")
    args=()
    for a in "${chart_args[@]}"; do [ "$a" = ":8081" ] && a="127.0.0.1:0"; args+=("$a"); done
    "${admin[@]}" delete lease sizeup-leader -n sizeup >/dev/null
    sa_kubeconfig system:serviceaccount:sizeup:sizeup "$tmp/op.kubeconfig"
    mark=$(wc -l <"$fake/requests.log")
    echo "running: sizeup ${args[*]} --kubeconfig <sizeup's token>"
    POD_NAME=sizeup-test-0 "$SIZEUP" "${args[@]}" --kubeconfig "$tmp/op.kubeconfig" \
        >"$tmp/operator-leader.log" 2>&1 &
    op_pid=$!
    holder=""
    for _ in $(seq 100); do
        holder=$("${admin[@]}" get lease sizeup-leader -n sizeup \
            -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true)
        [ -n "$holder" ] && break
        sleep 0.2
    done
    if [ -n "$holder" ]; then
        PASSED=$((PASSED + 1)); echo "ok   --leader-elect: the operator holds Lease sizeup/sizeup-leader as '$holder'"
    else
        FAILED=$((FAILED + 1)); echo "FAIL --leader-elect: the operator did not take the Lease"
        tail -n 20 "$tmp/operator-leader.log" | sed 's/^/     /'
    fi
    kill -TERM "$op_pid" 2>/dev/null || true
    rc=0
    wait "$op_pid" || rc=$?
    op_pid=""
    after=$("${admin[@]}" get lease sizeup-leader -n sizeup -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true)
    if [ "$rc" -eq 0 ] && [ -z "$after" ]; then
        PASSED=$((PASSED + 1)); echo "ok   SIGTERM: exit 0 and the Lease released"
    else
        FAILED=$((FAILED + 1)); echo "FAIL SIGTERM: exit $rc, Lease holder now '$after'"
    fi
    tail -n +"$((mark + 1))" "$fake/requests.log" |
        grep -F '"user":"system:serviceaccount:sizeup:sizeup"' >"$tmp/op-requests.log" || true
    total=$(wc -l <"$tmp/op-requests.log")
    leases=$(grep -c '"resource":"leases"' "$tmp/op-requests.log" || true)
    denied=$(grep -c '"code":403' "$tmp/op-requests.log" || true)
    if [ "$leases" -gt 0 ] && [ "$denied" -eq 0 ]; then
        PASSED=$((PASSED + 1)); echo "ok   $total requests ($leases on the Lease) with leader election, none refused (403)"
    else
        FAILED=$((FAILED + 1)); echo "FAIL leader election: $leases Lease requests, $denied refused (403):"
        grep '"code":403' "$tmp/op-requests.log" | head -n 10 | sed 's/^/     /'
    fi
}

finish
