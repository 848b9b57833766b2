#!/usr/bin/env bash
# The Kubernetes client over HTTP/2, as libcurl talks to a real API server: Debian's nginx in
# front of the fake API server (listen ssl http2, TLS ended there, bearer tokens passed on,
# proxy_buffering off, a long proxy_read_timeout, HTTP/1.1 upstream), run as a non-daemon on a
# loopback port with its own prefix under the work directory. BUILD/tests/kube/test_kube_h2
# runs a paged list, the three patch types, a 429 with Retry-After, a 30 s watch with events
# spread over it and 410 Gone (in the stream and as HTTP) through it; then nginx's access log
# must show every one of those requests as HTTP/2.0, watches included.
set -u
: "${ROOT:?}" "${BUILD:?}"
bin="$BUILD/tests/kube/test_kube_h2"
[ -x "$bin" ] || { echo "missing $bin (make unit-bins)"; exit 1; }
for t in python3 openssl; do
    command -v "$t" >/dev/null || { echo "$t is missing (scripts/install-deps.sh test)"; exit 1; }
done
work=$(mktemp -d /tmp/kube_http2.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

d="$work/fake"
mkdir -p "$d"
python3 "$ROOT/tests/fakeapi/fakeapi.py" --dir "$d" --no-kubelet >"$d/fake.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$d/ready" ] && break; sleep 0.1; done
[ -s "$d/ready" ] || { echo "fake API server did not start:"; cat "$d/fake.log"; exit 1; }
fport=$(cat "$d/ready")

n="$work/nginx"
# shellcheck source=/dev/null
. "$ROOT/tests/integration/lib/nginx_h2.sh"
nginx_h2_start "$n" "$d" "$fport" || exit 1
pids+=("$NGINX_PID")
port=$NGINX_PORT
# The client's view: the fake's files, nginx's port.
h="$work/h2"
mkdir -p "$h"
cp "$d/token" "$d/ca.crt" "$d/control-token" "$h/"
echo "$port" >"$h/ready"

FAKEAPI_DIR="$d" FAKEAPI_H2_DIR="$h" "$bin" >"$work/test.log" 2>&1
rc=$?
cat "$work/test.log"
[ $rc -eq 0 ] || { echo "test_kube_h2 failed ($rc)"; tail -n 20 "$n/logs/error.log"; exit 1; }

log="$n/logs/h2.log"
[ -s "$log" ] || { echo "nginx logged no request"; exit 1; }
total=$(wc -l <"$log")
h2n=$(grep -c '^HTTP/2.0 ' "$log")
[ "$total" = "$h2n" ] || { grep -v '^HTTP/2.0 ' "$log" | head; echo "$((total - h2n)) of $total requests not over HTTP/2"; exit 1; }
for what in 'GET /api/v1/namespaces/default/configmaps?.*limit=2.* 200' 'PATCH .* 200' \
            'GET .*watch=.* 200' 'GET .*watch=.* 410' 'GET .* 429'; do
    grep -Eq "^HTTP/2.0 $what" "$log" || { echo "no '$what' over HTTP/2 in nginx's log"; cat "$log"; exit 1; }
done
tok=$(cat "$d/token")
grep -rqF -- "$tok" "$work/test.log" "$n/logs" && { echo "the bearer token appeared in a log"; exit 1; }
echo "kube client over HTTP/2 through nginx: ok ($total requests, all HTTP/2.0)"
