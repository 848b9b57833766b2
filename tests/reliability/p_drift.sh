#!/usr/bin/env bash
# Promise: a user's edit during an in-place sweep is not overwritten. While the second variant
# runs, the user changes an env var of the pod template (kubectl set env). At the restore the
# operator must keep that edit, put back only what it changed (the workers env and the
# container's CPU/memory resources), and record the drift in a Warning Event.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oplib.sh"
op_setup drift
tmpl() { k get deployment web -o json | python3 -c '
import json, sys
c = json.load(sys.stdin)["spec"]["template"]["spec"]["containers"][0]
env = {e["name"]: e.get("value") for e in c.get("env", [])}
print(json.dumps({"GREETING": env.get("GREETING"), "WORKERS": env.get("WORKERS"),
                  "resources": c.get("resources")}, sort_keys=True))'; }
before=$(tmpl)
op_bg op-drift
seq0=$(last_seq)
k annotate --overwrite deployment web sizeup.dev/profile=rel-load sizeup.dev/mode=in-place \
    "sizeup.dev/configs=1@0.3/128Mi 1@0.6/128Mi" sizeup.dev/sweep=drift-1 >/dev/null
# After the second variant's patch (the operator's fourth patch of web), the user edits.
for _ in $(seq 1 150); do
    n=$(fakectl GET "/fake/log?since=$seq0" | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin)["entries"] if e.get("user") == "rel-operator"
          and e.get("verb") == "patch" and e.get("name") == "web"))')
    [ "$n" -ge 4 ] && break
    sleep 0.2
done
sleep 0.5
k set env deployment/web GREETING="edited by a user" >/dev/null
st=$(wait_status '^(done|failed:.*)$' 90)
after=$(tmpl)
kill -TERM "$OP"; wait "$OP" 2>/dev/null
events=$(k get events.events.k8s.io -o json | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin)["items"] if e.get("reason") == "TemplateDrift"
          and e.get("type") == "Warning" and e.get("regarding", {}).get("name") == "web"))')
fig=$(python3 - "$before" "$after" <<'PY'
import json, sys
b, a = json.loads(sys.argv[1]), json.loads(sys.argv[2])
kept = a["GREETING"] == "edited by a user"
ours = a["WORKERS"] == b["WORKERS"] and a["resources"] == b["resources"]
print("%s user's edit kept: %s; workers env and resources back to the original: %s" %
      ("ok" if kept and ours else "bad", "yes" if kept else "NO (GREETING=%r)" % a["GREETING"],
       "yes" if ours else "NO (%s)" % json.dumps(a)))
PY
)
keep_logs drift "$W/op-drift.log" "$W/fake/server.log" "$W/fake/requests.log"
verdict=PASS
[[ "$fig" == ok* ]] && [ "$events" -ge 1 ] && [ "$st" = done ] || verdict=FAIL
result $verdict drift "${fig#* }; TemplateDrift Warning Events: $events; status '$st'"
[ $verdict = PASS ]
