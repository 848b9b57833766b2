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
for t in python3 openssl nginx; do
    command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] ||
        { echo "$t is missing (scripts/install-deps.sh test)"; exit 1; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
work=$(mktemp -d /tmp/kube_http2.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

d="$work/fake"
mkdir -p "$d"
python3 "$ROOT/tests/fakeapi/fakeapi.py" --dir "$d" --no-kubelet >"$d/fake.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$d/ready" ] && break; sleep 0.1; done
[ -s "$d/ready" ] || { echo "fake API server did not start:"; cat "$d/fake.log"; exit 1; }
fport=$(cat "$d/ready")

n="$work/nginx"
mkdir -p "$n/logs" "$n/tmp"
port=$(free_port)
cat >"$n/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $n/nginx.pid;
error_log $n/logs/error.log warn;
events { worker_connections 64; }
http {
    access_log $n/logs/access.log;
    log_format h2 '\$server_protocol \$request_method \$request_uri \$status';
    client_body_temp_path $n/tmp/body;
    proxy_temp_path $n/tmp/proxy;
    fastcgi_temp_path $n/tmp/fastcgi;
    uwsgi_temp_path $n/tmp/uwsgi;
    scgi_temp_path $n/tmp/scgi;
    server {
        listen 127.0.0.1:$port ssl http2;
        ssl_certificate $d/server.crt;
        ssl_certificate_key $d/server.key;
        access_log $n/logs/h2.log h2;
        location / {
            proxy_pass https://127.0.0.1:$fport;
            proxy_http_version 1.1;
            proxy_ssl_verify off;
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 3600s;
            proxy_send_timeout 3600s;
            proxy_set_header Connection "";
        }
    }
}
CONF
"$NGINX" -p "$n" -c "$n/nginx.conf" -e "$n/logs/error.log" >"$n/stdout.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do
    python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1])),0.2)' "$port" \
        2>/dev/null && break
    sleep 0.1
done
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
