#!/usr/bin/env bash
# Promise: an allocation that fails never crashes, leaks or half-writes. The fault-injection test
# (tests/unit/test_alloc_fail.c, its wrapped allocator covering sizeup's own allocations and
# cJSON's; libyaml's, libcurl's and libc's internal ones are not reached) runs with the Nth
# allocation failing for every N until a run completes, over:
#   the outputs of an 8-variant sweep (7 measured with capacity searches, 1 OOM-killed): the
#     render and output_write_all into a directory of an earlier sweep's files, every N;
#   the annotation parser, the state.json parser and writer, the profile and the kubeconfig readers, the
#     generator workers' profile document, Job object and result parser (loadjob), and sizeup
#     compare (parse, run, JSON and text), and the watch event parser.
# Each run either fails with an error and leaves nothing written (the earlier files as they
# were), or gives byte-identical outputs; ASan/LSan find nothing. REL_FAST=1: the 3-variant
# fixture of make test, the directory sink every 10th N.
set -u
. "$(dirname "$0")/lib.sh"
bin="$BUILD/tests/test_alloc_fail"
if [ ! -x "$bin" ]; then
    result FAIL alloc-failure "no $bin (make BUILD=$BUILD SAN=1 unit-bins builds it)"
    exit 1
fi
log="$REL_LOGS/alloc_fail.log"
rows=8 stride=1
[ "$REL_FAST" = 1 ] && rows=3 stride=10
t0=$(now_ms)
ALLOC_FAIL_ROWS=$rows ALLOC_FAIL_STRIDE=$stride timeout 600 "$bin" >"$log" 2>&1
rc=$?
secs=$(( ($(now_ms) - t0) / 1000 ))
figure() { # WHAT: "N=1..K" of that run's line
    grep -m1 "alloc_fail: $1" "$log" | grep -oE 'N=1\.\.[0-9]+' | head -n 1
}
outs=$(grep -m1 'alloc_fail: outputs' "$log")
summary="outputs of $rows variants $(figure outputs) ($(grep -oE '[0-9]+ failed cleanly' <<<"$outs"),"
summary+=" $(grep -oE '[0-9]+ identical' <<<"$outs"), directory sink at"
summary+=" $(grep -oE 'checked at [0-9]+' <<<"$outs" | grep -oE '[0-9]+$') of them);"
summary+=" annotations $(figure annotation), state.json parser $(figure "state.json parser"), profile $(figure profile),"
summary+=" kubeconfig $(figure kubeconfig), state.json writer $(figure "state.json writer"),"
summary+=" worker profile $(figure worker), generator Job $(figure "generator Job"),"
summary+=" worker result $(figure "worker result"), watch event $(figure "watch event"),"
summary+=" compare $(figure compare);"
summary+=" ${secs} s"
san=$(sanitizer_report "$log")
if [ $rc -ne 0 ] || [ -n "$san" ] || ! grep -q 'PASSED' "$log"; then
    why=$(grep -m1 -E 'ERROR|FAILED|LINE' "$log")
    result FAIL alloc-failure "exit $rc ${san:-$why}; $summary (log $log)"
    exit 1
fi
result PASS alloc-failure "every Nth allocation failed in turn: each run failed cleanly with nothing" \
    "written or gave identical bytes, no crash, no leak: $summary"
