#!/usr/bin/env bash
# `make bench`: every benchmark in bench/ (loadgen.sh first, then the other bench/*.sh), figures
# for bench/RESULTS.md. Each script prints its settings, per-run figures and a summary; see each
# script's header for its knobs. BENCH="loadgen" (names without .sh) runs only those.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
rc=0
names=${BENCH:-loadgen $(cd "$root/bench" && ls ./*.sh | sed 's|^\./||; s|\.sh$||' | grep -v -x -e run -e loadgen)}
for n in $names; do
    echo "== bench/$n.sh"
    SIZEUP="$root/build/sizeup" "$root/bench/$n.sh" || { echo "bench: $n failed"; rc=1; }
done
exit $rc
