#!/usr/bin/env bash
# Starting the fake with its inputs as files: a YAML image map, objects preloaded from
# `kubectl kustomize` output (multi-document YAML), fault rules from a JSON file.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/fakeapi/lib.sh"
fake_require
WORK=$(mktemp -d /tmp/fakeapi-preload.XXXXXX)
cleanup() { fake_stop; rm -rf "$WORK"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; tail -n 20 "$WORK/fake/server.log" >&2; exit 1; }

mkdir -p "$WORK/kust"
cat >"$WORK/images.yaml" <<'YAML'
# image -> command; ${VAR} expands from the container's environment
myorg/api:*:
  command: [python3, "${FAKEAPI_APPS}/web.py"]
  env:
    GREETING: from-yaml-map
YAML
cat >"$WORK/kust/app.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
spec:
  replicas: 1
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: myorg/api:2.1
        ports:
        - containerPort: 9000
YAML
cat >"$WORK/kust/kustomization.yaml" <<'YAML'
resources: [app.yaml]
configMapGenerator:
- name: profile
  namespace: shop
  literals:
  - |-
    profile.yaml=users: 10
    duration: 30s
YAML
kubectl kustomize "$WORK/kust" >"$WORK/preload.yaml"
echo '[{"type":"error","code":503,"count":1,"match":{"resource":"secrets"}}]' >"$WORK/faults.json"

fake_start "$WORK/fake" --images "$WORK/images.yaml" --preload "$WORK/preload.yaml" \
    --faults "$WORK/faults.json"
k -n shop rollout status deployment/api --timeout=60s
ip=$(k -n shop get pods -l app=api -o jsonpath='{.items[0].status.podIP}')
out=$(curl -sf --max-time 5 "http://$ip:9000/")
case $out in "hello from api-"*" from-yaml-map") ;; *) fail "pod answered '$out'" ;; esac
cm=$(k -n shop get configmaps -o name | grep profile-)
prof=$(k -n shop get "$cm" -o jsonpath='{.data.profile\.yaml}')
[ "$prof" = "$(printf 'users: 10\nduration: 30s')" ] || fail "preloaded profile: $prof"
if k get secrets 2>/dev/null; then fail "the 503 fault did not fire"; fi
k get secrets >/dev/null || fail "the 503 fault fired twice"
echo "fakeapi_preload: ok"
