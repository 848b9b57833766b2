#!/usr/bin/env bash
# `make bench`: every benchmark in bench/, figures for bench/RESULTS.md. Each script prints
# its settings, per-run figures and a summary. Short by default; see each script's header.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
rc=0
echo "== bench/loadgen.sh: sizeup loadtest vs wrk, ab, hey, autocannon"
"$root/bench/loadgen.sh" "$root/build/sizeup" || rc=1
exit $rc
