#!/usr/bin/env bash
# The fake cluster's in-place pod resize (pods/resize with Kubernetes 1.35's rules), including
# `kubectl patch --subresource resize`: runs tests/fakeapi/test_resize.py.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
for t in python3 openssl kubectl; do
    command -v "$t" >/dev/null 2>&1 || { echo "skip: $t is not installed"; exit 77; }
done
exec python3 "$ROOT/tests/fakeapi/test_resize.py" -v
