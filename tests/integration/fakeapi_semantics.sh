#!/usr/bin/env bash
# API semantics of the fake API server (conflicts, watch, 410, bookmarks, GC, generation,
# patches, faults, tokens, request log, the 1 MiB ConfigMap limit, the 256 KiB annotations
# limit), plus its patch and YAML helpers: runs
# tests/fakeapi/test_{patch,miniyaml,configmap_size,annotation_size,semantics}.py, the last three
# against a fake each starts itself.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
for t in python3 openssl; do
    command -v "$t" >/dev/null 2>&1 || { echo "skip: $t is not installed"; exit 77; }
done
python3 "$ROOT/tests/fakeapi/test_patch.py" -v
python3 "$ROOT/tests/fakeapi/test_miniyaml.py" -v
python3 "$ROOT/tests/fakeapi/test_configmap_size.py" -v
python3 "$ROOT/tests/fakeapi/test_annotation_size.py" -v
exec python3 "$ROOT/tests/fakeapi/test_semantics.py" -v
