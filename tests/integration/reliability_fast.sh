#!/usr/bin/env bash
# Reliability, the fast subset of `make reliability` that `make test` runs: the promise scripts
# below (tests/reliability/p_NAME.sh), each in its short variant (REL_FAST=1), then the
# credential scan over all their logs. One line per promise; exit 0 only when every one is PASS.
set -u
: "${ROOT:?}" "${BUILD:?}"
fast=(
    loadgen     # the load generator against misbehaving targets: right error class, no hang
    kube_faults # the Kubernetes client under 410, dropped watches, 409, 429/5xx, token rotation, TLS
    scope       # nothing written to a Deployment without sizeup.dev/sweep or outside --namespace
    bad_input   # a bad sizeup.dev/ value: failed: <reason>, a Warning Event, no other write
    drift       # a user's edit during an in-place sweep is kept at the restore, reported as drift
    sigterm     # SIGTERM during a held rollout: exit 0 within 10 s, template restored
    leader      # kill -9 of the leader mid-sweep: the other replica takes over and finishes
)
logs=$(mktemp -d /tmp/sizeup-rel-fast.XXXXXX)
trap 'rm -rf "$logs"' EXIT
REL_FAST=1 REL_LOGS=$logs bash "$ROOT/tests/reliability/run.sh" "$BUILD" "${fast[@]}"
