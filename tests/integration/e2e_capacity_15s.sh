#!/usr/bin/env bash
# slow: make e2e
# e2e_capacity.sh at a real metrics-server's resolution: the fake scrapes every 15 s, so each
# variant's first boundary repeat is held over 32 s (two windows and the timestamps' slack) and
# CPU at capacity is still known for both variants.
set -u
export METRICS_WINDOW=15
exec bash "$(dirname "$0")/e2e_capacity.sh"
