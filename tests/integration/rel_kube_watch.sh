#!/usr/bin/env bash
# Reliability (fast subset): the Kubernetes client's watches under injected faults: 410 Gone as
# HTTP and as an ERROR event (re-list), watches dropped at random / timed out / bookmarks only
# (resume from the last resourceVersion), watches closing at once (back off, no hot loop).
set -u
export REL_FAST=1 KF_SCENARIOS="gone resume hot"
exec bash "$ROOT/tests/reliability/p_kube_faults.sh"
