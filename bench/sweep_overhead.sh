#!/usr/bin/env bash
# Local sweep overhead: the time a variant takes beyond its warm-up + measured window, on the
# local platform under real cgroup limits. Per variant results.json records timing.wall_s,
# ready_s and overhead_s (= wall_s - warm-up - duration); this prints them and splits the
# overhead into the app's start-up (ready_s: from exec to the port answering, which depends on
# the app), the stop (stop_s: SIGTERM until the process group and the cgroup are gone, which is
# mostly the app's own shutdown) and the rest (cgroup set-up, fork/exec, the two load runs'
# start and end, rewriting the five files): sizeup's own part. Two apps: nginx (starts in milliseconds, so nearly all
# that is left is sizeup's) and a Python HTTP server (a typical interpreter start-up).
# Usage: bench/sweep_overhead.sh [SIZEUP]   (VARIANTS, DURATION to change the run; ~30 s)
# Goal: under 0.5 s per variant beyond the app's own start-up and shutdown.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
sizeup=${1:-${SIZEUP:-$root/build/sizeup}}
variants=${VARIANTS:-"1@0.5/128Mi 1@1/128Mi 2@1/256Mi 2@2/256Mi"}
duration=${DURATION:-2s}
[ -x "$sizeup" ] || { echo "build first: make" >&2; exit 1; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 1; }
tmp=$(mktemp -d /tmp/sizeup-bench-sweep.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

run() { # name, command...
    local name=$1
    shift
    "$sizeup" sweep --configs "$variants" --load fixed --users 4 --duration "$duration" --warmup 0s \
        --port "$port" --out "$tmp/$name" -- "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
        { echo "sweep of $name failed:"; tail -5 "$tmp/$name.err"; return 1; }
    python3 - "$name" "$tmp/$name/results.json" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
rows = []
for v in d["variants"]:
    t = v["timing"]
    own = t["overhead_s"] - t["ready_s"] - t["stop_s"]
    rows.append((v["spec"], t["wall_s"], t["ready_s"], t["overhead_s"], own))
    print(f"  {name:<8} {v['spec']:<14} wall {t['wall_s']:6.2f} s  overhead {t['overhead_s']:5.3f} s"
          f" = app start-up {t['ready_s']:5.3f} + stop {t['stop_s']:5.3f} + rest {own:5.3f}")
n = len(rows)
mo = sum(r[3] for r in rows) / n
ms = sum(r[4] for r in rows) / n
mx = max(r[4] for r in rows)
st = sum(v["timing"]["stop_s"] for v in d["variants"]) / n
rd = sum(v["timing"]["ready_s"] for v in d["variants"]) / n
print(f"  {name:<8} mean overhead {mo:.3f} s per variant: app start-up {rd:.3f} s, stop {st:.3f} s,"
      f" the rest {ms:.3f} s (max {mx:.3f} s); limits enforced: {d.get('limits_enforced')}")
PY
}

echo "variants: $variants; $duration measured, no warm-up, 4 users; host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
rc=0
if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then
    nginx=$(command -v nginx || echo /usr/sbin/nginx)
    mkdir -p "$tmp/nginx"
    cat >"$tmp/nginx/nginx.conf" <<CONF
pid $tmp/nginx/nginx.pid;
error_log stderr warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $tmp/nginx;
    proxy_temp_path $tmp/nginx;
    fastcgi_temp_path $tmp/nginx;
    uwsgi_temp_path $tmp/nginx;
    scgi_temp_path $tmp/nginx;
    server { listen 127.0.0.1:$port; location / { return 200 "ok\n"; } }
}
CONF
    run nginx "$nginx" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" \
        -g 'daemon off; worker_processes $WORKERS;' || rc=1
else
    echo "  nginx not installed (scripts/install-deps.sh bench): skipped"
fi
run python env WORK=2000 python3 "$root/tests/integration/cpu_server.py" || rc=1
exit $rc
