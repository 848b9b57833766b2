#!/usr/bin/env bash
# A real Kubernetes control plane on this machine, for tests: etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler of the release pinned in go/go.mod (built by
# build.sh), metrics-server, and one process kubelet (kubelet/kubelet.py) per node that runs pods
# as local processes under cgroup limits, each in its own network namespace.
#
#   kcluster.sh up DIR [--images MAP.json] [--nodes N] [--node-cpu C] [--node-memory M] [--no-kubelet]
#   kcluster.sh down DIR
#
# `up` builds what is missing, writes certificates and kubeconfigs under DIR, starts everything,
# and writes DIR/ready once the API server is ready and every node is Ready. DIR/env, sourced,
# sets KUBECONFIG (cluster-admin) and puts the release's kubectl first on PATH. Logs, the audit
# log included (DIR/logs/audit.log, one JSON event a line), are in DIR/logs.
# `down` stops everything (the kubelets first, so that they stop their pods) and removes every
# network namespace, link, route and cgroup the cluster made.
#
# The configuration is a minimal secure one: TLS on every connection (etcd included), client
# certificate users, ServiceAccount tokens signed with the cluster's key, Node and RBAC
# authorization, the default admission plugins plus NodeRestriction, API priority and fairness,
# an audit log. Only one cluster runs on a machine at a time (the network names are fixed).
#
# Network: the API server, the kubelets and metrics-server listen on 10.210.255.1, this machine's
# end of a veth pair into the network namespace skc-router; node N's pods get 10.210.N.0/24 on a
# bridge in skc-router. All of it is this machine's: nothing leaves it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

HOST_IP=10.210.255.1
ROUTER_IP=10.210.255.2
POD_NET=10.210.0.0/16
SERVICE_NET=10.211.0.0/16
SERVICE_IP=10.211.0.1 # the kubernetes Service: the first address of SERVICE_NET
API_PORT=6443
ETCD_PORT=23790
ETCD_PEER_PORT=23800
METRICS_PORT=4443
ROUTER=skc-router
OWNER=/run/sizeup-kcluster.owner
ISSUER=https://kubernetes.default.svc.cluster.local

say() { echo "kcluster: $*" >&2; }
die() {
    echo "kcluster: $*" >&2
    exit 1
}

usage() {
    echo "usage: $0 up DIR [--images MAP.json] [--nodes N] [--node-cpu C] [--node-memory M] [--no-kubelet]" >&2
    echo "       $0 down DIR" >&2
    exit 2
}

# ---- certificates ---------------------------------------------------------------------------

# cert NAME CN ORG KIND [SAN]: DIR/pki/NAME.{crt,key}, an EC P-256 key signed by the cluster CA
# (CA=ca or front-proxy-ca in the environment); KIND client, server or both.
cert() {
    local name=$1 cn=$2 org=$3 kind=$4 san=${5:-} ca=${CA:-ca} ext=$pki/$1.ext usage
    case "$kind" in
        client) usage=clientAuth ;;
        server) usage=serverAuth ;;
        *) usage=serverAuth,clientAuth ;;
    esac
    {
        echo "basicConstraints=critical,CA:FALSE"
        echo "keyUsage=critical,digitalSignature,keyEncipherment"
        echo "extendedKeyUsage=$usage"
        [ -n "$san" ] && echo "subjectAltName=$san"
    } >"$ext"
    local subj="/CN=$cn"
    [ -n "$org" ] && subj="/O=$org$subj"
    openssl ecparam -name prime256v1 -genkey -noout -out "$pki/$name.key" 2>/dev/null
    openssl req -new -key "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" 2>/dev/null
    openssl x509 -req -in "$pki/$name.csr" -CA "$pki/$ca.crt" -CAkey "$pki/$ca.key" \
        -CAcreateserial -days 30 -sha256 -extfile "$ext" -out "$pki/$name.crt" 2>/dev/null
    rm -f "$pki/$name.csr" "$ext"
    chmod 600 "$pki/$name.key"
}

ca() { # NAME CN
    openssl ecparam -name prime256v1 -genkey -noout -out "$pki/$1.key" 2>/dev/null
    openssl req -x509 -new -key "$pki/$1.key" -subj "/CN=$2" -days 30 -sha256 \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
        -out "$pki/$1.crt" 2>/dev/null
    chmod 600 "$pki/$1.key"
}

# kubeconfig FILE USER_CERT_NAME: a kubeconfig for the user of DIR/pki/NAME.{crt,key}.
kubeconfig() {
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kcluster
  cluster:
    server: https://$HOST_IP:$API_PORT
    certificate-authority: $pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $pki/$2.crt
    client-key: $pki/$2.key
contexts:
- name: kcluster
  context: {cluster: kcluster, user: $2, namespace: default}
current-context: kcluster
EOF
    chmod 600 "$1"
}

make_pki() {
    mkdir -p "$pki"
    ca ca kcluster-ca
    ca front-proxy-ca kcluster-front-proxy-ca
    local api_san="IP:$HOST_IP,IP:$SERVICE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default"
    api_san="$api_san,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
    cert apiserver kube-apiserver "" server "$api_san"
    cert etcd etcd "" both "IP:127.0.0.1,DNS:localhost"
    cert apiserver-etcd-client kube-apiserver-etcd-client "" client
    cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters client
    cert admin kcluster-admin system:masters client
    cert controller-manager system:kube-controller-manager "" client
    cert scheduler system:kube-scheduler "" client
    cert metrics-server system:metrics-server "" both "IP:$HOST_IP,DNS:metrics-server.kube-system.svc"
    CA=front-proxy-ca cert front-proxy-client front-proxy-client "" client
    local n
    for n in $(seq 1 "$nodes"); do
        cert "node-$n" "system:node:kc-node-$n" system:nodes client
        cert "kubelet-$n" "kc-node-$n" "" server "IP:$HOST_IP,DNS:kc-node-$n"
    done
    openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
    openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
    chmod 600 "$pki/sa.key"
    kubeconfig "$dir/kubeconfig" admin
    kubeconfig "$dir/controller-manager.kubeconfig" controller-manager
    kubeconfig "$dir/scheduler.kubeconfig" scheduler
    kubeconfig "$dir/metrics-server.kubeconfig" metrics-server
    for n in $(seq 1 "$nodes"); do kubeconfig "$dir/node-$n.kubeconfig" "node-$n"; done
}

# ---- processes ------------------------------------------------------------------------------

# start NAME COMMAND...: runs COMMAND in its own session, output to DIR/logs/NAME.log, its pid
# in DIR/pids/NAME.
start() {
    local name=$1
    shift
    setsid "$@" >"$dir/logs/$name.log" 2>&1 </dev/null &
    echo $! >"$dir/pids/$name"
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop PIDFILE...: SIGTERM to each process group, up to 15 s, then SIGKILL.
stop() {
    local f pid i
    for f in "$@"; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    done
    for i in $(seq 1 150); do
        local any=0
        for f in "$@"; do alive "$f" && any=1; done
        [ $any -eq 0 ] && break
        sleep 0.1
    done
    for f in "$@"; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        if kill -0 "$pid" 2>/dev/null; then
            say "$(basename "$f") did not stop within 15 s: SIGKILL"
            kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        fi
        rm -f "$f"
    done
}

# ---- network --------------------------------------------------------------------------------

net_up() {
    if ip route show | grep -q "^10\.210\." && ! ip link show skc0 >/dev/null 2>&1; then
        die "this machine already routes 10.210.0.0/16 (the test cluster's pod network): $(ip route show | grep '^10\.210\.' | head -1)"
    fi
    ip netns add "$ROUTER"
    ip -n "$ROUTER" link set lo up
    ip netns exec "$ROUTER" sysctl -qw net.ipv4.ip_forward=1
    ip link add skc0 type veth peer name skc1
    ip link set skc1 netns "$ROUTER"
    ip addr add "$HOST_IP/30" dev skc0
    ip link set skc0 up
    ip -n "$ROUTER" addr add "$ROUTER_IP/30" dev skc1
    ip -n "$ROUTER" link set skc1 up
    ip -n "$ROUTER" route add default via "$HOST_IP"
    ip route add "$POD_NET" via "$ROUTER_IP" dev skc0
    local n
    for n in $(seq 1 "$nodes"); do
        ip -n "$ROUTER" link add "skcbr$n" type bridge
        ip -n "$ROUTER" addr add "10.210.$n.1/24" dev "skcbr$n"
        ip -n "$ROUTER" link set "skcbr$n" up
    done
}

net_down() {
    local ns
    for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^skc-p-/ {print $1}'); do
        ip netns del "$ns" 2>/dev/null || true
    done
    ip route del "$POD_NET" 2>/dev/null || true
    ip link del skc0 2>/dev/null || true
    ip netns del "$ROUTER" 2>/dev/null || true
}

# ---- up -------------------------------------------------------------------------------------

wait_for() { # SECONDS WHAT COMMAND...: retries COMMAND every 0.25 s
    local secs=$1 what=$2 i
    shift 2
    for i in $(seq 1 $((secs * 4))); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.25
    done
    die "$what not ready within $secs s (logs in $dir/logs)"
}

up() {
    local t0=$SECONDS
    [ "$(id -u)" -eq 0 ] || die "up needs root (network namespaces, cgroups and bridges for the pods)"
    local t
    for t in openssl ip python3 setsid curl; do
        command -v "$t" >/dev/null || die "$t is not installed"
    done
    if [ -f "$OWNER" ]; then
        local other
        other=$(cat "$OWNER")
        if [ "$other" != "$dir" ] && alive "$other/pids/kube-apiserver"; then
            die "a test cluster already runs on this machine ($other); stop it with: $0 down $other"
        fi
        say "removing what a stopped cluster left ($other)"
        down_dir "$other" || true
    fi
    [ -e "$dir/ready" ] && die "$dir holds a running cluster (down it first)"
    bin=$("$here/build.sh" --print-bin)
    # A cluster starts empty: nothing of an earlier one in DIR is kept.
    rm -rf "$dir/etcd" "$pki" "$dir/logs" "$dir/pids" "$dir"/kubelet-* "$dir/env"
    mkdir -p "$dir/logs" "$dir/pids" "$dir/etcd"
    chmod 700 "$dir/etcd"
    echo "$dir" >"$OWNER"
    make_pki
    net_up

    # The audit log records every request's metadata: who asked for what and the answer's code.
    cat >"$dir/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  nonResourceURLs: [/healthz*, /readyz*, /livez*, /version]
- level: Metadata
EOF

    start etcd "$bin/etcd" --name kc --data-dir "$dir/etcd" \
        --listen-client-urls "https://127.0.0.1:$ETCD_PORT" \
        --advertise-client-urls "https://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls "https://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-advertise-peer-urls "https://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster "kc=https://127.0.0.1:$ETCD_PEER_PORT" \
        --cert-file "$pki/etcd.crt" --key-file "$pki/etcd.key" \
        --trusted-ca-file "$pki/ca.crt" --client-cert-auth \
        --peer-cert-file "$pki/etcd.crt" --peer-key-file "$pki/etcd.key" \
        --peer-trusted-ca-file "$pki/ca.crt" --peer-client-cert-auth \
        --listen-metrics-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
        --unsafe-no-fsync --log-level warn
    wait_for 30 etcd curl -sf "http://127.0.0.1:$((ETCD_PORT + 1))/health"

    start kube-apiserver "$bin/kube-apiserver" \
        --advertise-address "$HOST_IP" --bind-address "$HOST_IP" --secure-port "$API_PORT" \
        --etcd-servers "https://127.0.0.1:$ETCD_PORT" --etcd-cafile "$pki/ca.crt" \
        --etcd-certfile "$pki/apiserver-etcd-client.crt" --etcd-keyfile "$pki/apiserver-etcd-client.key" \
        --client-ca-file "$pki/ca.crt" \
        --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
        --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
        --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
        --kubelet-certificate-authority "$pki/ca.crt" \
        --kubelet-preferred-address-types InternalIP \
        --service-account-issuer "$ISSUER" --api-audiences "$ISSUER" \
        --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
        --service-cluster-ip-range "$SERVICE_NET" \
        --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
        --anonymous-auth=false --profiling=false --allow-privileged=true \
        --requestheader-client-ca-file "$pki/front-proxy-ca.crt" \
        --requestheader-allowed-names front-proxy-client \
        --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
        --requestheader-extra-headers-prefix X-Remote-Extra- \
        --proxy-client-cert-file "$pki/front-proxy-client.crt" \
        --proxy-client-key-file "$pki/front-proxy-client.key" \
        --enable-aggregator-routing=true \
        --audit-policy-file "$dir/audit-policy.yaml" --audit-log-path "$dir/logs/audit.log" \
        --audit-log-format json --audit-log-maxsize 200 --audit-log-maxbackup 1
    export KUBECONFIG=$dir/kubeconfig
    local k="$bin/kubectl --kubeconfig $dir/kubeconfig"
    wait_for 90 kube-apiserver $k get --raw /readyz

    local ctrls=deployment-controller,replicaset-controller,job-controller
    ctrls=$ctrls,ttl-after-finished-controller,garbage-collector-controller
    ctrls=$ctrls,pod-garbage-collector-controller,namespace-controller
    ctrls=$ctrls,serviceaccount-controller,serviceaccount-token-controller
    ctrls=$ctrls,resourcequota-controller,endpointslice-controller,endpoints-controller
    ctrls=$ctrls,disruption-controller,horizontal-pod-autoscaler-controller
    ctrls=$ctrls,node-lifecycle-controller,taint-eviction-controller
    ctrls=$ctrls,clusterrole-aggregation-controller,root-ca-certificate-publisher-controller
    ctrls=$ctrls,service-cidr-controller
    start kube-controller-manager "$bin/kube-controller-manager" \
        --kubeconfig "$dir/controller-manager.kubeconfig" \
        --authentication-kubeconfig "$dir/controller-manager.kubeconfig" \
        --authorization-kubeconfig "$dir/controller-manager.kubeconfig" \
        --bind-address 127.0.0.1 --secure-port 10257 --leader-elect=false \
        --use-service-account-credentials \
        --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
        --client-ca-file "$pki/ca.crt" \
        --controllers "$ctrls" --concurrent-deployment-syncs 2 \
        --horizontal-pod-autoscaler-sync-period 5s --profiling=false
    start kube-scheduler "$bin/kube-scheduler" \
        --kubeconfig "$dir/scheduler.kubeconfig" \
        --authentication-kubeconfig "$dir/scheduler.kubeconfig" \
        --authorization-kubeconfig "$dir/scheduler.kubeconfig" \
        --bind-address 127.0.0.1 --secure-port 10259 --leader-elect=false --profiling=false

    wait_for 30 "the kube-system namespace" $k get namespace kube-system
    metrics_server_objects "$k"
    start metrics-server "$bin/metrics-server" \
        --kubeconfig "$dir/metrics-server.kubeconfig" \
        --authentication-kubeconfig "$dir/metrics-server.kubeconfig" \
        --authorization-kubeconfig "$dir/metrics-server.kubeconfig" \
        --bind-address "$HOST_IP" --secure-port "$METRICS_PORT" \
        --tls-cert-file "$pki/metrics-server.crt" --tls-private-key-file "$pki/metrics-server.key" \
        --client-ca-file "$pki/ca.crt" --requestheader-client-ca-file "$pki/front-proxy-ca.crt" \
        --kubelet-certificate-authority "$pki/ca.crt" \
        --kubelet-client-certificate "$pki/metrics-server.crt" \
        --kubelet-client-key "$pki/metrics-server.key" \
        --kubelet-preferred-address-types InternalIP --kubelet-use-node-status-port \
        --metric-resolution 10s --kubelet-request-timeout 5s

    if [ "$kubelets" = 1 ]; then
        local n
        for n in $(seq 1 "$nodes"); do
            mkdir -p "$dir/kubelet-$n"
            start "kubelet-$n" env FAKEAPI_APPS="$root/tests/fakeapi/apps" \
                python3 "$here/kubelet/kubelet.py" \
                --kubeconfig "$dir/node-$n.kubeconfig" --node "kc-node-$n" \
                --node-ip "$HOST_IP" --port $((10250 + n)) \
                --tls-cert "$pki/kubelet-$n.crt" --tls-key "$pki/kubelet-$n.key" \
                --client-ca "$pki/ca.crt" --pod-cidr "10.210.$n.0/24" \
                --router-netns "$ROUTER" --bridge "skcbr$n" \
                --images "$images" --state "$dir/kubelet-$n" \
                --cpu "$node_cpu" --memory "$node_memory" \
                --api-host "$HOST_IP" --api-port "$API_PORT"
        done
        wait_for 60 "the nodes" nodes_ready "$k"
    fi
    # Until metrics.k8s.io answers, discovery is incomplete and the namespace and quota
    # controllers stall: wait for it.
    wait_for 60 "metrics-server (the metrics.k8s.io APIService)" apiservice_available "$k"
    wait_for 60 "the default ServiceAccount" $k -n default get serviceaccount default
    wait_for 60 "the kube-root-ca.crt ConfigMap" $k -n default get configmap kube-root-ca.crt
    cat >"$dir/env" <<EOF
export KUBECONFIG=$dir/kubeconfig
export PATH=$bin:\$PATH
EOF
    date -u +%FT%TZ >"$dir/ready"
    local what="$nodes node(s)"
    [ "$kubelets" = 1 ] || what="no kubelet"
    say "ready in $((SECONDS - t0)) s: Kubernetes $(cat "$bin/VERSION"), $what; . $dir/env"
}

apiservice_available() { # KUBECTL
    [ "$($1 get apiservice v1beta1.metrics.k8s.io -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" = True ]
}

nodes_ready() { # KUBECTL: every one of the nodes registered and Ready
    local ready
    ready=$($1 get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
        grep -c '^True$' || true)
    [ "$ready" -ge "$nodes" ]
}

# metrics-server runs on this machine, outside the pod network: the APIService points at a
# Service without a selector whose EndpointSlice holds this machine's address, and the API
# server's aggregator routes to the endpoint itself (--enable-aggregator-routing).
metrics_server_objects() {
    $1 apply -f - >"$dir/logs/metrics-server-objects.log" 2>&1 <<EOF
apiVersion: v1
kind: Service
metadata: {name: metrics-server, namespace: kube-system}
spec:
  ports: [{name: https, port: 443, targetPort: $METRICS_PORT, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: metrics-server-host
  namespace: kube-system
  labels: {kubernetes.io/service-name: metrics-server}
addressType: IPv4
ports: [{name: https, port: $METRICS_PORT, protocol: TCP}]
endpoints: [{addresses: ["$HOST_IP"], conditions: {ready: true}}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: metrics-server, namespace: kube-system}
subsets: [{addresses: [{ip: "$HOST_IP"}], ports: [{name: https, port: $METRICS_PORT, protocol: TCP}]}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  service: {name: metrics-server, namespace: kube-system, port: 443}
  group: metrics.k8s.io
  version: v1beta1
  caBundle: $(base64 -w0 "$pki/ca.crt")
  groupPriorityMinimum: 100
  versionPriority: 100
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:aggregated-metrics-reader
  labels:
    rbac.authorization.k8s.io/aggregate-to-view: "true"
    rbac.authorization.k8s.io/aggregate-to-edit: "true"
    rbac.authorization.k8s.io/aggregate-to-admin: "true"
rules:
- apiGroups: [metrics.k8s.io]
  resources: [pods, nodes]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: system:metrics-server}
rules:
- apiGroups: [""]
  resources: [nodes/metrics]
  verbs: [get]
- apiGroups: [""]
  resources: [pods, nodes, namespaces, configmaps]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: system:metrics-server}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:metrics-server}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: system:metrics-server}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: metrics-server:system:auth-delegator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:auth-delegator}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: system:metrics-server}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: metrics-server-auth-reader, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: extension-apiserver-authentication-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: system:metrics-server}]
EOF
}

# ---- down -----------------------------------------------------------------------------------

down_dir() { # DIR
    local d=$1
    if [ -d "$d/pids" ]; then
        stop "$d"/pids/kubelet-* 2>/dev/null || true
        stop "$d/pids/metrics-server" "$d/pids/kube-scheduler" "$d/pids/kube-controller-manager"
        stop "$d/pids/kube-apiserver"
        stop "$d/pids/etcd"
    fi
    net_down
    # A kubelet killed before it cleaned up leaves its pods' cgroups (named skc-*) behind.
    local c
    for c in $(find /sys/fs/cgroup -maxdepth 6 -type d -name 'skc-*' 2>/dev/null); do
        find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    done
    rm -f "$d/ready"
    [ -f "$OWNER" ] && [ "$(cat "$OWNER")" = "$d" ] && rm -f "$OWNER"
    return 0
}

# ---- main -----------------------------------------------------------------------------------

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
pki=$dir/pki
nodes=1
node_cpu=4
node_memory=8Gi
kubelets=1
images=$root/tests/fakeapi/images.json
while [ $# -gt 0 ]; do
    case "$1" in
        --images) images=$(realpath "$2"); shift 2 ;;
        --nodes) nodes=$2; shift 2 ;;
        --node-cpu) node_cpu=$2; shift 2 ;;
        --node-memory) node_memory=$2; shift 2 ;;
        --no-kubelet) kubelets=0; shift ;;
        *) usage ;;
    esac
done
[[ "$nodes" =~ ^[1-9][0-9]?$ ]] && [ "$nodes" -le 50 ] || die "--nodes takes 1 to 50, not '$nodes'"
case "$cmd" in
    up)
        trap 'rc=$?; [ $rc -ne 0 ] && say "up failed; stopping what started (logs in $dir/logs)" && down_dir "$dir"' EXIT
        up
        trap - EXIT
        ;;
    down) [ "$(id -u)" -eq 0 ] || die "down needs root"; down_dir "$dir" ;;
    *) usage ;;
esac
