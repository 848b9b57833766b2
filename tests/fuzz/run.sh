#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS (or, with RUNS set, for that many executions) over its
# committed seed corpus in tests/fuzz/corpus/<target>/, then prints one line per target.
# New inputs found go to build/fuzz/out/corpus/<target>/, never into the committed corpus.
# Usage: tests/fuzz/run.sh SECONDS TARGET...
set -u
secs=$1; shift
root=$(cd "$(dirname "$0")/../.." && pwd)
rc=0
for bin in "$@"; do
    name=$(basename "$bin")
    seeds="$root/tests/fuzz/corpus/$name"
    work="$root/build/fuzz/out/corpus/$name"
    mkdir -p "$seeds" "$work"
    limit=(-max_total_time="$secs")
    [ -n "${RUNS:-}" ] && limit=(-runs="$RUNS")
    # shellcheck disable=SC2206
    [ -n "${FUZZ_SEED:-}" ] && limit+=(-seed="$FUZZ_SEED")
    log="$root/build/fuzz/out/$name.log"
    if "$bin" "${limit[@]}" -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$root/build/fuzz/out/$name-" \
        "$work" "$seeds" >"$log" 2>&1; then
        execs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -n1)
        echo "fuzz: $name ok, ${execs:-?} executions, 0 crashes"
    else
        echo "fuzz: $name FAILED (see $log)"; tail -n 30 "$log"; rc=1
    fi
done
exit $rc
