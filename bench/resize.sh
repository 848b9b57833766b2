#!/usr/bin/env bash
# Resize vs rollouts: the wall time of the same 4-variant CPU-only clone-mode sweep of the example
# app against the fake API server, once with every variant rolled out (sizeup.dev/resize: off)
# and once with the CPU-only steps resized in place (the default where pods/resize is served),
# alternating, ROUNDS times each. Prints per run: the wall time from the sweep request to `done`,
# and the mean time from apply to ready per variant (results.json timing.ready_s).
# Usage: bench/resize.sh (ROUNDS=3). Needs build/sizeup (make), python3, openssl, kubectl.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
export ROOT=${FAKE_ROOT:-$root}
sizeup=${SIZEUP:-$root/build/sizeup}
rounds=${ROUNDS:-3}
configs="1@0.25/128Mi 1@0.5/128Mi 1@0.75/128Mi 1@1/128Mi"
[ -x "$sizeup" ] || { echo "build first: make" >&2; exit 1; }
. "$ROOT/tests/fakeapi/lib.sh"
fake_require
W=$(mktemp -d /tmp/sizeup-bench.XXXXXX)
OP_PID=
cleanup() {
    [ -n "$OP_PID" ] && kill -TERM "$OP_PID" 2>/dev/null && wait "$OP_PID" 2>/dev/null
    fake_stop
    rm -rf "$W"
}
trap cleanup EXIT

fake_start "$W/fake" || exit 1
k apply -f "$root/manifests/examples/" >/dev/null || exit 1
k apply -f - >/dev/null <<'EOF' || exit 1
apiVersion: v1
kind: ConfigMap
metadata: {name: quick}
data:
  profile.yaml: |
    users: 4
    duration: 2s
    warmup: 1s
    timeout: 5s
    requests:
      - { name: work, method: GET, path: "/work?ms=20" }
EOF
k rollout status deployment/web --timeout=60s >/dev/null || exit 1
"$sizeup" operator --kubeconfig "$KUBECONFIG" --admin-addr off >"$W/op.log" 2>&1 &
OP_PID=$!

status() { k get deployment web -o jsonpath='{.metadata.annotations.sizeup\.dev/status}'; }

# run NAME RESIZE: one sweep; prints "NAME wall_s mean_ready_s applied_by..."
run() {
    local t0 t1 s
    k annotate --overwrite deployment web sizeup.dev/profile=quick "sizeup.dev/resize=$2" \
        "sizeup.dev/configs=$configs" "sizeup.dev/sweep=$1" >/dev/null
    t0=$(date +%s.%N)
    for _ in $(seq 1 1200); do
        s=$(status)
        [ "$s" = done ] && break
        case "$s" in failed*) echo "$1: $s" >&2; return 1 ;; esac
        sleep 0.1
    done
    t1=$(date +%s.%N)
    [ "$s" = done ] || { echo "$1: not done: $s" >&2; return 1; }
    k get configmap web-sizing -o json | python3 -c '
import json, sys
r = json.loads(json.load(sys.stdin)["data"]["results.json"])
v = r["variants"]
print("%-10s %-6s %7.1f %13.2f  %s" % (sys.argv[1], sys.argv[2], float(sys.argv[4]) - float(sys.argv[3]),
      sum(x["timing"]["ready_s"] for x in v) / len(v), " ".join(x.get("applied_by", "-") for x in v)))' \
        "$1" "$2" "$t0" "$t1"
}

echo "4-variant CPU-only clone sweep ($configs), 1 s warm-up + 2 s measured each"
printf '%-10s %-6s %7s %13s  %s\n' run resize wall_s mean_ready_s applied_by
for i in $(seq 1 "$rounds"); do
    run "rollout-$i" off || exit 1
    run "resize-$i" on || exit 1
done
