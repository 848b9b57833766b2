#!/usr/bin/env bash
# Reliability, fast subset of `make reliability`: SIGTERM during a held rollout: exit 0 within 10
# s, template restored, Lease released.
# Runs tests/reliability/p_sigterm.sh with its own log directory, then the credential scan over
# those logs. Exit 0 only when every promise line is PASS.
set -u
export REL_FAST=1 
export REL_LOGS=$(mktemp -d /tmp/sizeup-rel-sigterm.XXXXXX)
export REL_RESULTS=$REL_LOGS/results REL_SECRETS=$REL_LOGS/.secrets
trap 'rm -rf "$REL_LOGS"' EXIT
: >"$REL_RESULTS"
: >"$REL_SECRETS"
bash "$ROOT/tests/reliability/p_sigterm.sh"
rc=$?
bash "$ROOT/tests/reliability/p_logscan.sh" || rc=1
grep -q '^FAIL' "$REL_RESULTS" && rc=1
exit $rc
