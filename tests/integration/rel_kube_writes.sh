#!/usr/bin/env bash
# Reliability (fast subset): the Kubernetes client's requests under injected faults: 409 within
# and past the retry budget, 429 Retry-After, 500/503 backoff (delays measured), token rotation
# and an empty or missing token file, a wrong CA and a host-name mismatch.
set -u
export REL_FAST=1 KF_SCENARIOS="conflict backoff token tls"
exec bash "$ROOT/tests/reliability/p_kube_faults.sh"
