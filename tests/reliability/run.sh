#!/usr/bin/env bash
# `make reliability`: every reliability promise (faults, crashes, bad input, security), one line
# per promise with its figure, then "N passed, N failed". Usage: tests/reliability/run.sh BUILD_DIR
# [PROMISE...]  (promise scripts are tests/reliability/p_*.sh, run in the order below; naming
# some runs only those). Logs of every run are kept in BUILD_DIR/reliability-logs (or REL_LOGS)
# for the final credential scan, which always runs last. REL_FAST=1 runs each promise's short
# variant (tests/integration/reliability_fast.sh, in `make test`).
set -u
build=${1:?usage: run.sh BUILD_DIR [PROMISE...]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd)
export ROOT="$root" BUILD="$build" SIZEUP="$build/sizeup"
export REL_LOGS="${REL_LOGS:-$build/reliability-logs}"
rm -rf "$REL_LOGS"
mkdir -p "$REL_LOGS"
export REL_RESULTS="$REL_LOGS/results" REL_SECRETS="$REL_LOGS/.secrets"
: >"$REL_RESULTS"
: >"$REL_SECRETS"
order=(loadgen streams kube_faults op_faults scope bad_input drift sigterm leader crash
    capacity_kill resize generators noisy rbac valgrind fuzz alloc)
[ $# -gt 0 ] && order=("$@")
started=$(date +%s)
for p in "${order[@]}"; do
    script="$root/tests/reliability/p_$p.sh"
    if [ ! -f "$script" ]; then
        printf 'FAIL %s: no script %s\n' "$p" "$script" | tee -a "$REL_RESULTS"
        continue
    fi
    before=$(wc -l <"$REL_RESULTS")
    t0=$(date +%s)
    # A promise with a longer fixed budget says so in a "# reliability-timeout: SECONDS" line.
    limit=$(sed -n 's/^# reliability-timeout: \([0-9]*\)$/\1/p' "$script" | head -n 1)
    timeout --kill-after=10 "${REL_TIMEOUT:-${limit:-900}}" bash "$script" >"$REL_LOGS/p_$p.out" 2>&1
    rc=$?
    # The promise lines were appended to REL_RESULTS (and teed into the .out log); show them.
    tail -n +$((before + 1)) "$REL_RESULTS"
    after=$(wc -l <"$REL_RESULTS")
    if [ "$after" -eq "$before" ]; then
        printf 'FAIL %s: the script exited %d after %d s without a result (log %s)\n' "$p" "$rc" \
            $(($(date +%s) - t0)) "$REL_LOGS/p_$p.out" | tee -a "$REL_RESULTS"
        tail -n 15 "$REL_LOGS/p_$p.out" | sed 's/^/      | /'
    elif [ "$rc" -ne 0 ] && ! grep -q '^FAIL' <(tail -n +$((before + 1)) "$REL_RESULTS"); then
        printf 'FAIL %s: the script exited %d although its promises passed (log %s)\n' "$p" "$rc" \
            "$REL_LOGS/p_$p.out" | tee -a "$REL_RESULTS"
    fi
done
bash "$root/tests/reliability/p_logscan.sh" >"$REL_LOGS/p_logscan.out" 2>&1
tail -n 1 "$REL_RESULTS"
echo
pass=$(grep -c '^PASS' "$REL_RESULTS")
fail=$(grep -c '^FAIL' "$REL_RESULTS")
echo "logs: $REL_LOGS ($(($(date +%s) - started)) s)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
