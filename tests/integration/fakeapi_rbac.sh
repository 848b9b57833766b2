#!/usr/bin/env bash
# RBAC in the fake API server: the rule matcher (tests/fakeapi/test_rbac.py), then kubectl as a
# service account: `auth can-i` answers from the stored Roles, a denied verb gets a 403 Status.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/fakeapi/lib.sh"
fake_require
python3 "$ROOT/tests/fakeapi/test_rbac.py" -v

WORK=$(mktemp -d /tmp/fakeapi-rbac.XXXXXX)
cleanup() { fake_stop; rm -rf "$WORK"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
fake_start "$WORK/fake" --no-kubelet
cat >"$WORK/rbac.yaml" <<'YAML'
apiVersion: v1
kind: ServiceAccount
metadata:
  name: op
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: op
rules:
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: op
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: op}
subjects:
- {kind: ServiceAccount, name: op, namespace: default}
YAML
k apply -f "$WORK/rbac.yaml"
k create deployment web --image=example/web:1 --dry-run=client -o json | k apply -f -
fakectl POST /fake/tokens "{\"user\":\"system:serviceaccount:default:op\",\"kubeconfig\":\"$WORK/sa.kubeconfig\"}" >/dev/null
sa() { kubectl --kubeconfig "$WORK/sa.kubeconfig" --cache-dir "$WORK/kcache-sa" "$@"; }
[ "$(sa auth can-i list deployments)" = yes ] || fail "can-i list"
[ "$(sa auth can-i patch deployments || true)" = no ] || fail "can-i patch"
sa get deployments web -o name
if out=$(sa annotate deployment web sizeup.dev/sweep=now 2>&1); then fail "annotate allowed"; fi
echo "$out"
case $out in
*'deployments.apps "web" is forbidden: User "system:serviceaccount:default:op" cannot patch resource "deployments" in API group "apps" in the namespace "default"'*) ;;
*) fail "unexpected denial: $out" ;;
esac
fakectl GET /fake/log | grep -q '"code": 403' || fail "403 not in the request log"
echo "fakeapi_rbac: ok"
