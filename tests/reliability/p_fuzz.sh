#!/usr/bin/env bash
# Promise: every fuzz target (tests/fuzz/fuzz_*.c) runs a fixed budget of executions (RUNS,
# default 1,000,000) under ASan+UBSan over its committed seed corpus with zero crashes. Two
# targets run at a time (the machine has two cores). One result line per target with its count;
# a crash fails the target and its reproducer is kept in build/fuzz/out/.
set -u
. "$(dirname "$0")/lib.sh"
RUNS=${FUZZ_RUNS:-1000000}
cd "$ROOT" || exit 1
if ! make --no-print-directory fuzz-build >"$REL_LOGS/fuzz-build.log" 2>&1; then
    result FAIL fuzz-build "make fuzz-build failed: $(tail -n 3 "$REL_LOGS/fuzz-build.log" | tr '\n' ' ')"
    exit 1
fi
mapfile -t bins < <(ls build/fuzz/fuzz_* 2>/dev/null | grep -v '\.' )
[ ${#bins[@]} -gt 0 ] || { result FAIL fuzz "no fuzz targets built"; exit 1; }
W=$(mktemp -d /tmp/sizeup-rel-fuzz.XXXXXX)
trap 'rm -rf "$W"' EXIT
lane() { # output file, targets...
    local out=$1
    shift
    for b in "$@"; do
        local t0=$(date +%s)
        RUNS=$RUNS tests/fuzz/run.sh 0 "$b" >"$W/$(basename "$b").out" 2>&1
        echo "$(basename "$b") $? $(($(date +%s) - t0))" >>"$out"
    done
}
# Alternate targets between the two lanes.
l1=() l2=()
for i in "${!bins[@]}"; do
    if [ $((i % 2)) -eq 0 ]; then l1+=("${bins[$i]}"); else l2+=("${bins[$i]}"); fi
done
lane "$W/lane1" "${l1[@]}" &
p1=$!
lane "$W/lane2" "${l2[@]}" &
p2=$!
wait $p1 $p2
rc=0
total=0
for b in "${bins[@]}"; do
    n=$(basename "$b")
    read -r _ status secs < <(grep -h "^$n " "$W/lane1" "$W/lane2")
    line=$(grep -h "^fuzz: $n " "$W/$n.out")
    execs=$(grep -oE '[0-9]+ executions' <<<"$line" | grep -oE '[0-9]+')
    keep_logs fuzz "build/fuzz/out/$n.log"
    if [ "${status:-1}" = 0 ] && [ "${execs:-0}" -ge "$RUNS" ]; then
        total=$((total + execs))
        result PASS "fuzz-$n" "$execs executions in ${secs} s, 0 crashes"
    else
        rc=1
        why=$(grep -hE 'runtime error|ERROR: (Address|Leak)Sanitizer|^SUMMARY' "build/fuzz/out/$n.log" | head -n 2 | tr '\n' ' ')
        art=$(ls build/fuzz/out/"$n"-crash-* build/fuzz/out/"$n"-leak-* build/fuzz/out/"$n"-timeout-* 2>/dev/null | head -n 1)
        result FAIL "fuzz-$n" "${execs:-0} of $RUNS executions, crashed: ${why:-exit $status}${art:+ (reproducer $art)}"
    fi
done
echo "fuzz total: $total executions"
exit $rc
