#!/usr/bin/env bash
# Promise: SIGTERM during a rollout wait shuts down cleanly. An in-place sweep's first variant
# is held in its rollout (the fake's fake.sizeup.dev/stuck annotation keeps the new pods
# Pending); the leader-elected operator gets SIGTERM while it waits. Within 10 s it must exit 0,
# with the pod template restored (or the progress persisted as running k/n) and the Lease
# released (no holder).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oplib.sh"
op_setup sigterm
orig=$(fingerprint)
k annotate deployment web fake.sizeup.dev/stuck=true >/dev/null
op_bg op-term --leader-elect --lease-name sizeup-leader --lease-namespace default
seq0=$(last_seq)
k annotate --overwrite deployment web sizeup.dev/profile=rel-load sizeup.dev/mode=in-place \
    "sizeup.dev/configs=1@0.3/128Mi 1@0.6/128Mi" sizeup.dev/sweep=term-1 >/dev/null
# Wait for the variant patch (the operator's second patch of web), then into the rollout wait.
for _ in $(seq 1 100); do
    n=$(fakectl GET "/fake/log?since=$seq0" | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin)["entries"] if e.get("user") == "rel-operator"
          and e.get("verb") == "patch" and e.get("name") == "web"))')
    [ "$n" -ge 2 ] && break
    sleep 0.2
done
sleep 2
st_before=$(ann sizeup.dev/status)
t0=$(now_ms)
kill -TERM "$OP"
code=
for _ in $(seq 1 150); do kill -0 "$OP" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$OP" 2>/dev/null; then kill -KILL "$OP"; code=killed; fi
wait "$OP"
rc=$?
ms=$(($(now_ms) - t0))
k annotate deployment web fake.sizeup.dev/stuck- >/dev/null
st=$(ann sizeup.dev/status)
holder=$(k get lease sizeup-leader -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)
same=no
[ "$(fingerprint)" = "$orig" ] && same=yes
phase=$(k get configmap web-sizing -o json 2>/dev/null | python3 -c 'import json,sys; print(json.loads(json.load(sys.stdin)["data"]["state.json"])["phase"])' 2>/dev/null)
keep_logs sigterm "$W/op-term.log" "$W/fake/server.log" "$W/fake/requests.log"
verdict=PASS
[ -z "$code" ] && [ "$rc" -eq 0 ] && [ "$ms" -le 10000 ] || verdict=FAIL
[ "$same" = yes ] || [[ "$st" == running* ]] || verdict=FAIL
[ -z "$holder" ] || verdict=FAIL
grep -q 'event=released' "$W/op-term.log" || verdict=FAIL
result $verdict sigterm "SIGTERM in a rollout wait (status '$st_before'): exit ${code:-$rc} after $ms ms (budget 10000), template restored: $same, status '$st', state.json phase '${phase:-none}', Lease holder after exit: '${holder:-none}'"
[ $verdict = PASS ]
