#!/usr/bin/env bash
# Cancelling a sweep: SIGINT while a variant is being measured, and SIGTERM while a variant that
# never becomes ready is being waited for. Either way: no process and no cgroup left behind,
# exit status 130, and the files hold what was measured so far.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
command -v python3 >/dev/null || { echo "python3 is missing (scripts/install-deps.sh test)"; exit 1; }
tmp=$(mktemp -d)
marker="sizeup-sweep-cancel-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# Waits (at most $2 seconds) until the file $1 exists.
wait_for() {
    for _ in $(seq 1 $(($2 * 10))); do
        [ -e "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

check_clean() { # pid
    sleep 0.2
    left=$(leftover_procs "$marker")
    [ -z "$left" ] || { echo "processes left behind: $(ps -o pid,args -p "$left" | tail -n +2)"; exit 1; }
    cg=$(leftover_cgroups "$1")
    [ -z "$cg" ] || { echo "cgroups left behind: $cg"; exit 1; }
}

# 1. SIGINT in the middle of the second variant's measurement.
port=$(free_port)
"$SIZEUP" sweep --configs "1@0.5/128Mi 1@1/128Mi 2@1/256Mi" --port "$port" --load fixed --users 4 \
    --duration 6s --warmup 1s --out "$tmp/a" -- \
    env WORK=20000 python3 "$ROOT/tests/integration/cpu_server.py" "$marker" \
    >"$tmp/a.out" 2>"$tmp/a.err" &
pid=$!
# results.json appears once the first variant is done; then let the second get going.
wait_for "$tmp/a/results.json" 60 || { echo "first variant never finished"; cat "$tmp/a.err"; exit 1; }
sleep 3
kill -INT $pid
set +e
wait $pid
rc=$?
set -e
[ $rc -eq 130 ] || { echo "SIGINT: exit $rc, want 130"; tail -20 "$tmp/a.err"; exit 1; }
check_clean $pid
python3 - "$tmp/a/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cancelled"] is True
v = d["variants"]
# The first variant complete, the second cut short and marked, the third never started.
assert len(v) == 2, [x["spec"] for x in v]
assert v[0]["state"] == "measured" and "interrupted" not in v[0]["marks"]
assert v[1]["spec"] == "1@1/128Mi" and "interrupted" in v[1]["marks"], v[1]["marks"]
print("SIGINT: kept", [x["spec"] for x in v])
PY
grep -q "Cancelled" "$tmp/a/results.md"

# 2. SIGTERM while waiting for an app that never listens (and has a child of its own).
port=$(free_port)
"$SIZEUP" sweep --configs "1@0.5/64Mi 1@1/64Mi" --port "$port" --ready-timeout 30s --load fixed \
    --duration 2s --warmup 0s --out "$tmp/b" -- \
    sh -c "sleep 300.$$ & sleep 301.$$; : $marker" >"$tmp/b.out" 2>"$tmp/b.err" &
pid=$!
sleep 2
pgrep -f -- "$marker" >/dev/null || { echo "the app never started"; cat "$tmp/b.err"; exit 1; }
kill -TERM $pid
set +e
wait $pid
rc=$?
set -e
[ $rc -eq 130 ] || { echo "SIGTERM: exit $rc, want 130"; tail -20 "$tmp/b.err"; exit 1; }
check_clean $pid
left=$(pgrep -f -- "sleep 30[01].$$" || true)
[ -z "$left" ] || { echo "the app's children were left behind: $left"; exit 1; }
python3 - "$tmp/b/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cancelled"] is True and d["variants"] == [], d["variants"]
print("SIGTERM: cancelled while waiting, nothing measured, files written")
PY
echo ok
