#!/usr/bin/env bash
# Promise: the release build (make -> build/sizeup) runs clean under Valgrind memcheck
# (--error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite): an end-to-end local
# sweep of two short variants against a CPU-bound test server, and a short load test. Zero
# errors, zero definite leaks; the figures are memcheck's own summary lines.
set -u
. "$(dirname "$0")/lib.sh"
command -v valgrind >/dev/null || { result FAIL valgrind "valgrind is not installed"; exit 1; }
W=$(mktemp -d /tmp/sizeup-rel-vg.XXXXXX)
SRV=
marker="sizeup-rel-vg-$$"
cleanup() {
    [ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
    pkill -KILL -f -- "$marker" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
make -C "$ROOT" --no-print-directory >"$W/make.log" 2>&1 ||
    { result FAIL valgrind "make (release) failed: $(tail -n 2 "$W/make.log")"; exit 1; }
BIN="$ROOT/build/sizeup"
VG=(valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --num-callers=30)

# summary LOGFILE: "N errors, D bytes definitely lost in B blocks"
summary() {
    local e d
    e=$(grep -oE 'ERROR SUMMARY: [0-9,]+ errors' "$1" | tail -n 1 | grep -oE '[0-9,]+' | tr -d ,)
    d=$(grep -oE 'definitely lost: [0-9,]+ bytes in [0-9,]+ blocks' "$1" | tail -n 1 | sed 's/definitely lost: //')
    [ -z "$d" ] && grep -q 'All heap blocks were freed' "$1" && d="0 bytes in 0 blocks"
    echo "${e:-?} errors, ${d:-? bytes} definitely lost"
}

# Valgrind 3.19 does not know epoll_pwait2 (syscall 441) and warns on every call (the engine
# then falls back to epoll_wait): count the warnings, keep one line, drop the rest of the noise.
squash() { # LOG
    local n
    n=$(grep -c 'unhandled amd64-linux syscall' "$1")
    grep -v '^--[0-9]*-- ' "$1" >"$1.tmp"
    [ "$n" -gt 0 ] && echo "(sizeup test note: $n valgrind warnings about unhandled syscalls removed)" >>"$1.tmp"
    mv "$1.tmp" "$1"
}

verdict() { # NAME RC LOG WHAT
    local s
    s=$(summary "$3")
    if [ "$2" -eq 0 ] && [[ "$s" == "0 errors, 0 bytes"* ]]; then
        result PASS "$1" "$4: $s (memcheck, exit 0)"
    else
        result FAIL "$1" "$4: $s, exit $2; first: $(grep -m1 -E '^==[0-9]+== (Invalid|Conditional|Use of|[0-9,]+ bytes in)' "$3")"
        return 1
    fi
}
rc=0

# 1. A local sweep, two variants, real cgroups when writable.
port=$(free_port)
t0=$(now_ms)
timeout 600 "${VG[@]}" --log-file="$W/vg-sweep.log" "$BIN" sweep \
    --configs "1@0.5/128Mi 1@1/128Mi" --port "$port" --load fixed --users 2 --duration 2s --warmup 0s \
    --out "$W/out" -- env WORK=20000 python3 "$ROOT/tests/integration/cpu_server.py" "$marker" \
    >"$W/sweep.out" 2>"$W/sweep.err"
src=$?
ms=$(($(now_ms) - t0))
squash "$W/vg-sweep.log"
keep_logs valgrind "$W/vg-sweep.log" "$W/sweep.err"
variants=$(python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["variants"]; print("%d variants %s" % (len(v), "/".join(x["state"] for x in v)))' "$W/out/results.json" 2>/dev/null)
verdict valgrind-sweep "$src" "$W/vg-sweep.log" "sizeup sweep (${variants:-no results.json}, ${ms} ms)" || rc=1

# 2. A short load test against the test server.
python3 "$ROOT/tests/servers/httpd.py" --port-file "$W/port" >"$W/httpd.log" 2>&1 &
SRV=$!
wait_file "$W/port" 10 || { result FAIL valgrind-loadtest "httpd.py did not start"; exit 1; }
url="http://127.0.0.1:$(cat "$W/port")/"
t0=$(now_ms)
timeout 300 "${VG[@]}" --log-file="$W/vg-lt.log" "$BIN" loadtest \
    --url "$url" --users 4 --duration 3s --warmup 1s --json --out "$W/lt.json" 2>"$W/lt.err"
lrc=$?
ms=$(($(now_ms) - t0))
squash "$W/vg-lt.log"
keep_logs valgrind "$W/vg-lt.log" "$W/lt.err"
reqs=$(jget "$W/lt.json" "j['requests']" 2>/dev/null)
# Exit 99 (not HEALTHY under Valgrind's slowdown) is a verdict, not a memcheck error.
[ "$lrc" -eq 99 ] && ! grep -q 'ERROR SUMMARY: [1-9]' "$W/vg-lt.log" && lrc=0
verdict valgrind-loadtest "$lrc" "$W/vg-lt.log" "sizeup loadtest (${reqs:-?} requests, ${ms} ms)" || rc=1

exit $rc
