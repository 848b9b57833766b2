#!/usr/bin/env bash
# Promise: the load generator survives misbehaving targets on 127.0.0.1. For each target the
# run must exit 99 (not HEALTHY), count every failure in the expected error class (and none in
# another), finish within duration + timeout + 1.5 s of wall time, and print no sanitizer
# finding (the binary under test is the ASan+UBSan build). One result line per target.
set -u
. "$(dirname "$0")/lib.sh"
W=$(mktemp -d /tmp/sizeup-rel-lg.XXXXXX)
SRV=
cleanup() {
    [ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT

python3 "$ROOT/tests/reliability/badhttp.py" --port-file "$W/port" --silent-port-file "$W/sport" \
    --max-seconds 30 >"$W/badhttp.log" 2>&1 &
SRV=$!
wait_file "$W/port" 10 || { result FAIL loadgen-targets "badhttp.py did not start"; exit 1; }
P=$(cat "$W/port")
S=$(cat "$W/sport")
DUR=3
[ "$REL_FAST" = 1 ] && DUR=2
TIMEOUT_S=1
budget_ms=$(((DUR + TIMEOUT_S) * 1000 + 1500))
rc_all=0

# target NAME URL EXPECTED-CLASSES(comma) MIN-FAILED loadtest-args...
target() {
    local name=$1 url=$2 classes=$3 min=$4
    shift 4
    local t0 ms rc figure
    t0=$(now_ms)
    timeout 60 "$SIZEUP" loadtest --url "$url" --duration "${DUR}s" --warmup 0 \
        --timeout "${TIMEOUT_S}s" --json --out "$W/$name.json" "$@" 2>"$W/$name.err"
    rc=$?
    ms=$(($(now_ms) - t0))
    keep_logs loadgen "$W/$name.err"
    local san
    san=$(sanitizer_report "$W/$name.err")
    if [ ! -s "$W/$name.json" ]; then
        result FAIL "loadgen-$name" "exit $rc after $ms ms, no report${san:+, $san}"
        rc_all=1
        return
    fi
    figure=$(python3 - "$W/$name.json" "$classes" "$min" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
want = sys.argv[2].split(",")
minimum = int(sys.argv[3])
errs = {k: v for k, v in j["errors"].items() if v}
inclass = sum(errs.get(c, 0) for c in want)
other = {k: v for k, v in errs.items() if k not in want}
ok = inclass >= minimum and not other and j["failed"] == inclass and j["responses"] == 0
print("%s %d requests, %d failed, %s" % ("ok" if ok else "bad", j["requests"], j["failed"],
      ", ".join("%s %d" % kv for kv in sorted(errs.items())) or "no errors"))
PY
)
    local verdict=PASS why=""
    [[ "$figure" == ok* ]] || { verdict=FAIL; why="; want every failure in {$classes}, >= $min"; }
    [ "$rc" -eq 99 ] || { verdict=FAIL; why="$why; exit $rc, want 99"; }
    [ "$ms" -le "$budget_ms" ] || { verdict=FAIL; why="$why; over the ${budget_ms} ms budget"; }
    [ -z "$san" ] || { verdict=FAIL; why="$why; $san"; }
    [ $verdict = PASS ] || rc_all=1
    result $verdict "loadgen-$name" "${figure#* }, exit $rc, wall ${ms} ms for a ${DUR}s window + ${TIMEOUT_S}s timeout$why"
}

target garbage "http://127.0.0.1:$P/garbage-stream" bad_response 4 --users 4
target no-end "http://127.0.0.1:$P/no-end" timeout 4 --users 4
target huge-headers "http://127.0.0.1:$P/huge-headers" bad_response 4 --users 4
target reset-mid-body "http://127.0.0.1:$P/reset" reset 4 --users 4
target never-answers "http://127.0.0.1:$P/never" timeout 4 --users 4
target never-accepts "http://127.0.0.1:$S/" connect_timeout,timeout 4 --users 4
target slowloris "http://127.0.0.1:$P/slowloris" timeout 4 --users 4
# Open loop: due requests keep coming while every connection hangs; the cap holds.
target never-open-loop "http://127.0.0.1:$P/never" timeout 20 --rate 20 --max-connections 50
target no-end-open-loop "http://127.0.0.1:$P/no-end" timeout 20 --rate 20 --max-connections 50
exit $rc_all
