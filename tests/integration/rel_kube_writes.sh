#!/usr/bin/env bash
# Reliability, fast subset of `make reliability`: the Kubernetes client's requests under injected
# faults (409 budget, 429 Retry-After, 5xx backoff, token rotation, wrong CA and host name).
# Runs tests/reliability/p_kube_faults.sh with its own log directory, then the credential scan over
# those logs. Exit 0 only when every promise line is PASS.
set -u
export REL_FAST=1 KF_SCENARIOS="conflict backoff token tls"
export REL_LOGS=$(mktemp -d /tmp/sizeup-rel-kube_writes.XXXXXX)
export REL_RESULTS=$REL_LOGS/results REL_SECRETS=$REL_LOGS/.secrets
trap 'rm -rf "$REL_LOGS"' EXIT
: >"$REL_RESULTS"
: >"$REL_SECRETS"
bash "$ROOT/tests/reliability/p_kube_faults.sh"
rc=$?
bash "$ROOT/tests/reliability/p_logscan.sh" || rc=1
grep -q '^FAIL' "$REL_RESULTS" && rc=1
exit $rc
