#!/usr/bin/env bash
# The fake API server (tests/fakeapi) against the real one (tests/kcluster): the same scripted
# calls, raw and through kubectl and the official Python client (creates, each patch type,
# watches, conflicts, the size limits, LimitRange / ResourceQuota / Pod Security refusals, RBAC
# denials, impersonation), compared by status code, reason and key fields
# (tests/kcluster/differential.py). A difference fails unless tests/kcluster/differential-allow.txt
# names it with its reason; an entry that no longer differs fails too.
# Under CI=true a missing Go fails (the control plane is built from Go modules); elsewhere it
# skips. No pods run: both servers start without a kubelet.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/lib/common.sh"
. "$ROOT/tests/fakeapi/lib.sh"
need python3 openssl ip curl
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import kubernetes' 2>/dev/null ||
    skip "Debian's python3-kubernetes is not installed"
command -v go >/dev/null || {
    [ "${CI:-}" = true ] && fail "go is not installed: the real control plane is built from Go modules (Go 1.26 and the Go module proxy)"
    skip "go is not installed (the real control plane is built from Go modules)"
}
[ "$(id -u)" -eq 0 ] || skip "the real control plane's network needs root"
KC=$ROOT/tests/kcluster/kcluster.sh
workdir W kc-diff
on_exit "$KC" down "$W/kc"
"$KC" up "$W/kc" --no-kubelet || fail "kcluster.sh up failed (logs in $W/kc/logs)"
fake_start "$W/fake" --no-kubelet || fail "the fake API server did not start"
on_exit fake_stop
# shellcheck source=/dev/null
. "$W/kc/env" # the release's kubectl first on PATH, for both servers
python3 "$ROOT/tests/kcluster/differential.py" --fake-dir "$W/fake" --real-dir "$W/kc" \
    --json "$W/diff.json" || fail "the fake and the real API server differ (above)"
echo "kc differential: ok"
