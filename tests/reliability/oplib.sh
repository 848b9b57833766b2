# Operator helpers shared by the reliability promises that run `sizeup operator` against the
# fake API server (p_sigterm.sh, p_leader.sh, p_drift.sh, p_crash.sh, p_rbac.sh). Source after
# lib.sh. Sets W (a work directory); every operator started with op_bg and the fake are stopped,
# and W removed, by the EXIT trap.
#   op_setup PROMISE              the fake in $W/fake, the example app, identity rel-operator
#   op_cluster PROMISE DIR APPS [FAKE-FLAGS]   the fake in DIR with the manifests APPS (a file or
#                                 a directory) rolled out and the short profile rel-load
#   op_identity USER DIR [GROUPS-JSON]         a token for USER: DIR/op-token, DIR/op-kubeconfig
#   op_bg LOGNAME [flags]         an operator with $W/op-kubeconfig in the background (pid in OP)
#   op_stop PID                   SIGTERM, up to 13 s, then SIGKILL
. "$ROOT/tests/fakeapi/lib.sh"
fake_require
W=$(mktemp -d /tmp/sizeup-rel-op.XXXXXX)
OPS=()
op_cleanup() {
    local p live
    # Only operators still running as this shell's jobs: a reaped pid may belong to someone else.
    live=" $(jobs -p | tr '\n' ' ') "
    for p in "${OPS[@]}"; do [[ $live == *" $p "* ]] && kill -KILL "$p" 2>/dev/null; done
    for p in "${OPS[@]}"; do wait "$p" 2>/dev/null; done
    fake_stop
    rm -rf "$W"
}
on_exit op_cleanup

op_cluster() { # PROMISE DIR APPS [FAKE-FLAGS...]: fails the promise when it cannot be set up
    local name=$1 dir=$2 apps=$3
    shift 3
    fake_start "$dir" "$@" || { result FAIL "$name" "the fake did not start"; exit 1; }
    remember_secret "$dir/token" "$dir/control-token"
    k apply -f "$apps" >/dev/null || { result FAIL "$name" "kubectl apply -f $apps failed"; exit 1; }
    k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: rel-load}
data:
  profile.yaml: |
    users: 2
    duration: 2s
    warmup: 0s
    timeout: 2s
    search: { mode: fixed }
    requests:
      - { name: hello, method: GET, path: / }
YAML
    k rollout status deployment/web --timeout=60s >/dev/null ||
        { result FAIL "$name" "the example app did not roll out"; exit 1; }
}

op_identity() { # USER DIR [GROUPS-JSON]: the operator's own identity, so the request log tells
    local groups=${3:-}
    fakectl POST /fake/tokens "{\"user\":\"$1\",${groups:+\"groups\":$groups,}\"file\":\"$2/op-token\",\"kubeconfig\":\"$2/op-kubeconfig\",\"namespace\":\"${OP_NAMESPACE:-default}\"}" >/dev/null ||
        return 1
    remember_secret "$2/op-token"
}

op_setup() { # PROMISE-NAME
    op_cluster "$1" "$W/fake" "$ROOT/manifests/examples/"
    op_identity rel-operator "$W" '["system:masters"]' || { result FAIL "$1" "no operator token"; exit 1; }
}

# op_bg LOGNAME [flags]: starts an operator; its pid in OP.
op_bg() {
    local name=$1
    shift
    "$SIZEUP" operator --kubeconfig "$W/op-kubeconfig" --admin-addr off "$@" >"$W/$name.log" 2>&1 &
    OP=$!
    OPS+=("$OP")
}

op_stop() { # PID
    [ -n "$1" ] || return 0
    kill -TERM "$1" 2>/dev/null
    for _ in $(seq 1 130); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    return 0
}

ann() { k get deployment "${2:-web}" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"].get("annotations",{}).get(sys.argv[1],""))' "$1"; }
last_seq() { fakectl GET /fake/log | python3 -c 'import json,sys; e=json.load(sys.stdin)["entries"]; print(e[-1]["seq"] if e else 0)'; }

# The Deployment minus what a sweep may legitimately change (fingerprint_json: of the JSON of a
# Deployment on stdin).
fingerprint() { k get deployment "${1:-web}" -o json | fingerprint_json; }
fingerprint_json() {
    python3 -c '
import json, sys
o = json.load(sys.stdin)
m = o["metadata"]
for f in ("resourceVersion", "managedFields", "generation"):
    m.pop(f, None)
m["annotations"] = {k: v for k, v in m.get("annotations", {}).items()
                    if not k.startswith("sizeup.dev/") and not k.startswith("fake.sizeup.dev/")}
o.pop("status", None)
print(json.dumps(o, sort_keys=True))'
}

# wait_status REGEX SECONDS: echoes the status once it matches (or the last one seen).
wait_status() {
    local s= t0=$SECONDS
    while [ $((SECONDS - t0)) -lt "$2" ]; do
        s=$(ann sizeup.dev/status)
        [[ "$s" =~ $1 ]] && break
        sleep 0.3
    done
    echo "$s"
}
