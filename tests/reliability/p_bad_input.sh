#!/usr/bin/env bash
# Promise: a bad sizeup.dev/ annotation value changes nothing. For each bad value the operator
# must set sizeup.dev/status to "failed: <reason>" naming the annotation, emit a Warning Event
# about the Deployment, and make no other write: the operator runs under its own identity, so
# the fake's request log shows exactly its writes; the only ones allowed are the status patch
# and the Event (the Deployment's spec must not change, no clone, no ConfigMap).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oplib.sh"
op_setup bad-input
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: broken-profile}
data:
  profile.yaml: "users: [1, 2"
---
apiVersion: v1
kind: ConfigMap
metadata: {name: no-key-profile}
data:
  other.yaml: "users: 2"
YAML
# The spec's digest, not the generation: a Deployment's generation also counts annotation edits.
gen0=$(k get deployment web -o jsonpath='{.spec}' | sha256sum | cut -c1-12)
op_bg operator

i=0 ok=0 bad=0 details=()
check_bad() { # KEY VALUE EXPECTED-SUBSTRING
    local key=$1 value=$2 want=$3 s seq0 verdict=ok why=
    i=$((i + 1))
    seq0=$(last_seq)
    k annotate --overwrite deployment web "sizeup.dev/$key=$value" "sizeup.dev/sweep=bad-$i" >/dev/null
    for _ in $(seq 1 80); do
        [ "$(ann sizeup.dev/last-sweep)" = "bad-$i" ] && break
        sleep 0.25
    done
    sleep 0.5
    s=$(ann sizeup.dev/status)
    [[ "$s" == failed:* ]] || { verdict=bad; why="status '$s'"; }
    [[ "$s" == *"$want"* ]] || { verdict=bad; why="$why reason '$s' lacks '$want'"; }
    local w
    w=$(fakectl GET "/fake/log?since=$seq0" | python3 -c '
import json, sys
e = [x for x in json.load(sys.stdin)["entries"] if x.get("user") == "rel-operator"
     and x.get("verb") in ("create", "update", "patch", "delete")]
other = [x for x in e if not ((x.get("verb") == "patch" and x.get("resource") == "deployments"
         and x.get("name") == "web") or (x.get("verb") == "create" and x.get("resource") == "events"))]
ev = [x for x in e if x.get("resource") == "events"]
print(len(ev), len(other), ";".join("%s %s/%s" % (x["verb"], x.get("resource"), x.get("name", "")) for x in other))')
    read -r nev nother list <<<"$w"
    [ "${nev:-0}" -ge 1 ] || { verdict=bad; why="$why no Event created"; }
    [ "${nother:-1}" -eq 0 ] || { verdict=bad; why="$why other writes: $list"; }
    if [ $verdict = ok ]; then ok=$((ok + 1)); else bad=$((bad + 1)); details+=("$key='$value': $why"); fi
    echo "$verdict $key='$value' -> $s (events $nev, other writes ${nother:-?})"
    k annotate deployment web "sizeup.dev/$key-" >/dev/null
}

check_bad configs '2@x/512Zi' 'configs'
check_bad configs '' 'configs'
check_bad configs '0@1/128Mi' 'configs'
check_bad workers-env '' 'workers-env'
check_bad mode 'sideways' 'mode'
check_bad mode '' 'mode'
check_bad port '70000' 'port'
check_bad port '0' 'port'
check_bad port 'http' 'port'
check_bad target 'ftp://example' 'target'
check_bad target 'http://127.0.0.1:1/' 'target'
check_bad profile 'no-such-profile' 'profile'
check_bad profile 'broken-profile' 'profile'
check_bad profile 'no-key-profile' 'profile'
check_bad container 'nope' 'container'
check_bad values-paths 'cpu=x' 'values-paths'

# Warning Events about web, by reason.
warn=$(k get events.events.k8s.io -o json | python3 -c '
import json, sys
n = sum(1 for e in json.load(sys.stdin)["items"] if e.get("type") == "Warning"
        and e.get("regarding", {}).get("name") == "web")
print(n)')
gen1=$(k get deployment web -o jsonpath='{.spec}' | sha256sum | cut -c1-12)
clone=$(k get deployment web-sizeup -o name 2>/dev/null)
cm=$(k get configmap web-sizing -o name 2>/dev/null)
op_stop "$OP"
keep_logs bad-input "$W/operator.log" "$W/fake/server.log" "$W/fake/requests.log"
verdict=PASS
[ $bad -eq 0 ] && [ "$gen0" = "$gen1" ] && [ -z "$clone" ] && [ -z "$cm" ] && [ "$warn" -ge "$i" ] || verdict=FAIL
result $verdict bad-annotations "$ok/$i bad values rejected with 'failed: <reason>' + an Event and no other write; $warn Warning Events; spec digest $gen0 -> $gen1; clone ${clone:-none}; ConfigMap ${cm:-none}${details:+; failing: ${details[*]}}"
[ $verdict = PASS ]
