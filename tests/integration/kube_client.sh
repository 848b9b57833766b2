#!/usr/bin/env bash
# The Kubernetes client against the fake API server over real TLS: starts two fakes (the second
# with a certificate for another host name), runs BUILD/tests/kube/test_kube_fake against them,
# and checks that no bearer token or Authorization header reached any log.
set -u
: "${ROOT:?}" "${BUILD:?}"
bin="$BUILD/tests/kube/test_kube_fake"
[ -x "$bin" ] || { echo "missing $bin (make unit-bins)"; exit 1; }
# Both come with `scripts/install-deps.sh test`: without them the machine is broken, not exempt.
command -v python3 >/dev/null || { echo "python3 is missing (scripts/install-deps.sh test)"; exit 1; }
command -v openssl >/dev/null || { echo "openssl is missing (scripts/install-deps.sh test)"; exit 1; }
work=$(mktemp -d /tmp/kube_client.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

start_fake() { # dir, extra args...
    local d=$1; shift
    mkdir -p "$d"
    python3 "$ROOT/tests/fakeapi/fakeapi.py" --dir "$d" --no-kubelet "$@" >"$d/fake.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [ -s "$d/ready" ] && return 0; sleep 0.1; done
    echo "fake API server in $d did not start:"; cat "$d/fake.log"; return 1
}
start_fake "$work/fake" --client-cert || exit 1
start_fake "$work/badhost" --server-san DNS:other.example || exit 1

FAKEAPI_DIR="$work/fake" FAKEAPI_BADHOST_DIR="$work/badhost" "$bin" >"$work/test.log" 2>&1
rc=$?
cat "$work/test.log"
[ $rc -eq 0 ] || { echo "test_kube_fake failed ($rc)"; exit 1; }
grep -q 'SKIPPED' "$work/test.log" && { echo "tests were skipped with the fake running"; exit 1; }

# The fake saw the TLS failures (handshakes refused) and never a request from them.
grep -q 'TLS handshake from 127.0.0.1 failed' "$work/fake/fake.log" "$work/badhost/fake.log" ||
    { echo "no refused TLS handshake in the fakes' logs"; exit 1; }
# No credential in any log: the client's output, the fakes' logs and request logs.
for t in "$work/fake/token" "$work/badhost/token"; do
    tok=$(cat "$t")
    if grep -rqF -- "$tok" "$work/test.log" "$work/fake/fake.log" "$work/fake/requests.log"; then
        echo "a bearer token appeared in a log"; exit 1
    fi
done
if grep -qi 'authorization' "$work/test.log"; then
    echo "an Authorization header appeared in the client's log"; exit 1
fi
echo "kube client against the fake: ok"
