#!/usr/bin/env bash
# Promises: the Kubernetes client (src/kube) under the fake API server's injected faults.
# Starts two fakes (the second with a certificate for another host name) and runs one scenario
# per promise of the driver tests/kube/kube_faults.c (built as BUILD/tests/kube/kube_faults by
# `make unit-bins`, sanitized when BUILD is); the figures come from the fake's own request log
# and fault counters.
# KF_SCENARIOS limits the set (default: all).
set -u
. "$(dirname "$0")/lib.sh"
scenarios=${KF_SCENARIOS:-gone resume hot conflict backoff token tls}
W=$(mktemp -d /tmp/sizeup-rel-kf.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$W"
}
trap cleanup EXIT
command -v python3 >/dev/null && command -v openssl >/dev/null ||
    { result FAIL kube-faults "python3 and openssl are needed for the fake API server"; exit 1; }

bin="$BUILD/tests/kube/kube_faults" # built with the unit tests (tests/kube/kube_faults.c)
[ -x "$bin" ] || { result FAIL kube-faults "no driver $bin: make unit-bins"; exit 1; }

start_fake() { # dir, extra args...
    local d=$1
    shift
    mkdir -p "$d"
    python3 "$ROOT/tests/fakeapi/fakeapi.py" --dir "$d" --no-kubelet "$@" >"$d/server.log" 2>&1 &
    pids+=($!)
    wait_file "$d/ready" 15 || { result FAIL kube-faults "fake did not start: $(tail -n 3 "$d/server.log")"; exit 1; }
}
start_fake "$W/fake"
start_fake "$W/badhost" --server-san DNS:other.example
remember_secret "$W/fake/token" "$W/fake/control-token" "$W/badhost/token" "$W/badhost/control-token"

declare -A title=(
    [gone]=410-gone [resume]=watch-resume [hot]=watch-backoff [conflict]=409-conflict
    [backoff]=429-5xx-backoff [token]=token-rotation [tls]=tls-refused)
rc=0
for s in $scenarios; do
    t0=$(now_ms)
    FAKEAPI_DIR="$W/fake" FAKEAPI_BADHOST_DIR="$W/badhost" timeout 120 "$bin" "$s" \
        >"$W/$s.out" 2>"$W/$s.err"
    code=$?
    ms=$(($(now_ms) - t0))
    [ -f "$W/fake/rot/seen" ] && remember_secret "$W/fake/rot/seen" && rm -f "$W/fake/rot/seen"
    cp "$W/$s.out" "$W/$s.stdout.log"
    keep_logs kube-faults "$W/$s.err" "$W/$s.stdout.log"
    figure=$(grep '^FIGURE ' "$W/$s.out" | sed 's/^FIGURE //' | paste -sd '|' | sed 's/|/; /g')
    checks=$(grep -E '^(CHECK FAILED|ERROR)' "$W/$s.out" | head -n 3 | paste -sd ';')
    sanf=$(sanitizer_report "$W/$s.err")
    extra=
    if [ "$s" = token ]; then
        # The failed re-reads are logged, and never with the token's value (checked by log-scan).
        n=$(grep -c 'kube.token.reload_failed' "$W/$s.err")
        extra=" ($n token re-read failures logged)"
        [ "$n" -ge 2 ] || { code=1; checks="$checks; want 2 kube.token.reload_failed log lines, got $n"; }
    fi
    if [ $code -eq 0 ] && [ -z "$sanf" ]; then
        result PASS "${title[$s]}" "$figure$extra [${ms} ms]"
    else
        rc=1
        result FAIL "${title[$s]}" "${figure:-no figure}$extra; exit $code ${checks:+; $checks}${sanf:+; $sanf} [${ms} ms]"
    fi
done
keep_logs kube-faults "$W/fake/server.log" "$W/fake/requests.log" "$W/badhost/server.log"
exit $rc
