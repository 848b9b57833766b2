#!/usr/bin/env bash
# Runs every unit test binary and every integration script, and prints one closing line
# "N passed, N failed". Usage: tests/run-tests.sh BUILD_DIR [unit|integration|e2e]
# (e2e: the end-to-end operator scripts, tests/integration/e2e_*.sh, and the slow ones below).
# Each integration script gets SIZEUP (the binary under test) and BUILD in its environment and
# passes by exiting 0; exit 77 means skipped (a prerequisite this machine lacks), said aloud.
# Under CI=true a skip is a failure: CI installs everything the tests need
# (scripts/install-deps.sh all, then each README command's own set-up), so a test that finds a
# tool missing there shows a missing install step, which must not pass quietly.
set -u
build=${1:?usage: run-tests.sh BUILD_DIR [unit|integration|e2e]}
only=${2:-all}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
export SIZEUP="$build/sizeup" BUILD="$build" ROOT="$root"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
logdir="$build/test-logs"
mkdir -p "$logdir"
pass=0 fail=0 skip=0 failed=()
per_test_timeout=${TEST_TIMEOUT:-600}

run_one() { # name, command...
    local name=$1; shift
    local log="$logdir/${name//\//_}.log" start end rc
    start=$(date +%s%N)
    timeout --kill-after=10 "$per_test_timeout" "$@" >"$log" 2>&1
    rc=$?
    end=$(date +%s%N)
    local ms=$(( (end - start) / 1000000 ))
    local secs; secs=$(printf '%d.%d' $((ms / 1000)) $(((ms % 1000) / 100)))
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1)); printf 'PASS  %-40s %6ss\n' "$name" "$secs"
    elif [ $rc -eq 77 ] && [ "${CI:-}" = true ]; then
        fail=$((fail + 1)); failed+=("$name")
        printf 'FAIL  %-40s %6ss (skipped under CI=true: %s; install it in scripts/install-deps.sh)\n' \
            "$name" "$secs" "$(tail -n 1 "$log")"
    elif [ $rc -eq 77 ]; then
        skip=$((skip + 1)); printf 'SKIP  %-40s %s\n' "$name" "$(tail -n 1 "$log")"
    else
        fail=$((fail + 1)); failed+=("$name")
        printf 'FAIL  %-40s %6ss (exit %d)\n' "$name" "$secs" "$rc"
        sed 's/^/      | /' "$log" | tail -n 60
    fi
}

if [ "$only" = all ] || [ "$only" = unit ]; then
    for t in "$build"/tests/test_*; do
        [ -x "$t" ] || continue
        # Only binaries of current sources: one left in BUILD by a moved or removed test is stale.
        [ -f "$root/tests/unit/$(basename "$t").c" ] || continue
        run_one "unit/$(basename "$t")" "$t"
    done
fi
# A script whose header holds the line "# slow: make e2e" runs in `make e2e` (with every
# e2e_*.sh), not in `make test` / `make integration`: the long operator end-to-end runs and
# capacity searches, so that CI's `make test` stays well under its time budget.
is_slow() { grep -q '^# slow: make e2e' "$1"; }
case "$only" in
    all|integration|e2e|unit) ;;
    *) echo "run-tests.sh: unknown selection '$only' (unit, integration or e2e)" >&2; exit 2 ;;
esac
if [ "$only" != unit ]; then
    for t in "$root"/tests/integration/*.sh; do
        [ -e "$t" ] || continue
        case "$only" in
            e2e) [[ $(basename "$t") == e2e_* ]] || is_slow "$t" || continue ;;
            *) is_slow "$t" && continue ;;
        esac
        run_one "integration/$(basename "$t" .sh)" bash "$t"
    done
fi

echo
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "logs: $logdir"
if [ $skip -gt 0 ]; then
    echo "$pass passed, $fail failed, $skip skipped"
else
    echo "$pass passed, $fail failed"
fi
[ $fail -eq 0 ]
