#!/usr/bin/env bash
# The fake API server refuses a ConfigMap whose data passes 1 MiB, as the real one does:
# runs tests/fakeapi/test_configmap_size.py against a fake it starts itself.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
for t in python3 openssl; do
    command -v "$t" >/dev/null 2>&1 || { echo "skip: $t is not installed"; exit 77; }
done
exec python3 "$ROOT/tests/fakeapi/test_configmap_size.py" -v
