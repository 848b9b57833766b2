#!/usr/bin/env bash
# Load from several pods, measured on the fake cluster: the highest request rate one generator
# pod reaches against a target that is not the bottleneck, and what three reach together, each
# generator pod given a CPU limit (GEN_CPU, default 50m) that the fake enforces as a cgroup
# quota. The workers are the real `sizeup loadtest` worker mode in an Indexed Job, started at one
# shared time, their results pulled from the pod IPs and added (requests over the shared window).
#
# The target is nginx (2 workers, access log off) on 127.0.0.1, unlimited. One sizeup thread
# sends about 100,000 requests/s per CPU to it, so on a 2-core machine the generators' limit must
# be small for three of them to stay below what nginx and the machine can take: 50m by default
# (at 250m one pod already reaches ~23,000 req/s and three are bounded by the 2 cores).
#
# Environment: GEN_CPU (50m), USERS per pod (32), DURATION (s, 5), ROUNDS (2).
# Usage: bench/generators.sh [path/to/sizeup]
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
SIZEUP=${1:-${SIZEUP:-$root/build/sizeup}}
GEN_CPU=${GEN_CPU:-50m}
USERS=${USERS:-32}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-2}

tmp=$(mktemp -d /tmp/sizeup-bench-gen.XXXXXX)
nginx_pid=
cleanup() {
    [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
    fake_stop
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=tests/fakeapi/lib.sh
. "$root/tests/fakeapi/lib.sh"
ROOT=$root

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "bench: nginx not installed (scripts/install-deps.sh bench)"; exit 1; }
[ -x "$SIZEUP" ] || { echo "bench: $SIZEUP not built (make)"; exit 1; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$tmp/www" "$tmp/logs"
chmod 755 "$tmp" "$tmp/www"
printf 'Hello, world\n' >"$tmp/www/index.html"
cat >"$tmp/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 100000000;
    client_body_temp_path $tmp/logs;
    proxy_temp_path $tmp/logs;
    fastcgi_temp_path $tmp/logs;
    uwsgi_temp_path $tmp/logs;
    scgi_temp_path $tmp/logs;
    server { listen 127.0.0.1:$port; root $tmp/www; location / { } }
}
CONF
"$NGINX" -c "$tmp/nginx.conf" -p "$tmp" 2>"$tmp/logs/stderr" &
nginx_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done

cat >"$tmp/images.json" <<JSON
{"example/sizeup:*": {"entrypoint": ["$SIZEUP"], "cmd": ["operator"]}}
JSON
fake_start "$tmp/fake" --images "$tmp/images.json" >/dev/null || exit 1

run() { # N: one Job of N workers, USERS each; prints the summed throughput
    local n=$1 name="gen$n-$RANDOM" start
    start=$(python3 -c 'import time; print("%.3f" % (time.time() + 2))')
    k apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $name}
spec:
  completionMode: Indexed
  completions: $n
  parallelism: $n
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      automountServiceAccountToken: false
      containers:
      - name: load
        image: example/sizeup:1
        args: [loadtest, --url, "http://127.0.0.1:$port/", --users, "$((USERS * n))",
               --duration, "${DURATION}s", --warmup, "0", --share, "\$(JOB_COMPLETION_INDEX)/$n",
               --start-at, "$start", --serve-result, ":9090"]
        ports: [{containerPort: 9090}]
        resources: {limits: {cpu: "$GEN_CPU", memory: 256Mi}}
YAML
    sleep $((DURATION + 3))
    local total=0 ips
    for _ in $(seq 1 50); do
        ips=$(k get pods -l "job-name=$name" -o jsonpath='{.items[*].status.podIP}')
        [ "$(wc -w <<<"$ips")" = "$n" ] && break
        sleep 0.2
    done
    total=$(for ip in $ips; do
        for _ in $(seq 1 50); do
            curl -sf "http://$ip:9090/result" && break
            sleep 0.2
        done
        echo
    done | python3 -c '
import json, sys
docs = [json.loads(l) for l in sys.stdin if l.strip()]
print("%.0f %d %s" % (sum(d["result"]["requests"] for d in docs) /
      max(d["result"]["duration_s"] for d in docs), len(docs),
      "+".join("%.0f" % (d["result"]["requests"] / d["result"]["duration_s"]) for d in docs)))')
    k delete job "$name" >/dev/null
    echo "$total"
}

echo "generator pods limited to $GEN_CPU CPU each, $USERS users per pod, ${DURATION}s, nginx target"
for r in $(seq 1 "$ROUNDS"); do
    for n in 1 3; do
        read -r rps got parts <<<"$(run "$n")"
        echo "round $r: $n pod(s): $rps req/s (results from $got, per pod $parts)"
    done
done
