#!/usr/bin/env bash
# The real control plane's costs (tests/kcluster): the cold build's minutes (as build.sh recorded
# them), the size of the cached binaries, the time from `kcluster.sh up` to ready (RUNS times), and
# each process's idle CPU and memory with one node and no pods over IDLE_SECONDS, beside the
# fake API server's at idle. Needs root and a built control plane (tests/kcluster/build.sh).
# Usage: bench/kcluster.sh [RUNS]   (IDLE_SECONDS, default 60)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
idle=${IDLE_SECONDS:-60}
kc=$root/tests/kcluster/kcluster.sh
[ "$(id -u)" -eq 0 ] || { echo "bench/kcluster.sh: needs root" >&2; exit 2; }
bin=$("$root/tests/kcluster/build.sh" --print-bin)
work=$(mktemp -d /tmp/sizeup-bench-kc.XXXXXX)
cleanup() {
    "$kc" down "$work/kc" >/dev/null 2>&1 || true
    [ -n "${fake_pid:-}" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

echo "== the last build of these binaries, seconds (from $bin/BUILD_SECONDS; cold only when nothing was cached)"
sed 's/^/  /' "$bin/BUILD_SECONDS"
echo "  binaries: $(du -sm "$bin" | cut -f1) MiB ($(ls "$bin" | grep -vc '[A-Z]') files)"

echo "== up to ready, $runs runs (1 node)"
for i in $(seq 1 "$runs"); do
    t0=$(date +%s%N)
    "$kc" up "$work/kc" --nodes 1 >/dev/null 2>&1
    t1=$(date +%s%N)
    echo "  run $i: $(( (t1 - t0) / 1000000 )) ms"
    [ "$i" -lt "$runs" ] && "$kc" down "$work/kc" >/dev/null
done

# cpu_ticks PID...: the processes' user+system clock ticks (with their children's, reaped).
ticks() {
    local t=0 p
    for p in "$@"; do
        t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo $t
}
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)

measure() { # NAME PID...
    local name=$1
    shift
    local a b
    a=$(ticks "$@")
    sleep "$idle"
    b=$(ticks "$@")
    local rss=0 p
    for p in "$@"; do rss=$((rss + $(rss_kib "$p"))); done
    printf '  %-24s %6.1f%% of a core  %7.1f MiB RSS\n' "$name" \
        "$(echo "scale=3; ($b - $a) * 100 / $hz / $idle" | bc)" "$(echo "scale=1; $rss / 1024" | bc)"
}

echo "== idle, one node, no pods: $idle s each, measured one after the other"
sleep 10
for f in "$work"/kc/pids/*; do
    measure "$(basename "$f")" "$(cat "$f")"
done
all=()
for f in "$work"/kc/pids/*; do all+=("$(cat "$f")"); done
measure "all of them" "${all[@]}"
"$kc" down "$work/kc" >/dev/null

mkdir -p "$work/fake"
python3 "$root/tests/fakeapi/fakeapi.py" --dir "$work/fake" >"$work/fake.log" 2>&1 &
fake_pid=$!
for _ in $(seq 1 100); do [ -s "$work/fake/ready" ] && break; sleep 0.1; done
sleep 5
measure "fake API server" "$fake_pid"
