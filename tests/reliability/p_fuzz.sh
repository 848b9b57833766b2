#!/usr/bin/env bash
# Promise: every fuzz target (tests/fuzz/fuzz_*.c) runs a fixed budget of executions (RUNS,
# default 1,000,000) under ASan+UBSan over its committed seed corpus with zero crashes. Two
# targets run at a time (the machine has two cores). One result line per target with its count;
# a crash fails the target and its reproducer is kept in build/fuzz/out/.
# 20 targets x 1,000,000 executions under the sanitizers outlast the default 900 s on two cores:
# reliability-timeout: 1800
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
# crash_reason LOG: the sanitizer's line, or for an abort() the fuzz target's line that called it.
crash_reason() {
    local r
    r=$(grep -m1 -E 'runtime error|ERROR: (Address|Leak)Sanitizer: [a-z-]+' "$1" | sed 's/^.*\(src\/\)/\1/')
    [ -z "$r" ] && r=$(grep -m1 -oE 'in LLVMFuzzerTestOneInput .*tests/fuzz/[a-z_]+\.c:[0-9]+' "$1" |
        sed 's/^.*\(tests\/fuzz\/\)/abort() at \1/')
    echo "$r"
}
trap 'rm -rf "$W"' EXIT
# Two lanes take targets from one queue (slowest first, so the lanes finish together).
slow="fuzz_report_json fuzz_kube_status fuzz_http fuzz_watch fuzz_profile fuzz_kubeconfig"
{
    for n in $slow; do [ -x "build/fuzz/$n" ] && echo "build/fuzz/$n"; done
    for b in "${bins[@]}"; do grep -qw "$(basename "$b")" <<<"$slow" || echo "$b"; done
} >"$W/queue"
lane() { # output file
    local out=$1 b
    while :; do
        b=$(flock "$W/queue" sh -c 'head -n 1 "$0"; sed -i 1d "$0"' "$W/queue")
        [ -n "$b" ] || break
        local t0=$(date +%s)
        RUNS=$RUNS tests/fuzz/run.sh 0 "$b" >"$W/$(basename "$b").out" 2>&1
        local st=$?
        echo "$(basename "$b") $st $(($(date +%s) - t0))" >>"$out"
    done
}
lane "$W/lane1" &
p1=$!
lane "$W/lane2" &
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
        # Executions until the crash: the last "#N" status line of libFuzzer.
        execs=$(grep -oE '^#[0-9]+' "build/fuzz/out/$n.log" | tail -n 1 | tr -d '#')
        why=$(crash_reason "build/fuzz/out/$n.log")
        art=$(ls build/fuzz/out/"$n"-crash-* build/fuzz/out/"$n"-leak-* build/fuzz/out/"$n"-timeout-* 2>/dev/null | head -n 1)
        result FAIL "fuzz-$n" "crashed after ${execs:-0} of $RUNS executions: ${why:-exit $status}${art:+ (reproducer $art)}"
    fi
done
echo "fuzz total: $total executions"

# Crashes found earlier (by this suite) are kept in tests/reliability/findings/TARGET-*; each is
# replayed once through its target: it must no longer crash.
found=0 still=0 names=()
for f in "$ROOT"/tests/reliability/findings/fuzz_*; do
    [ -f "$f" ] || continue
    t=$(basename "$f")
    t=${t%%-*}
    [ -x "build/fuzz/$t" ] || continue
    found=$((found + 1))
    if ! "build/fuzz/$t" "$f" >"$W/replay.log" 2>&1; then
        still=$((still + 1))
        names+=("$(basename "$f") -> $(crash_reason "$W/replay.log")")
    fi
done
if [ $found -gt 0 ]; then
    if [ $still -eq 0 ]; then
        result PASS fuzz-findings "$found earlier crash inputs replayed, 0 crash any more"
    else
        result FAIL fuzz-findings "$still of $found earlier crash inputs still crash: $(printf '%s; ' "${names[@]}")"
        rc=1
    fi
fi
exit $rc
