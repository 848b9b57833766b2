#!/usr/bin/env bash
# The committed plain-YAML install (manifests/) is exactly what charts/sizeup renders now, and
# `kubectl kustomize manifests/` builds it.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/policy/env.sh
. "$ROOT/tests/policy/env.sh"
need_helm
need_kubectl

"$ROOT/scripts/render-manifests.sh" --check
kinds=$(kubectl kustomize "$ROOT/manifests" | grep -c '^kind:')
echo "kubectl kustomize manifests/: $kinds objects"
[ "$kinds" -ge 8 ] || { echo "expected at least 8 objects from kustomize, got $kinds"; exit 1; }
