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
export SIZEUP=${SIZEUP:-$root/build/sizeup}
rounds=${ROUNDS:-3}
configs="1@0.25/128Mi 1@0.5/128Mi 1@0.75/128Mi 1@1/128Mi"
[ -x "$SIZEUP" ] || { echo "build first: make" >&2; exit 1; }
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup
k apply -f "$ROOT/tests/integration/fixtures/quick-profile.yaml" >/dev/null || fail "profile"
op_start op

# run NAME RESIZE: one sweep; prints "NAME RESIZE wall_s mean_ready_s applied_by..."
run() {
    local t0 t1
    k annotate --overwrite deployment web sizeup.dev/profile=quick "sizeup.dev/resize=$2" \
        "sizeup.dev/configs=$configs" "sizeup.dev/sweep=$1" >/dev/null
    t0=$(date +%s.%N)
    wait_status web '^done$' 300 >/dev/null
    t1=$(date +%s.%N)
    k get configmap web-sizing -o json | python3 -c '
import json, sys
v = json.loads(json.load(sys.stdin)["data"]["results.json"])["variants"]
print("%-10s %-6s %7.1f %13.2f  %s" % (sys.argv[1], sys.argv[2],
      float(sys.argv[4]) - float(sys.argv[3]), sum(x["timing"]["ready_s"] for x in v) / len(v),
      " ".join(x.get("applied_by", "-") for x in v)))' "$1" "$2" "$t0" "$t1"
}

echo "4-variant CPU-only clone sweep ($configs), 1 s warm-up + 2 s measured each"
printf '%-10s %-6s %7s %13s  %s\n' run resize wall_s mean_ready_s applied_by
for i in $(seq 1 "$rounds"); do
    run "rollout-$i" off
    run "resize-$i" on
done
op_stop >/dev/null
