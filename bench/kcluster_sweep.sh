#!/usr/bin/env bash
# One operator sweep, the same on both test servers: the example app (manifests/examples: web.yaml
# and its fixed-load profile) swept over the same 3 variants by `sizeup operator` running on this
# machine, first against the fake API server (tests/fakeapi), then against the real control plane
# (tests/kcluster). Prints each sweep's wall time from the annotation to `done`, RUNS times each.
# Needs root, a built control plane (tests/kcluster/build.sh) and the release build (make).
# Usage: bench/kcluster_sweep.sh [RUNS]   (the operator's logs of the last run are kept in
# /tmp/sizeup-bench-sweep-logs)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-1}
sizeup=$root/build/sizeup
configs="1@0.25/128Mi 1@0.5/128Mi 2@0.5/128Mi"
[ "$(id -u)" -eq 0 ] || { echo "bench/kcluster_sweep.sh: needs root" >&2; exit 2; }
[ -x "$sizeup" ] || { echo "bench/kcluster_sweep.sh: no $sizeup (run make)" >&2; exit 2; }
bin=$("$root/tests/kcluster/build.sh" --print-bin)
kubectl=$bin/kubectl
work=$(mktemp -d /tmp/sizeup-bench-sweep.XXXXXX)
fake_pid=
op_pid=
cleanup() {
    [ -n "$op_pid" ] && kill "$op_pid" 2>/dev/null && wait "$op_pid" 2>/dev/null
    [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
    "$root/tests/kcluster/kcluster.sh" down "$work/kc" >/dev/null 2>&1 || true
    mkdir -p /tmp/sizeup-bench-sweep-logs
    cp "$work"/op-*.log /tmp/sizeup-bench-sweep-logs/ 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# sweep NAME KUBECONFIG: applies the app, runs the operator, times one sweep; prints the seconds.
sweep() {
    local k="$kubectl --kubeconfig $2" t0 st=""
    $k apply -f "$root/manifests/examples/" >/dev/null
    $k rollout status deployment/web --timeout=120s >/dev/null
    "$sizeup" operator --kubeconfig "$2" --admin-addr 127.0.0.1:0 >"$work/op-$1.log" 2>&1 &
    op_pid=$!
    sleep 2
    t0=$(date +%s%N)
    $k annotate deployment web --overwrite sizeup.dev/profile=web-load \
        "sizeup.dev/configs=$configs" "sizeup.dev/sweep=bench-$(date +%s%N)" >/dev/null
    for _ in $(seq 1 1200); do
        st=$($k get deployment web -o jsonpath='{.metadata.annotations.sizeup\.dev/status}')
        [ "$st" = done ] && break
        [[ "$st" == failed* ]] && { echo "$1: $st" >&2; break; }
        sleep 0.25
    done
    echo "scale=1; ($(date +%s%N) - $t0) / 1000000000" | bc
    kill "$op_pid"
    wait "$op_pid" 2>/dev/null || true
    op_pid=
    [ "$st" = done ] || return 1
}

for i in $(seq 1 "$runs"); do
    rm -rf "$work/fake"
    mkdir -p "$work/fake"
    python3 "$root/tests/fakeapi/fakeapi.py" --dir "$work/fake" >"$work/fake.log" 2>&1 &
    fake_pid=$!
    for _ in $(seq 1 100); do [ -s "$work/fake/ready" ] && break; sleep 0.1; done
    f=$(sweep fake "$work/fake/kubeconfig")
    kill "$fake_pid"
    wait "$fake_pid" 2>/dev/null || true
    fake_pid=

    "$root/tests/kcluster/kcluster.sh" up "$work/kc" --nodes 1 >/dev/null 2>&1
    r=$(sweep real "$work/kc/kubeconfig")
    "$root/tests/kcluster/kcluster.sh" down "$work/kc" >/dev/null
    echo "run $i: 3 variants ($configs): fake API server ${f} s, real control plane ${r} s"
done
