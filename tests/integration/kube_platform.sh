#!/usr/bin/env bash
# The Kubernetes platform (src/kube/platform.c) against the fake API server with its kubelet
# running pods as local processes: clone and in-place modes, exact restore, drift, OOM-kill,
# crash-loop, unschedulable and cancellation (BUILD/tests/kube/test_kube_platform).
set -u
: "${ROOT:?}" "${BUILD:?}"
bin="$BUILD/tests/kube/test_kube_platform"
[ -x "$bin" ] || { echo "missing $bin (make unit-bins)"; exit 1; }
# Both come with `scripts/install-deps.sh test`: without them the machine is broken, not exempt.
command -v python3 >/dev/null || { echo "python3 is missing (scripts/install-deps.sh test)"; exit 1; }
command -v openssl >/dev/null || { echo "openssl is missing (scripts/install-deps.sh test)"; exit 1; }
work=$(mktemp -d /tmp/kube_platform.XXXXXX)
pid=
cleanup() {
    # SIGTERM makes the fake stop every pod it runs.
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
    rm -rf "$work"
}
trap cleanup EXIT

python3 "$ROOT/tests/fakeapi/fakeapi.py" --dir "$work" --restart-backoff 0.2 --metrics-window 2 >"$work/fake.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$work/ready" ] && break; sleep 0.1; done
[ -s "$work/ready" ] || { echo "fake API server did not start:"; cat "$work/fake.log"; exit 1; }

FAKEAPI_DIR="$work" "$bin" >"$work/test.log" 2>&1
rc=$?
cat "$work/test.log"
[ $rc -eq 0 ] || { echo "test_kube_platform failed ($rc)"; exit 1; }
n_skip=$(grep -c 'SKIPPED \]' "$work/test.log")
[ "$n_skip" -eq 0 ] || echo "note: $n_skip test(s) skipped (see above)"
tok=$(cat "$work/token")
if grep -qF -- "$tok" "$work/test.log"; then echo "the bearer token appeared in a log"; exit 1; fi
echo "kube platform against the fake: ok"
