#!/usr/bin/env bash
# The process kubelet (tests/kcluster/kubelet): its unit tests, then the kubelet against the real
# control plane (tests/kcluster/kubelet/test_kubelet.sh: node, pods on their own IPs, an Indexed
# Job, restarts, OOMKilled, resize, logs, metrics, graceful delete, runAsUser, nothing left after
# SIGTERM). Under CI=true a missing Go fails (the control plane is built from Go modules);
# elsewhere it skips, as it does without root.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/lib/common.sh"
need python3
python3 -m unittest discover -s "$ROOT/tests/kcluster/kubelet" -p 'test_units.py' 2>&1 | tail -n 3
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "the process kubelet's unit tests"
command -v go >/dev/null || {
    [ "${CI:-}" = true ] && fail "go is not installed: the real control plane is built from Go modules (Go 1.26 and the Go module proxy)"
    skip "go is not installed (the real control plane is built from Go modules)"
}
[ "$(id -u)" -eq 0 ] || skip "the process kubelet needs root (network namespaces, cgroups)"
bash "$ROOT/tests/kcluster/kubelet/test_kubelet.sh" || fail "the process kubelet against the real control plane"
echo "kc kubelet: ok"
