# shellcheck shell=bash
# Helpers of tests/integration/e2e_journey.sh: the steps of docs/getting-started.md run as a user
# runs them, and the checks after each. Source it after lib/operator_e2e.sh (fail, fakectl, E2E_W)
# and tests/policy/env.sh (HELM). Needs ROOT, SIZEUP and, once the fake runs, FAKE_DIR/FAKE_PORT.

GUIDE="$ROOT/docs/getting-started.md"

# journey_scratch W: W/work is the user's directory: the repository's charts/ and the app's own
# chart in ./chart; helm and kubectl keep their caches and settings under W, not in $HOME.
journey_scratch() {
    local w=$1
    mkdir -p "$w/work"
    ln -s "$ROOT/charts" "$w/work/charts"
    cp -r "$ROOT/tests/integration/fixtures/app-chart" "$w/work/chart"
    PATH="$(dirname "$HELM"):$PATH"
    export PATH KUBECACHEDIR="$w/kcache" HELM_CACHE_HOME="$w/helm/cache" \
        HELM_CONFIG_HOME="$w/helm/config" HELM_DATA_HOME="$w/helm/data"
    # The guide's cluster commands, one per line, continuation lines joined, blanks squeezed.
    python3 "$ROOT/tests/policy/doc_blocks.py" "$w/guide" "$GUIDE" >/dev/null ||
        fail "cannot read the shell blocks of $GUIDE"
    local id kind
    while IFS=$'\t' read -r id kind _ _; do
        [ "$kind" = cluster ] || continue
        sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$w/guide/$id.sh"
    done <"$w/guide/index.tsv" | grep -vE '^[[:space:]]*(#|$)' | tr -s ' \t' '  ' |
        sed 's/^ //; s/ $//' >"$w/guide-commands.txt"
}

# Fails unless the guide shows TEXT as a command (blanks squeezed).
_guide_has() {
    local text
    text=$(printf '%s' "$1" | tr -s ' \t' '  ')
    grep -qxF -- "$text" "$E2E_W/guide-commands.txt" ||
        fail "docs/getting-started.md no longer shows the command: $text"
}

# documented COMMAND...: runs the command line "$*" exactly as the guide shows it (in the shell,
# from the user's directory) and fails when the guide does not show it or it fails.
documented() {
    local text="$*"
    _guide_has "$text"
    echo "\$ $text" >&2
    bash -o pipefail -c "$text" || fail "the guide's command failed: $text"
}

# documented_shape PREFIX COMMAND...: the guide shows a command starting with PREFIX, which the
# test runs with its own arguments (e.g. a shorter variant list).
documented_shape() {
    local prefix=$1
    shift
    grep -qF -- "$prefix" "$E2E_W/guide-commands.txt" ||
        fail "docs/getting-started.md no longer shows a command like: $prefix"
    echo "\$ $*" >&2
    "$@" || fail "command failed: $*"
}

# The fake's kubelet must mount ServiceAccount volumes and confine wildcard binds on this
# machine (root, util-linux, a C compiler): without them the operator cannot run as a pod.
journey_pod_support() {
    fakectl GET /fake/pods >"$E2E_W/fake-pods.json" || fail "GET /fake/pods"
    python3 - "$E2E_W/fake-pods.json" <<'PY' || fail "the fake's kubelet cannot run the operator as a pod here"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["serviceAccountVolume"] == "mounted", d["serviceAccountVolume"]
assert d["podNetwork"] == "wildcard binds confined", d["podNetwork"]
PY
}

# journey_check_operator_pod NS POD CONTAINER: the operator process is the pod's: the image's
# entrypoint with the chart's args, in-cluster config from the ServiceAccount volume mounted in
# its own mount namespace, the kubelet's KUBERNETES_SERVICE_* variables, Ready through its
# probes, answering on its admin port, and acting as its ServiceAccount under the chart's RBAC.
journey_check_operator_pod() {
    local ns=$1 pod=$2 c=$3
    fakectl GET /fake/pods >"$E2E_W/fake-pods.json" || fail "GET /fake/pods"
    kubectl -n "$ns" get pod "$pod" -o json >"$E2E_W/op-pod.json" || fail "get pod $pod"
    python3 - "$E2E_W/fake-pods.json" "$E2E_W/op-pod.json" "$c" "$SIZEUP" "$FAKE_DIR" \
        "$FAKE_PORT" "$E2E_W/op-pod.log" <<'PY' || fail "the operator does not run as its pod"
import json, os, sys, time, urllib.request
fake, pod, cname, sizeup, fdir, port, log = sys.argv[1:]
fake, pod = json.load(open(fake)), json.load(open(pod))
m, spec = pod["metadata"], pod["spec"]
run = [r for r in fake["pods"] if r["namespace"] == m["namespace"] and r["name"] == m["name"]][0]
ctr = [x for x in run["containers"] if x["name"] == cname][0]
cspec = [x for x in spec["containers"] if x["name"] == cname][0]
pid = ctr["pid"]
argv = open("/proc/%d/cmdline" % pid, "rb").read().split(b"\0")[:-1]
want = [sizeup] + cspec["args"]
assert [a.decode() for a in argv] == want, "argv %r, want entrypoint + the chart's args %r" % (
    argv, want)
print("  pid %d runs the image's entrypoint with the chart's args: %s" % (pid, " ".join(want)))
env = dict(x.split(b"=", 1) for x in open("/proc/%d/environ" % pid, "rb").read().split(b"\0")
           if b"=" in x)
assert env.get(b"KUBERNETES_SERVICE_HOST") == b"127.0.0.1", env.get(b"KUBERNETES_SERVICE_HOST")
assert env.get(b"KUBERNETES_SERVICE_PORT") == port.encode(), env.get(b"KUBERNETES_SERVICE_PORT")
assert b"KUBECONFIG" not in env, "the pod has KUBECONFIG"
print("  KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=%s, no KUBECONFIG" % port)
assert os.readlink("/proc/%d/ns/mnt" % pid) != os.readlink("/proc/self/ns/mnt"), \
    "the pod shares the host's mount namespace"
sa = "/var/run/secrets/kubernetes.io/serviceaccount"
# The path as the pod's process resolves it (/var/run is a symlink on the shared root, so it
# is resolved first: an absolute link would lead out of /proc/PID/root).
inside = "/proc/%d/root%s" % (pid, os.path.realpath(sa))
got = {f: open(os.path.join(inside, f)).read() for f in ("token", "ca.crt", "namespace")}
assert got["token"] == open(os.path.join(run["serviceAccountDir"], "token")).read()
assert got["ca.crt"] == open(os.path.join(fdir, "ca.crt")).read(), "ca.crt is not the fake's CA"
assert got["namespace"] == m["namespace"], got["namespace"]
assert not os.path.exists(os.path.join(sa, "token")) or \
    open(os.path.join(sa, "token")).read() != got["token"], "the token is visible on the host"
print("  %s holds token, ca.crt, namespace=%s in the pod's own mount namespace only"
      % (sa, got["namespace"]))
text = open(log).read()
assert "server=https://127.0.0.1:%s " % port in text, "the operator did not use in-cluster config"
ready = [x for x in pod["status"]["conditions"] if x["type"] == "Ready"][0]
assert ready["status"] == "True", ready
aport = [p["containerPort"] for p in cspec["ports"] if p["name"] == "admin"][0]
probes = (cspec["readinessProbe"]["httpGet"]["path"], cspec["livenessProbe"]["httpGet"]["path"])
for path in probes:
    with urllib.request.urlopen("http://%s:%d%s" % (run["ip"], aport, path), timeout=5) as r:
        assert r.status == 200, (path, r.status)
print("  Ready by its readinessProbe; %s and %s answer 200 on %s:%d" % (probes + (run["ip"], aport)))
PY
    # The token is the pod's ServiceAccount, authorized by the chart's RBAC and nothing more.
    local token sa user code pid
    pid=$(_pod_pid "$pod")
    [ -n "$pid" ] || fail "no process for the operator pod $pod"
    token=$(cat "/proc/$pid/root$(realpath -m /var/run/secrets/kubernetes.io/serviceaccount)/token")
    sa=$(kubectl -n "$ns" get pod "$pod" -o jsonpath='{.spec.serviceAccountName}')
    user="system:serviceaccount:$ns:$sa"
    code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$FAKE_DIR/ca.crt" \
        -H "Authorization: Bearer $token" "https://127.0.0.1:$FAKE_PORT/apis/apps/v1/deployments")
    [ "$code" = 200 ] || fail "the pod's token cannot list Deployments ($code)"
    JOURNEY_PROBE="/api/v1/namespaces/$ns/secrets"
    curl -s --cacert "$FAKE_DIR/ca.crt" -H "Authorization: Bearer $token" \
        "https://127.0.0.1:$FAKE_PORT$JOURNEY_PROBE" >"$E2E_W/denied.json"
    grep -qF "User \\\"$user\\\" cannot list resource \\\"secrets\\\"" "$E2E_W/denied.json" ||
        fail "reading Secrets with the pod's token was not refused for $user: $(cat "$E2E_W/denied.json")"
    echo "  its token is $user: Deployments listed, Secrets refused (the chart's RBAC)"
    echo "$token" >"$E2E_W/op-token"
}

# The pid of POD's (first) container, as the fake's kubelet reports it.
_pod_pid() {
    fakectl GET /fake/pods >"$E2E_W/fake-pods.json" || fail "GET /fake/pods"
    python3 - "$E2E_W/fake-pods.json" "$1" <<'PY' || fail "no process for pod $1"
import json, sys
d = json.load(open(sys.argv[1]))
print([c["pid"] for r in d["pods"] if r["name"] == sys.argv[2] for c in r["containers"]][0])
PY
}

# journey_no_denials USER: USER made API requests and the fake refused none (403): the chart's
# RBAC grants everything the operator does. The test's own probe of Secrets (refused on purpose
# by journey_check_operator_pod) is left out.
journey_no_denials() {
    local total denied
    grep -F "\"user\":\"$1\"" "$FAKE_DIR/requests.log" |
        grep -vF '"path":"'"$JOURNEY_PROBE"'"' >"$E2E_W/op-requests.log" || true
    total=$(wc -l <"$E2E_W/op-requests.log")
    denied=$(grep -c '"code":403' "$E2E_W/op-requests.log" || true)
    [ "$total" -gt 0 ] || fail "no API request by $1"
    if [ "$denied" -ne 0 ]; then
        grep '"code":403' "$E2E_W/op-requests.log" | head -n 5 >&2
        fail "$denied of $total requests by $1 were refused (403)"
    fi
    echo "  $total API requests by $1, none refused"
}

# journey_wait_status DEPLOYMENT WANT SECONDS: polls the guide's status command until it says
# WANT; a `failed: ...` status fails at once.
journey_wait_status() {
    local d=$1 want=$2 secs=$3 s="" last="" until=$((SECONDS + $3))
    local cmd="kubectl get deploy $d -o jsonpath='{.metadata.annotations.sizeup\\.dev/status}'"
    _guide_has "$cmd"
    while [ $SECONDS -lt $until ]; do
        s=$(bash -c "$cmd" 2>/dev/null || true)
        [ "$s" != "$last" ] && echo "  status of $d: ${s:-(none)} at $((SECONDS - T0)) s"
        last=$s
        [ "$s" = "$want" ] && return 0
        [[ $s == failed* ]] && fail "the sweep of $d ended '$s'"
        sleep 0.5
    done
    fail "status of $d is '$s', not '$want' after $secs s"
}

# journey_check_results RESULTS_MD REPORT_HTML: what the guide's reads return.
journey_check_results() {
    grep -q '^| \* ' "$1" || fail "results.md has no recommended (*) row: $(head -n 40 "$1")"
    grep -c '^| .*HEALTHY\|^| .*STRESSED\|^| .*OVERLOADED' "$1" | grep -qx 2 ||
        fail "results.md does not hold the two variants' rows"
    head -c 200 "$2" | tr 'A-Z' 'a-z' | grep -q '<!doctype html' || fail "report.html is not a page"
    grep '^| \* ' "$1" | sed 's/^/  recommended: /'
}

# journey_check_applied DEPLOYMENT VALUES BEFORE_JSON: after `helm upgrade -f VALUES`, the
# Deployment, its pod and the pod's process carry VALUES' limits, requests and worker count,
# and they differ from what the Deployment had before (BEFORE_JSON), or the step proves nothing.
journey_check_applied() {
    kubectl get deployment "$1" -o json >"$E2E_W/app-after.json" || fail "get deployment $1"
    kubectl get pods -l "app.kubernetes.io/instance=$1" -o json >"$E2E_W/app-pods.json"
    fakectl GET /fake/pods >"$E2E_W/fake-pods.json" || fail "GET /fake/pods"
    python3 - "$2" "$3" "$E2E_W/app-after.json" "$E2E_W/app-pods.json" "$E2E_W/fake-pods.json" \
        <<'PY' || fail "the recommendation is not what $1 runs with"
import json, sys, urllib.request, yaml
vals = yaml.safe_load(open(sys.argv[1]))
before, after, pods, fake = (json.load(open(f)) for f in sys.argv[2:])

def cpu_m(q):
    q = str(q)
    return int(float(q[:-1])) if q.endswith("m") else int(float(q) * 1000)

def mem_b(q):
    q = str(q)
    for suf, mul in (("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30), ("k", 1000),
                     ("M", 1000 ** 2), ("G", 1000 ** 3)):
        if q.endswith(suf):
            return int(float(q[:-len(suf)]) * mul)
    return int(q)

def norm(res):
    return {k: {"cpu": cpu_m(v["cpu"]), "memory": mem_b(v["memory"])}
            for k, v in res.items() if k in ("limits", "requests")}

def container(d):
    c = d["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in c.get("env") or []}
    return norm(c.get("resources") or {}), env.get("WORKERS")

want = (norm(vals["resources"]), str(vals["workers"]["count"]))
had = container(before)
assert had != want, "the recommendation %r is what the chart already had" % (want,)
got = container(after)
assert got == want, "after helm upgrade: %r, values.yaml says %r" % (got, want)
old = before["spec"]["template"]["spec"]["containers"][0].get("resources")
print("  Deployment: resources %s, WORKERS=%s (was %s, WORKERS=%s)"
      % (json.dumps(vals["resources"]), want[1], json.dumps(old), had[1]))
live = [p for p in pods["items"] if not p["metadata"].get("deletionTimestamp")]
assert len(live) == 1, "%d app pods" % len(live)
p = live[0]
c = p["spec"]["containers"][0]
assert norm(c["resources"]) == want[0], c["resources"]
run = [r for r in fake["pods"] if r["name"] == p["metadata"]["name"]][0]
cg = run["containers"][0]["cgroup"]
lim = want[0]["limits"]
assert (cg.get("cpuMillis"), cg.get("memoryBytes")) == (lim["cpu"], lim["memory"]), cg
with urllib.request.urlopen("http://%s:%d/env" % (run["ip"], c["ports"][0]["containerPort"]),
                            timeout=5) as r:
    penv = json.load(r)
assert penv.get("WORKERS") == want[1], penv.get("WORKERS")
print("  pod %s: cgroup limits %dm CPU / %d MiB, its process sees WORKERS=%s"
      % (p["metadata"]["name"], lim["cpu"], lim["memory"] >> 20, penv["WORKERS"]))
PY
}

# journey_uninstall_check RELEASE NS MANIFEST OP_POD APP: `helm uninstall RELEASE -n NS` removes
# every object of MANIFEST (what `helm get manifest` listed), the Deployment's ReplicaSets and
# pods (the operator's process ends, its token stops working), the release's Secrets, the
# sweep's clone APP-sizeup and any Lease; APP's results ConfigMap APP-sizing stays.
journey_uninstall_check() {
    local rel=$1 ns=$2 manifest=$3 pod=$4 app=$5 pid code
    pid=$(_pod_pid "$pod")
    [ -n "$pid" ] || fail "no process for the operator pod $pod"
    documented helm uninstall "$rel" -n "$ns"
    # The pod gets its grace period (capped by the fake) to stop.
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && fail "the operator process $pid still runs after helm uninstall"
    grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$E2E_W/op-pod.log" &&
        fail "the operator pod's log has sanitizer errors"
    echo "  the operator process ended; its log has no sanitizer report"
    # One line per object: kind, name and, for a namespaced kind, its namespace.
    python3 - "$manifest" "$ns" >"$E2E_W/chart-objects.txt" <<'PY' || fail "cannot read the manifest"
import sys, yaml
cluster = {"ClusterRole", "ClusterRoleBinding", "Namespace"}
for o in yaml.safe_load_all(open(sys.argv[1])):
    if o:
        ns = "" if o["kind"] in cluster else o["metadata"].get("namespace") or sys.argv[2]
        print(o["kind"], o["metadata"]["name"], ns)
PY
    local kind name ons left=""
    while read -r kind name ons; do
        if kubectl get "$kind" "$name" ${ons:+-n "$ons"} >/dev/null 2>&1; then
            left+="$kind/$name "
        fi
    done <"$E2E_W/chart-objects.txt"
    [ -z "$left" ] || fail "helm uninstall left: $left"
    echo "  gone: $(awk '{printf "%s/%s ", $1, $2}' "$E2E_W/chart-objects.txt")"
    for _ in $(seq 1 50); do
        left=$(kubectl get deployments,replicasets,pods,endpoints,leases,secrets,configmaps -n "$ns" \
            -o name 2>/dev/null | grep -v '^configmap/kube-root-ca.crt$' || true)
        [ -z "$left" ] && break
        sleep 0.2
    done
    [ -z "$left" ] || fail "namespace $ns still holds: $(echo $left)"
    left=$(kubectl get deployment "$app-sizeup" -o name 2>/dev/null || true)
    [ -z "$left" ] || fail "the sweep's clone $app-sizeup is still there"
    left=$(kubectl get leases -A -o name 2>/dev/null | grep sizeup || true)
    [ -z "$left" ] || fail "a Lease is left: $left"
    code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$FAKE_DIR/ca.crt" \
        -H "Authorization: Bearer $(cat "$E2E_W/op-token")" \
        "https://127.0.0.1:$FAKE_PORT/apis/apps/v1/deployments")
    [ "$code" = 401 ] || fail "the deleted pod's token still works ($code)"
    echo "  namespace $ns is empty, no clone, no Lease, the pod's token is revoked (401)"
    left=$(kubectl get configmaps -A -l app.kubernetes.io/managed-by=sizeup -o name)
    [ "$left" = "configmap/$app-sizing" ] ||
        fail "the results ConfigMaps are not exactly $app-sizing: ${left:-none}"
    echo "  kept: $left (the results belong to the user)"
}
