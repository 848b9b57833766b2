#!/usr/bin/env bash
# Reliability (fast subset): the load generator against misbehaving targets (garbage, a response
# with no end, headers over the cap, a reset mid-body, never answering, never accepting, a
# slowloris trickle): right error class, no crash, no hang. See tests/reliability/p_loadgen.sh.
set -u
export REL_FAST=1
exec bash "$ROOT/tests/reliability/p_loadgen.sh"
