#!/usr/bin/env bash
# End to end, in place with a large pod template: the example Deployment, applied with kubectl
# (so it carries last-applied-configuration), gets 140 KiB of env values, applied again. The
# template saved for the restore would take its annotations past the API server's 262,144 bytes
# (the fake refuses that with the real 422), so sizeup keeps it in the ConfigMap
# web-sizeup-original (owned by the Deployment, managed-by sizeup) and the annotation holds only
# the ConfigMap's name and SHA-256. The sweep ends done, the template comes back byte-identical
# and the ConfigMap is gone. A second sweep whose ConfigMap is altered meanwhile is refused at
# restore: the template is not put back from it.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

k get deployment web -o json | python3 -c '
import json, sys
o = json.load(sys.stdin)
for f in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
    o["metadata"].pop(f, None)
o.pop("status", None)
o["metadata"]["annotations"].pop("kubectl.kubernetes.io/last-applied-configuration", None)
c = o["spec"]["template"]["spec"]["containers"][0]
# 140 KiB in two values: Linux refuses a single environment string past 128 KiB
# (MAX_ARG_STRLEN) at exec, in a real container as in the kubelet of the fake.
c.setdefault("env", []).extend({"name": "BIG%d" % i, "value": "b" * (70 << 10)} for i in (1, 2))
print(json.dumps(o))' >"$E2E_W/big.json"
k apply -f "$E2E_W/big.json" >/dev/null || fail "kubectl apply of the large template failed"
k rollout status deployment/web --timeout=60s >/dev/null || fail "the large Deployment did not roll out"
last=$(ann web kubectl.kubernetes.io/last-applied-configuration | wc -c)
[ "$last" -gt $((140 << 10)) ] || fail "no large last-applied-configuration ($last bytes)"
echo "  web applied with 140 KiB of env values (last-applied-configuration: $last bytes)"

deploy_fingerprint web template >"$E2E_W/before.json"
k get deployment web -o json | python3 -c '
import json, sys; print(json.dumps(json.load(sys.stdin)["spec"]["template"], sort_keys=True))' \
    >"$E2E_W/before-template.json"
op_start op
k annotate deployment web sizeup.dev/profile=web-load sizeup.dev/mode=in-place \
    "sizeup.dev/configs=1@0.2/128Mi 1@0.8/128Mi" sizeup.dev/sweep=e2e-large-1 >/dev/null
wait_status web '^running [01]/2(,|$)' 30

# While it runs: the copy in its ConfigMap, the annotation a short reference to it.
ref=$(ann web sizeup.dev/original-template)
[[ "$ref" =~ ^configmap:web-sizeup-original\ sha256:[0-9a-f]{64}$ ]] ||
    fail "the annotation is not a ConfigMap reference: '${ref:0:80}'"
k get configmap web-sizeup-original -o json | python3 -c '
import hashlib, json, sys
cm = json.load(sys.stdin)
m = cm["metadata"]
assert m["labels"]["app.kubernetes.io/managed-by"] == "sizeup", m
o = m["ownerReferences"][0]
assert (o["kind"], o["name"]) == ("Deployment", "web"), o
t = cm["data"]["template.json"]
assert hashlib.sha256(t.encode()).hexdigest() == sys.argv[1].split("sha256:")[1], "hash"
assert len(t) > 140 << 10, len(t)' "$ref" || fail "ConfigMap web-sizeup-original is not the owned copy"
echo "  saved in ConfigMap web-sizeup-original (owned, managed-by sizeup, SHA-256 matches)"

wait_status web '^done$' 120
k get deployment web -o json | python3 -c '
import json, sys; print(json.dumps(json.load(sys.stdin)["spec"]["template"], sort_keys=True))' \
    >"$E2E_W/after-template.json"
cmp -s "$E2E_W/before-template.json" "$E2E_W/after-template.json" ||
    fail "the pod template did not come back byte-identical"
[ -z "$(ann web sizeup.dev/original-template)" ] || fail "the reference annotation stayed"
k get configmap web-sizeup-original >/dev/null 2>&1 && fail "ConfigMap web-sizeup-original stayed"
echo "  done; template byte-identical ($(wc -c <"$E2E_W/after-template.json") bytes); ConfigMap deleted"

# A copy altered during the sweep: the restore refuses it.
k annotate --overwrite deployment web sizeup.dev/sweep=e2e-large-2 >/dev/null
for _ in $(seq 1 100); do
    k get configmap web-sizeup-original >/dev/null 2>&1 && break
    sleep 0.2
done
k patch configmap web-sizeup-original --type merge -p '{"data":{"template.json":"{\"spec\":{}}"}}' \
    >/dev/null || fail "could not alter the ConfigMap"
refused() {
    grep -q 'does not hold the pod template sizeup saved' "$OP_LOG" ||
        ann web sizeup.dev/status | grep -q 'does not hold the pod template sizeup saved'
}
for _ in $(seq 1 240); do
    refused && break
    sleep 0.5
done
refused || { tail -n 20 "$OP_LOG"; fail "the restore did not refuse the altered ConfigMap"; }
[ -n "$(ann web sizeup.dev/original-template)" ] || fail "the reference was dropped after a refused restore"
echo "  an altered copy: restore refused (SHA-256 differs), the reference kept for a restore by hand"
op_stop
echo "e2e large template: ok"
