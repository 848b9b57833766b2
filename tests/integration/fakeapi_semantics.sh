#!/usr/bin/env bash
# API semantics (conflicts, watch, 410, bookmarks, GC, generation, patches, faults, tokens):
# runs tests/fakeapi/test_semantics.py against a fake API server it starts itself.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
for t in python3 openssl; do
    command -v "$t" >/dev/null 2>&1 || { echo "skip: $t is not installed"; exit 77; }
done
exec python3 "$ROOT/tests/fakeapi/test_semantics.py" -v
