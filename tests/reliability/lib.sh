# Shared helpers of the reliability promises (tests/reliability/p_*.sh). Source it.
# Each promise script gets from run.sh (which tests/integration/reliability_fast.sh also runs):
#   ROOT, BUILD, SIZEUP    the repository, the build directory and the (sanitized) binary
#   REL_RESULTS            file that collects one line per promise: "PASS|FAIL name: figure"
#   REL_LOGS               directory where every log of the run is kept for the final log scan
#   REL_SECRETS            file listing every bearer token issued during the run (one per line)
#   REL_FAST=1             the short variant for `make test`
# and reports with `result PASS|FAIL NAME FIGURE`. A promise not kept is a FAIL with its figure.

: "${ROOT:?}" "${BUILD:?}"
# free_port, jget, now_ms, on_exit (the cleanup stack), workdir, fail and skip.
. "$ROOT/tests/lib/common.sh"
SIZEUP=${SIZEUP:-$BUILD/sizeup}
REL_FAST=${REL_FAST:-0}
if [ -z "${REL_RESULTS:-}" ]; then
    REL_LOGS=${REL_LOGS:-$(mktemp -d /tmp/sizeup-rel-logs.XXXXXX)}
    REL_RESULTS=$REL_LOGS/results
    REL_SECRETS=$REL_LOGS/.secrets
fi
mkdir -p "$REL_LOGS"
: >>"$REL_RESULTS"
: >>"$REL_SECRETS"
export ROOT BUILD SIZEUP REL_RESULTS REL_LOGS REL_SECRETS REL_FAST
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# result PASS|FAIL NAME FIGURE...: records and prints one promise line.
result() {
    local verdict=$1 name=$2
    shift 2
    printf '%s %s: %s\n' "$verdict" "$name" "$*" | tee -a "$REL_RESULTS"
}


# sanitizer_report FILE...: prints the first sanitizer finding in the files, if any.
sanitizer_report() {
    grep -hE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: UndefinedBehavior' \
        "$@" 2>/dev/null | head -n 1
}

# keep_logs NAME FILE...: copies logs into REL_LOGS/NAME for the final scan.
keep_logs() {
    local d="$REL_LOGS/$1"
    shift
    mkdir -p "$d"
    local f
    for f in "$@"; do [ -e "$f" ] && cp -r "$f" "$d/" 2>/dev/null; done
    return 0
}

# remember_secret FILE...: adds the tokens in these files to the scan list.
remember_secret() {
    local f
    for f in "$@"; do
        [ -s "$f" ] && { tr -d '\n' <"$f"; echo; } >>"$REL_SECRETS"
    done
    return 0
}

# wait_file FILE SECONDS: waits until FILE is non-empty.
wait_file() {
    local i
    for i in $(seq 1 $(($2 * 10))); do
        [ -s "$1" ] && return 0
        sleep 0.1
    done
    return 1
}
