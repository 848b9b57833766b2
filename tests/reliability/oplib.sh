# Operator helpers shared by the reliability promises that run `sizeup operator` against the
# fake API server (p_sigterm.sh, p_leader.sh, p_drift.sh). Source after lib.sh. Sets W (a work
# directory), starts the fake with the example app and a short profile (rel-load), and makes an
# identity for the operator (user rel-operator, kubeconfig $W/op-kubeconfig) so that the fake's
# request log tells its requests apart. Everything is stopped by the EXIT trap.
. "$ROOT/tests/fakeapi/lib.sh"
fake_require
W=$(mktemp -d /tmp/sizeup-rel-op.XXXXXX)
OPS=()
op_cleanup() {
    local p
    for p in "${OPS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    for p in "${OPS[@]}"; do wait "$p" 2>/dev/null; done
    fake_stop
    rm -rf "$W"
}
trap op_cleanup EXIT

op_setup() { # PROMISE-NAME: fails the promise when the cluster cannot be set up
    fake_start "$W/fake" || { result FAIL "$1" "the fake did not start"; exit 1; }
    remember_secret "$W/fake/token" "$W/fake/control-token"
    k apply -f "$ROOT/manifests/examples/" >/dev/null
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
        { result FAIL "$1" "the example app did not roll out"; exit 1; }
    fakectl POST /fake/tokens "{\"user\":\"rel-operator\",\"groups\":[\"system:masters\"],\"file\":\"$W/op-token\",\"kubeconfig\":\"$W/op-kubeconfig\"}" >/dev/null
    remember_secret "$W/op-token"
}

# op_bg LOGNAME [flags]: starts an operator; its pid in OP.
op_bg() {
    local name=$1
    shift
    "$SIZEUP" operator --kubeconfig "$W/op-kubeconfig" --admin-addr off "$@" >"$W/$name.log" 2>&1 &
    OP=$!
    OPS+=("$OP")
}

ann() { k get deployment "${2:-web}" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"].get("annotations",{}).get(sys.argv[1],""))' "$1"; }
last_seq() { fakectl GET /fake/log | python3 -c 'import json,sys; e=json.load(sys.stdin)["entries"]; print(e[-1]["seq"] if e else 0)'; }

# The Deployment minus what a sweep may legitimately change.
fingerprint() {
    k get deployment "${1:-web}" -o json | python3 -c '
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
