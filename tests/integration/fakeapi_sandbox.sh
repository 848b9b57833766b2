#!/usr/bin/env bash
# What the fake's kubelet gives a pod's process: the image's entrypoint and cmd with the pod's
# command and args, the ServiceAccount volume in a private mount namespace, its token bound to the
# pod, KUBERNETES_SERVICE_*, and wildcard binds confined to the pod address: runs
# tests/fakeapi/test_sandbox.py.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/fakeapi/lib.sh"
fake_require
exec python3 "$ROOT/tests/fakeapi/test_sandbox.py" -v
