#!/usr/bin/env bash
# Promise: kill -9 never leaves damage. The operator is killed (SIGKILL) at 20 points of a sweep,
# 10 in each mode, found by watching the fake's request log for the operator's own requests
# (it runs under its own identity): after each kind of write, mid rollout, mid resize, mid load and
# mid restore. After each kill a new operator is started and the sweep must end (done, or failed
# with the original restored), and then: in-place, the pod template equals the original
# exactly and no sizeup bookkeeping annotation is left; clone mode, the clone is gone and the
# original unchanged; the ConfigMap holds one coherent result (state.json terminal and
# matching the status, results.json parses with one row per finished variant).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oplib.sh"
op_setup crash-kill9
op_run() { op_bg "$1"; } # LOGNAME: an operator as rel-operator, in the background
op_term() { op_stop "$OP"; OP=; }
wait_end() { wait_status '^(done|failed:.*)$' "$1"; } # SECONDS: echoes the final status

orig=$(fingerprint)
# fingerprint_of FILE: fingerprint (oplib.sh) of a Deployment already read into FILE.
fingerprint_of() { fingerprint_json <"$1"; }
restored=0 total=0 resumed=0 failedrestored=0 notes=() started=$SECONDS longest=0
point() { # MODE POINT DESCRIPTION
    local mode=$1 at=$2 what=$3 seq0 kout st verdict=ok why= t0=$SECONDS
    total=$((total + 1))
    seq0=$(last_seq)
    op_run "op-$total-a"
    k annotate --overwrite deployment web sizeup.dev/profile=rel-load sizeup.dev/mode="$mode" \
        "sizeup.dev/configs=1@0.3/128Mi 1@0.6/128Mi" "sizeup.dev/sweep=crash-$total" >/dev/null
    kout=$(python3 "$ROOT/tests/reliability/killer.py" --dir "$W/fake" --pid "$OP" \
        --user rel-operator --since "$seq0" --at "$at" --timeout 45)
    local krc=$?
    # A point never reached leaves the operator running (it idles once the sweep is done): stop
    # it, or the wait below would wait for ever.
    [ $krc -eq 0 ] || op_stop "$OP"
    wait "$OP" 2>/dev/null
    OP=
    [ $krc -eq 0 ] || { verdict=bad; why="kill point not reached: $kout"; }
    op_run "op-$total-b"
    st=$(wait_end 90)
    op_term
    case "$st" in
        done) resumed=$((resumed + 1)) ;;
        failed:*) failedrestored=$((failedrestored + 1)) ;;
        *) verdict=bad; why="$why; status '$st' after restart" ;;
    esac
    # The clone goes away (garbage collection may take a moment).
    local clone=1
    for _ in $(seq 1 20); do k get deployment web-sizeup >/dev/null 2>&1 || { clone=0; break; }; sleep 0.3; done
    [ $clone = 0 ] || { verdict=bad; why="$why; clone web-sizeup left"; }
    # One read of the Deployment for both checks (each kubectl costs a second on a busy host).
    local left
    k get deployment web -o json >"$W/dep.json"
    [ "$(fingerprint_of "$W/dep.json")" = "$orig" ] ||
        { verdict=bad; why="$why; Deployment differs from the original"; }
    left=$(python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["metadata"].get("annotations", {})
print(" ".join(k for k in a if k.startswith("sizeup.dev/") and k not in
      ("sizeup.dev/sweep", "sizeup.dev/configs", "sizeup.dev/profile", "sizeup.dev/mode",
       "sizeup.dev/status", "sizeup.dev/last-sweep")))' "$W/dep.json")
    [ -z "$left" ] || { verdict=bad; why="$why; left annotations: $left"; }
    local coh
    coh=$(k get configmap web-sizing -o json 2>/dev/null | python3 -c '
import json, sys
st = sys.argv[1]
try:
    d = json.load(sys.stdin)["data"]
    s = json.loads(d["state.json"])
    ok = s["phase"] in ("done", "failed") and (s["phase"] == "done") == (st == "done")
    if st == "done":
        r = json.loads(d["results.json"])
        ok = ok and len(r["variants"]) == s["total"] == s["done"]
    print("ok" if ok else "incoherent: phase %s done %s/%s, status %s" % (s["phase"], s.get("done"), s.get("total"), st))
except Exception as e:
    print("incoherent: %r" % e)' "$st")
    [ "$coh" = ok ] || { verdict=bad; why="$why; ConfigMap $coh"; }
    [ $verdict = ok ] && restored=$((restored + 1)) || notes+=("#$total $mode $what: $why")
    [ $((SECONDS - t0)) -gt "$longest" ] && longest=$((SECONDS - t0))
    echo "$verdict #$total $mode $what: $kout -> $st ($((SECONDS - t0)) s)"
}

# In place: the operator's writes are status patch, ConfigMap create, template save (update),
# variant patch, ConfigMap update per variant, and the restore (an update) at the end.
point in-place 'patch:deployments:web#1' 'after the first status write'
point in-place 'write:configmaps:web-sizing#1' 'after the first ConfigMap write'
point in-place 'update:deployments:web#1' 'after saving the original template'
point in-place 'patch:deployments:web#2' 'after the first variant patch'
point in-place 'patch:deployments:web#2+0.4' 'mid rollout of variant 1'
point in-place 'patch:deployments:web#2+2.0' 'mid load of variant 1'
point in-place 'write:configmaps:web-sizing#2' 'after the first variant result'
point in-place 'patch:deployments:web#4+0.4' 'mid rollout of variant 2'
point in-place 'update:deployments:web#2' 'after the restore write'
point in-place 'write:configmaps:web-sizing#3' 'after the last variant result, before the restore'
# Clone mode: status patch, ConfigMap, clone create, then the second variant (a CPU-only step)
# resized in the clone's running pod (pods/resize, no rollout), and the clone deleted.
point clone 'patch:deployments:web#1' 'after the first status write'
point clone 'write:configmaps:web-sizing#1' 'after the first ConfigMap write'
point clone 'create:deployments:*#1' 'after creating the clone'
point clone 'create:deployments:*#1+0.4' 'mid rollout of the clone'
point clone 'create:deployments:*#1+2.0' 'mid load of variant 1'
point clone 'write:configmaps:web-sizing#2' 'after the first variant result'
point clone 'patch:pods/resize:*#1' "after resizing the clone's pod to variant 2"
point clone 'patch:pods/resize:*#1+0.2' 'mid resize of variant 2 (before the kubelet applied it)'
point clone 'patch:pods/resize:*#1+1.5' 'mid load of variant 2'
point clone 'delete:deployments:web-sizeup#1' 'after deleting the clone'
for f in "$W"/op-*.log; do keep_logs crash "$f"; done
keep_logs crash "$W/fake/server.log" "$W/fake/requests.log"
verdict=PASS
[ "$restored" -eq "$total" ] || verdict=FAIL
result $verdict crash-kill9 "$restored/$total restored ($resumed resumed to done, $failedrestored failed with the original restored) in $((SECONDS - started)) s, longest point ${longest} s${notes:+; failing: ${notes[*]}}"
[ $verdict = PASS ]
