#!/usr/bin/env bash
# RBAC: a denied verb gets a 403 Status; runs tests/fakeapi/test_rbac.py against its own fake.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
for t in python3 openssl; do
    command -v "$t" >/dev/null 2>&1 || { echo "skip: $t is not installed"; exit 77; }
done
exec python3 "$ROOT/tests/fakeapi/test_rbac.py" -v
