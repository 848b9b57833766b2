#!/usr/bin/env bash
# Promise: with --leader-elect, one operator works and the other idles; when the leader is
# killed (-9) mid-sweep, the other takes over within the lease duration (15 s) and finishes the
# sweep. Each operator runs under its own identity, so the fake's request log shows who wrote.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oplib.sh"
op_setup leader
fakectl POST /fake/tokens "{\"user\":\"rel-operator-b\",\"groups\":[\"system:masters\"],\"file\":\"$W/b-token\",\"kubeconfig\":\"$W/b-kubeconfig\"}" >/dev/null
remember_secret "$W/b-token"
orig=$(fingerprint)
LEASE=(--leader-elect --lease-name sizeup-leader --lease-namespace default)
op_bg op-a "${LEASE[@]}"
A=$OP
for _ in $(seq 1 50); do grep -q 'state=acquired' "$W/op-a.log" && break; sleep 0.2; done
"$SIZEUP" operator --kubeconfig "$W/b-kubeconfig" --admin-addr off "${LEASE[@]}" >"$W/op-b.log" 2>&1 &
B=$!
OPS+=("$B")
sleep 2
seq0=$(last_seq)
k annotate --overwrite deployment web sizeup.dev/profile=rel-load sizeup.dev/mode=in-place \
    "sizeup.dev/configs=1@0.3/128Mi 1@0.6/128Mi" sizeup.dev/sweep=leader-1 >/dev/null
kout=$(python3 "$ROOT/tests/reliability/killer.py" --dir "$W/fake" --pid "$A" --user rel-operator \
    --since "$seq0" --at 'patch:deployments:web#2+1.0' --timeout 60)
t_kill=$(now_ms)
wait "$A" 2>/dev/null
st_kill=$(ann sizeup.dev/status)
took=
for _ in $(seq 1 300); do
    if grep -q 'state=acquired' "$W/op-b.log"; then took=$(($(now_ms) - t_kill)); break; fi
    sleep 0.1
done
st=$(wait_status '^(done|failed:.*)$' 90)
writes_b_before=$(fakectl GET "/fake/log?since=$seq0" | python3 -c '
import json, sys
e = json.load(sys.stdin)["entries"]
print(sum(1 for x in e if x.get("user") == "rel-operator-b" and x.get("verb") in
          ("create", "update", "patch", "delete") and x.get("resource") != "leases" and x["time"] < float(sys.argv[1]) / 1000))' "$t_kill")
writes_a=$(fakectl GET "/fake/log?since=$seq0" | python3 -c '
import json, sys
print(sum(1 for x in json.load(sys.stdin)["entries"] if x.get("user") == "rel-operator" and
          x.get("verb") in ("create", "update", "patch", "delete") and x.get("resource") != "leases"))')
kill -TERM "$B" 2>/dev/null
wait "$B" 2>/dev/null
same=no
[ "$(fingerprint)" = "$orig" ] && same=yes
keep_logs leader "$W/op-a.log" "$W/op-b.log" "$W/fake/server.log" "$W/fake/requests.log"
verdict=PASS
[ -n "$took" ] && [ "$took" -le 15000 ] && [ "$st" = done ] && [ "$same" = yes ] &&
    [ "$writes_b_before" = 0 ] && [ "$writes_a" -gt 0 ] || verdict=FAIL
result $verdict leader-election "leader A wrote $writes_a times, follower B $writes_b_before before the kill; A killed (-9) at '$st_kill' (${kout%% (*}); B took over after ${took:-never} ms (lease 15000 ms) and finished: status '$st', template restored: $same"
[ $verdict = PASS ]
