# nginx in front of the fake API server for HTTP/2 (tests/integration/kube_http2.sh,
# e2e_http2.sh): `listen ssl http2` on a free loopback port with the fake's own server
# certificate (so its CA still verifies), TLS ended there, bearer tokens passed on, unbuffered,
# a long read timeout, HTTP/1.1 upstream. Run as a non-daemon with its own prefix and temp
# directories; every request is logged as "PROTOCOL METHOD URI STATUS" in DIR/logs/h2.log.
#   nginx_h2_start DIR FAKE_DIR FAKE_PORT   sets NGINX_PID and NGINX_PORT
#   nginx_h2_stop

nginx_h2_start() {
    local n=$1 d=$2 fport=$3 bin
    bin=$(command -v nginx || echo /usr/sbin/nginx)
    [ -x "$bin" ] || { echo "nginx is missing (scripts/install-deps.sh test)"; return 1; }
    mkdir -p "$n/logs" "$n/tmp"
    NGINX_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    cat >"$n/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $n/nginx.pid;
error_log $n/logs/error.log warn;
events { worker_connections 256; }
http {
    access_log $n/logs/access.log;
    log_format h2 '\$server_protocol \$request_method \$request_uri \$status';
    client_body_temp_path $n/tmp/body;
    proxy_temp_path $n/tmp/proxy;
    fastcgi_temp_path $n/tmp/fastcgi;
    uwsgi_temp_path $n/tmp/uwsgi;
    scgi_temp_path $n/tmp/scgi;
    client_max_body_size 8m;
    server {
        listen 127.0.0.1:$NGINX_PORT ssl http2;
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
    "$bin" -p "$n" -c "$n/nginx.conf" -e "$n/logs/error.log" >"$n/stdout.log" 2>&1 &
    NGINX_PID=$!
    for _ in $(seq 50); do
        python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1])),0.2)' \
            "$NGINX_PORT" 2>/dev/null && return 0
        kill -0 "$NGINX_PID" 2>/dev/null || { cat "$n/stdout.log" "$n/logs/error.log"; return 1; }
        sleep 0.1
    done
    echo "nginx did not listen on $NGINX_PORT"; return 1
}

nginx_h2_stop() {
    if [ -n "${NGINX_PID:-}" ]; then
        kill "$NGINX_PID" 2>/dev/null
        wait "$NGINX_PID" 2>/dev/null
    fi
    NGINX_PID=
}
