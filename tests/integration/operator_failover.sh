#!/usr/bin/env bash
# Failover: two operators with --leader-elect; kill -9 the leader mid-sweep (in place). The
# follower takes the Lease once it expires (15 s), finds the sweep marked running, cleans up
# what the dead leader left and resumes it to the end; the pod template ends exactly as before.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

wait_leader() { # ADMIN SECONDS
    for _ in $(seq 1 $(($2 * 10))); do
        [ "$(curl -s "http://$1/metrics" | awk '$1 == "sizeup_leader" {print $2}')" = 1 ] && return 0
        sleep 0.1
    done
    return 1
}

deploy_fingerprint web template >"$E2E_W/before.json"
op_start opA --leader-elect
A_PID=$OP_PID
wait_leader "$OP_ADMIN" 10 || fail "A did not lead"
op_start opB --leader-elect
B_PID=$OP_PID B_ADMIN=$OP_ADMIN B_LOG=$OP_LOG
OP_PID=$A_PID
k annotate deployment web sizeup.dev/profile=web-load sizeup.dev/mode=in-place \
    "sizeup.dev/configs=1@0.2/128Mi 1@0.8/128Mi" sizeup.dev/sweep=failover-1 >/dev/null
wait_status web '^running 1/2(,|$)' 60
sleep 1
kill -KILL "$A_PID"
wait "$A_PID" 2>/dev/null
t0=$SECONDS
OP_PID=$B_PID OP_ADMIN=$B_ADMIN OP_LOG=$B_LOG
echo "  leader killed at $(ann web sizeup.dev/status)"
wait_leader "$B_ADMIN" 25 || fail "B did not take over within 25 s"
echo "  B leads $((SECONDS - t0)) s after the kill (lease 15 s)"
wait_status web '^(done|failed: .*)$' 90
[ "$(ann web sizeup.dev/status)" = done ] || fail "not resumed: $(ann web sizeup.dev/status)"
grep -q 'event=sweep.resume' "$B_LOG" || fail "B did not resume the sweep"
check_sizing web
deploy_fingerprint web template >"$E2E_W/after.json"
cmp -s "$E2E_W/before.json" "$E2E_W/after.json" || fail "template not restored exactly"
echo "  resumed by the new leader, template exactly as before"
op_stop
echo "failover: ok"
