#!/usr/bin/env bash
# End to end, deployment-patch.yaml: after a sweep, the ConfigMap's patch is applied unchanged
# both ways a user would: `kubectl patch --type strategic --patch-file` and a kustomize
# `patches:` entry rendered by `kubectl kustomize` and applied with `kubectl apply`. Either way
# the Deployment rolls out with the recommended limits, requests and workers env, and keeps
# everything the patch does not name (image, other env, probes, replicas).
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

op_start op
k annotate deployment web sizeup.dev/profile=web-load "sizeup.dev/configs=2@0.3/96Mi" \
    sizeup.dev/sweep=patch-1 >/dev/null
wait_status web '^done$' 60
op_stop
k get configmap web-sizing -o json | python3 -c '
import json, sys; sys.stdout.write(json.load(sys.stdin)["data"]["deployment-patch.yaml"])' \
    >"$E2E_W/deployment-patch.yaml" || fail "no deployment-patch.yaml in the ConfigMap"
sed 's/^/    /' "$E2E_W/deployment-patch.yaml"

# What the patch says, read as YAML, and what the Deployment must look like after it.
check() {
    k rollout status deployment/web --timeout=60s >/dev/null || fail "$1: no rollout"
    k get deployment web -o json >"$E2E_W/after.json"
    python3 - "$E2E_W/deployment-patch.yaml" "$E2E_W/after.json" "$1" <<'PY' || fail "$1: wrong result"
import json, sys, yaml
patch = yaml.safe_load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))
assert "replicas" not in patch["spec"], "replicas without a target"
pc = patch["spec"]["template"]["spec"]["containers"][0]
c = [c for c in d["spec"]["template"]["spec"]["containers"] if c["name"] == pc["name"]]
assert len(d["spec"]["template"]["spec"]["containers"]) == 1 and c, "container list changed"
c = c[0]
env = {e["name"]: e.get("value") for e in c["env"]}
assert env["WORKERS"] == "2", env
assert env["GREETING"] == "sized by sizeup", "other env lost: %r" % env
assert c["resources"] == pc["resources"], (c["resources"], pc["resources"])
assert c["resources"]["limits"] == {"cpu": "300m", "memory": "96Mi"}, c["resources"]
assert c["image"] == "example/web:1" and c.get("readinessProbe"), "image or probe lost"
assert d["spec"]["replicas"] == 1
print("  %s: WORKERS=2, limits %s, requests %s; image, GREETING, probe kept"
      % (sys.argv[3], c["resources"]["limits"], c["resources"]["requests"]))
PY
}

# 1. kubectl patch, the file as it is.
k patch deployment web --type strategic --patch-file "$E2E_W/deployment-patch.yaml" >/dev/null ||
    fail "kubectl patch refused deployment-patch.yaml"
check "kubectl patch --type strategic"

# 2. kustomize: back to the manifest, then the manifest with the patch under patches:.
k apply -f "$ROOT/manifests/examples/web.yaml" >/dev/null
k rollout status deployment/web --timeout=60s >/dev/null
[ "$(k get deployment web -o jsonpath='{.spec.template.spec.containers[0].resources.limits.cpu}')" = 500m ] ||
    fail "the manifest did not put the limits back"
mkdir -p "$E2E_W/kust"
cp "$ROOT/manifests/examples/web.yaml" "$E2E_W/deployment-patch.yaml" "$E2E_W/kust/"
cat >"$E2E_W/kust/kustomization.yaml" <<'EOF'
resources:
  - web.yaml
patches:
  - path: deployment-patch.yaml
EOF
k kustomize "$E2E_W/kust" >"$E2E_W/rendered.yaml" || fail "kubectl kustomize refused the patch"
grep -q 'cpu: 300m' "$E2E_W/rendered.yaml" || fail "kustomize output lacks the patched limit"
k apply -f "$E2E_W/rendered.yaml" >/dev/null || fail "kubectl apply of the kustomize output failed"
check "kustomize patches: + kubectl apply"
echo "e2e deployment-patch: ok"
