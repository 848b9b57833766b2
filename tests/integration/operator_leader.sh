#!/usr/bin/env bash
# Leader election: two operators with --leader-elect; only the Lease holder acts on a request;
# SIGTERM releases the Lease and the other takes over at once and acts on the next request.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

wait_metric() { # ADMIN SERIES VALUE SECONDS
    for _ in $(seq 1 $(($4 * 10))); do
        [ "$(curl -s "http://$1/metrics" | awk -v s="$2" '$1 == s {print $2}')" = "$3" ] && return 0
        sleep 0.1
    done
    return 1
}

op_start opA --leader-elect
A_PID=$OP_PID A_ADMIN=$OP_ADMIN A_LOG=$OP_LOG
wait_metric "$A_ADMIN" sizeup_leader 1 10 || fail "first operator did not become leader"
op_start opB --leader-elect
B_PID=$OP_PID B_ADMIN=$OP_ADMIN B_LOG=$OP_LOG
sleep 3
[ "$(curl -s "http://$B_ADMIN/metrics" | awk '$1 == "sizeup_leader" {print $2}')" = 0 ] ||
    fail "second operator leads too"
echo "  A leads, B follows"
holder=$(k get lease sizeup-operator -o jsonpath='{.spec.holderIdentity}')
[ -n "$holder" ] || fail "no Lease holder"

# A request while A leads: A acts (the bad mode is answered at once), B does not.
k annotate deployment web sizeup.dev/mode=sideways sizeup.dev/sweep=l1 >/dev/null
for _ in $(seq 1 40); do [ "$(ann web sizeup.dev/last-sweep)" = l1 ] && break; sleep 0.25; done
[ "$(ann web sizeup.dev/last-sweep)" = l1 ] || fail "leader did not act"
grep -q 'event=sweep.rejected' "$A_LOG" || fail "A did not handle the request"
grep -q 'event=sweep.rejected' "$B_LOG" && fail "B acted without the Lease"
echo "  request handled by the leader only"

# SIGTERM A: it releases the Lease; B takes over well before the lease duration (15 s).
OP_PID=$A_PID
t0=$SECONDS
op_stop
grep -q 'event=released' "$A_LOG" || fail "A did not release the Lease"
OP_PID=$B_PID OP_ADMIN=$B_ADMIN OP_LOG=$B_LOG
wait_metric "$B_ADMIN" sizeup_leader 1 8 || fail "B did not take over within 8 s"
echo "  B took over $((SECONDS - t0)) s after A's SIGTERM"
k annotate --overwrite deployment web sizeup.dev/sweep=l2 >/dev/null
for _ in $(seq 1 40); do [ "$(ann web sizeup.dev/last-sweep)" = l2 ] && break; sleep 0.25; done
[ "$(ann web sizeup.dev/last-sweep)" = l2 ] || fail "new leader did not act"
grep -q 'event=sweep.rejected' "$B_LOG" || fail "B did not handle the request"
holder2=$(k get lease sizeup-operator -o jsonpath='{.spec.holderIdentity}')
[ "$holder2" != "$holder" ] || fail "Lease holder unchanged ($holder2)"
op_stop
echo "leader election: ok"
