#!/usr/bin/env bash
# The fake cluster's pods: real processes under cgroup limits, OOMKilled, crash loops, readiness,
# a held rollout past its deadline, CPU above the host: runs tests/fakeapi/test_pods.py.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
for t in python3 openssl; do
    command -v "$t" >/dev/null 2>&1 || { echo "skip: $t is not installed"; exit 77; }
done
exec python3 "$ROOT/tests/fakeapi/test_pods.py" -v
