#!/usr/bin/env bash
# Load-generator benchmark: sizeup against its peers, side by side, on this machine.
#
# nginx (one worker, access log off) serves a 13-byte file on 127.0.0.1, pinned to CPU
# $SERVER_CPU; each load tool runs pinned to CPU $CLIENT_CPU with 50 connections and one
# thread for the same duration, tools alternating within each round. For each run it prints
# requests/s and requests per CPU-second of the load tool itself (user + sys from wait4, the
# tool's own process tree only), then the median per tool and the ratios to wrk.
#
# Environment: DURATION (s, default 10), ROUNDS (default 2), CONNS (default 50),
# TOOLS (default "sizeup wrk ab hey autocannon"; missing ones are skipped; "sizeup-base" is a
# second sizeup binary named by SIZEUP_BASE, e.g. built from an earlier commit, to measure what a
# change costs in the same run),
# MEMCHECK=1 also compares sizeup's peak RSS after a short and a long run (MEM_LONG s, 60).
# Usage: bench/loadgen.sh [path/to/sizeup]     (make bench runs it with build/sizeup)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
SIZEUP=${1:-${SIZEUP:-$root/build/sizeup}}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-2}
CONNS=${CONNS:-50}
TOOLS=${TOOLS:-"sizeup wrk ab hey autocannon"}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
MEM_LONG=${MEM_LONG:-60}

tmp=$(mktemp -d /tmp/sizeup-bench.XXXXXX)
nginx_pid=
cleanup() {
    [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "bench: nginx not installed (scripts/install-deps.sh bench)"; exit 1; }
[ -x "$SIZEUP" ] || { echo "bench: $SIZEUP not built (make)"; exit 1; }
AUTOCANNON=$(command -v autocannon || echo "$root/build/bench/node_modules/.bin/autocannon")
if [ ! -x "$AUTOCANNON" ] && command -v npm >/dev/null && [[ " $TOOLS " == *" autocannon "* ]]; then
    # Not packaged by Debian: from the npm registry into build/bench, once.
    echo "bench: installing autocannon from npm into build/bench"
    mkdir -p "$root/build/bench"
    timeout 180 npm install --prefix "$root/build/bench" --no-audit --no-fund --silent \
        autocannon@9 >/dev/null 2>&1 || echo "bench: npm install autocannon failed"
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$tmp/www" "$tmp/logs"
chmod 755 "$tmp" "$tmp/www" # nginx workers run as www-data when started by root
printf 'Hello, world\n' >"$tmp/www/index.html"
cat >"$tmp/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 120s;
    client_body_temp_path $tmp/logs;
    proxy_temp_path $tmp/logs;
    fastcgi_temp_path $tmp/logs;
    uwsgi_temp_path $tmp/logs;
    scgi_temp_path $tmp/logs;
    server {
        listen 127.0.0.1:$port;
        root $tmp/www;
        location / { }
    }
}
CONF
taskset -c "$SERVER_CPU" "$NGINX" -c "$tmp/nginx.conf" -p "$tmp" 2>"$tmp/logs/stderr" &
nginx_pid=$!
for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && break
    sleep 0.1
done
curl -s "http://127.0.0.1:$port/" | grep -q 'Hello, world' ||
    { echo "bench: nginx did not start: $(cat "$tmp/logs/stderr" "$tmp/logs/error.log")"; exit 1; }
URL="http://127.0.0.1:$port/"

have() {
    case $1 in
    sizeup) [ -x "$SIZEUP" ] ;;
    sizeup-base) [ -n "${SIZEUP_BASE:-}" ] && [ -x "$SIZEUP_BASE" ] ;;
    autocannon) [ -x "$AUTOCANNON" ] ;;
    *) command -v "$1" >/dev/null ;;
    esac
}

# Runs one tool; prints "requests seconds user sys maxrss".
run_tool() {
    local t=$1 out="$tmp/out.txt" cpu="$tmp/cpu.txt" req secs
    local pin=(taskset -c "$CLIENT_CPU" python3 "$root/bench/cpu.py" "$cpu")
    case $t in
    sizeup | sizeup-base)
        local bin=$SIZEUP
        [ "$t" = sizeup-base ] && bin=$SIZEUP_BASE
        "${pin[@]}" "$bin" loadtest --url "$URL" --users "$CONNS" --threads 1 \
            --duration "${DURATION}s" --warmup 0 --json --out "$out" >/dev/null 2>&1
        req=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$out")
        secs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["duration_s"])' "$out")
        ;;
    wrk)
        "${pin[@]}" wrk -t1 -c"$CONNS" -d"${DURATION}s" "$URL" >"$out" 2>&1
        req=$(awk '/requests in/ {print $1}' "$out")
        secs=$(awk '/requests in/ {sub(/s,/, "", $4); print $4}' "$out")
        ;;
    ab)
        # ab keeps 32 bytes per request up to -n: enough for 400k req/s, not 64 GB.
        "${pin[@]}" ab -k -q -c "$CONNS" -t "$DURATION" -n $((DURATION * 400000)) "$URL" >"$out" 2>&1
        req=$(awk '/^Complete requests:/ {print $3}' "$out")
        secs=$(awk '/^Time taken for tests:/ {print $5}' "$out")
        ;;
    hey)
        "${pin[@]}" hey -z "${DURATION}s" -c "$CONNS" -cpus 1 "$URL" >"$out" 2>&1
        req=$(awk '/\[200\]/ {s += $2} END {print s+0}' "$out")
        secs=$(awk '/Total:/ {print $2; exit}' "$out")
        ;;
    autocannon)
        "${pin[@]}" "$AUTOCANNON" -c "$CONNS" -d "$DURATION" -j "$URL" >"$out" 2>/dev/null
        req=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"]["total"])' "$out")
        secs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["duration"])' "$out")
        ;;
    esac
    read -r u s rss _ <"$cpu"
    echo "${req:-0} ${secs:-0} $u $s $rss"
}

echo "bench: $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -srm), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "bench: nginx $("$NGINX" -v 2>&1 | sed 's/.*\///') on CPU $SERVER_CPU, tools on CPU $CLIENT_CPU, $CONNS connections, ${DURATION}s, $ROUNDS rounds, load average $(cut -d' ' -f1-3 /proc/loadavg)"
tools=()
for t in $TOOLS; do
    if have "$t"; then tools+=("$t"); else echo "bench: $t not installed, skipped"; fi
done
results="$tmp/results.txt"
: >"$results"
printf '%-11s %5s %12s %10s %8s %8s %16s\n' tool round requests req/s user_s sys_s 'req/tool-cpu-s'
for r in $(seq "$ROUNDS"); do
    # Rotate the order each round so no tool always runs first (or right after the same one).
    n=${#tools[@]}
    for i in $(seq 0 $((n - 1))); do
        t=${tools[$(((i + r - 1) % n))]}
        read -r req secs u s rss < <(run_tool "$t")
        line=$(python3 -c '
import sys
t, r, req, secs, u, s = sys.argv[1], sys.argv[2], int(float(sys.argv[3])), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
rps = req / secs if secs else 0
cpu = u + s
print("%-11s %5s %12d %10.0f %8.2f %8.2f %16.0f" % (t, r, req, rps, u, s, req / cpu if cpu else 0))' "$t" "$r" "$req" "$secs" "$u" "$s")
        echo "$line"
        echo "$line" >>"$results"
        sleep 1
    done
done
echo
python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
by = {}
for t, _, req, rps, u, s, per in rows:
    by.setdefault(t, []).append((float(rps), float(per)))
med = {t: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for t, v in by.items()}
base = med.get("wrk")
if "sizeup" in med and "sizeup-base" in med:
    a, b = med["sizeup"], med["sizeup-base"]
    print("sizeup vs sizeup-base: req/s %.3fx, req/tool-cpu-s %.3fx" % (a[0] / b[0], a[1] / b[1]))
print("%-11s %10s %16s %14s %18s" % ("median", "req/s", "req/tool-cpu-s", "req/s vs wrk", "per-cpu vs wrk"))
for t, (rps, per) in sorted(med.items(), key=lambda kv: -kv[1][1]):
    if base:
        print("%-11s %10.0f %16.0f %13.2fx %17.2fx" % (t, rps, per, rps / base[0], per / base[1]))
    else:
        print("%-11s %10.0f %16.0f" % (t, rps, per))
PY

if [ "${MEMCHECK:-0}" = 1 ]; then
    echo
    for d in 5 "$MEM_LONG"; do
        taskset -c "$CLIENT_CPU" python3 "$root/bench/cpu.py" "$tmp/cpu.txt" "$SIZEUP" loadtest \
            --url "$URL" --users "$CONNS" --threads 1 --duration "${d}s" --warmup 0 --json \
            --out "$tmp/mem.json" >/dev/null 2>&1
        read -r u s rss _ <"$tmp/cpu.txt"
        req=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$tmp/mem.json")
        echo "memory: sizeup ${d}s run: $req requests, peak RSS $rss KiB"
    done
fi
