#!/usr/bin/env bash
# Operator idle benchmark: `sizeup operator` watching N unannotated Deployments in the fake API
# server (no pods run). Prints, per N: time to the first full list, resident memory (total RSS,
# split into anonymous = the operator's own heap and stacks, and file = mapped shared libraries;
# and PSS, which shares library pages among the processes using them), and CPU seconds used per
# minute of idling. Usage: bench/operator_idle.sh [N...] (default 1000 10000)
# Needs build/sizeup (make), python3, openssl, kubectl.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# The fake API server's tree (FAKE_ROOT to use another checkout of tests/fakeapi).
export ROOT=${FAKE_ROOT:-$root}
sizeup=${SIZEUP:-$root/build/sizeup}
idle_s=${IDLE_SECONDS:-60}
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

status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
cpu_s() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$1/stat"; }

printf '%-8s %-10s %-10s %-10s %-10s %-10s %-10s\n' deploys synced_s rss_mib anon_mib file_mib pss_mib cpu_s/min
[ $# -gt 0 ] || set -- 1000 10000
for n1 in "$@"; do
    python3 - "$n1" >"$W/preload.json" <<'PY'
import json, sys
n = int(sys.argv[1])
items = []
for i in range(n):
    name = "app-%05d" % i
    items.append({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "ns-%02d" % (i % 20),
                     "labels": {"app.kubernetes.io/name": name, "team": "t%d" % (i % 7)},
                     "annotations": {"owner": "team-%d@example.com" % (i % 7)}},
        "spec": {"replicas": 0,
                 "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
                 "template": {"metadata": {"labels": {"app.kubernetes.io/name": name}},
                              "spec": {"containers": [{
                                  "name": "app", "image": "example/web:1",
                                  "ports": [{"containerPort": 8080}],
                                  "env": [{"name": "WORKERS", "value": "2"},
                                          {"name": "LOG_LEVEL", "value": "info"}],
                                  "resources": {"limits": {"cpu": "1", "memory": "512Mi"},
                                                "requests": {"cpu": "250m", "memory": "256Mi"}}}]}}}})
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
    fake_start "$W/fake-$n1" --no-kubelet --preload "$W/preload.json" || exit 1
    start=$(date +%s.%N)
    "$sizeup" operator --kubeconfig "$KUBECONFIG" --admin-addr 127.0.0.1:0 --log-level warn \
        >"$W/op-$n1.log" 2>&1 &
    OP_PID=$!
    port=
    for _ in $(seq 1 50); do
        port=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' "$W/op-$n1.log" | head -n1)
        [ -n "$port" ] && break
        sleep 0.1
    done
    # --log-level warn hides the admin.listen line: find the port from the socket table.
    if [ -z "$port" ]; then
        port=$(ss -ltnp 2>/dev/null | awk -v p="pid=$OP_PID," '$0 ~ p {split($4, a, ":"); print a[length(a)]}' | head -n1)
    fi
    synced=
    for _ in $(seq 1 1200); do
        if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ]; then
            synced=$(python3 -c "import time; print('%.1f' % (time.time() - $start))")
            break
        fi
        sleep 0.1
    done
    [ -n "$synced" ] || { echo "operator never synced ($n1)"; tail "$W/op-$n1.log"; exit 1; }
    sleep 5
    c0=$(cpu_s "$OP_PID")
    sleep "$idle_s"
    c1=$(cpu_s "$OP_PID")
    rss=$(status_kb "$OP_PID" VmRSS)
    anon=$(status_kb "$OP_PID" RssAnon)
    file=$(status_kb "$OP_PID" RssFile)
    pss=$(awk '$1 == "Pss:" {print $2}' "/proc/$OP_PID/smaps_rollup")
    printf '%-8s %-10s %-10.1f %-10.1f %-10.1f %-10.1f %-10.3f\n' "$n1" "$synced" \
        "$(echo "$rss / 1024" | bc -l)" "$(echo "$anon / 1024" | bc -l)" \
        "$(echo "$file / 1024" | bc -l)" "$(echo "$pss / 1024" | bc -l)" \
        "$(echo "($c1 - $c0) * 60 / $idle_s" | bc -l)"
    kill -TERM "$OP_PID"; wait "$OP_PID" 2>/dev/null; OP_PID=
    fake_stop
done
