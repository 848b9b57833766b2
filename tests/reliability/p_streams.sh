#!/usr/bin/env bash
# Promise: a stream server that closes every stream at once is a counted failure, bounded in
# time. 500 streams (WebSocket, and event streams) against tests/servers/streamd.py, which 3 s
# after the first stream opened closes all of them at once: WebSocket close 1001 (going away),
# an application code (4003), a reset without a close frame, an event stream that ends. The
# ASan+UBSan `sizeup loadtest` must count every stream dropped, each in the right close class
# and none in another, end within warm-up + duration + timeout + 1.5 s of wall time, and print
# no sanitizer finding.
set -u
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/servers/lib.sh"
. "$ROOT/tests/servers/streamlib.sh"
N=${REL_STREAMS:-500}
rc_all=0

# case NAME CLASS PATH STREAMD-FLAGS [extra streams fields]
case_() {
    local name=$1 class=$2 path=$3 flags=$4 extra=${5:-} t0 rc fig
    # shellcheck disable=SC2086
    stream_srv "$name" $flags --delay-ms 10
    local port
    port=$(eval echo "\$SRV_PORT_$name")
    stream_profile "$SRV_TMP/$name.yaml" "$path" "$N" 10 "$extra"
    t0=$(now_ms)
    timeout 60 "$SIZEUP" loadtest --url "http://127.0.0.1:$port" --profile "$SRV_TMP/$name.yaml" \
        --json --out "$SRV_TMP/$name.json" >"$SRV_TMP/$name.out" 2>"$SRV_TMP/$name.err"
    rc=$?
    local wall=$(($(now_ms) - t0))
    keep_logs streams "$SRV_TMP/$name.err" "$SRV_TMP/$name.json"
    fig=$(python3 - "$SRV_TMP/$name.json" "$class" "$N" "$rc" "$wall" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("bad no results.json (%s)" % e)
    sys.exit(0)
s, cls, n, rc, wall = r["streams"], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
by = {k: v for k, v in s["by_close_class"].items() if v}
bound = 1000 * (1 + 5 + 3) + 1500
ok = s["dropped"] == n and by == {cls: n} and rc in (0, 99) and wall <= bound
print("%s %d streams, opened %d, dropped %d, by close class %s, exit %d, wall %d ms (bound %d ms)"
      % ("ok" if ok else "bad", n, s["opened"], s["dropped"], by, rc, wall, bound))
PY
)
    local san
    san=$(sanitizer_report "$SRV_TMP/$name.err")
    [ -z "$san" ] || fig="bad ${fig#* }; sanitizer: $san"
    if [[ "$fig" == ok* ]]; then
        result PASS "streams-close-$name" "${fig#* }"
    else
        result FAIL "streams-close-$name" "${fig#* }"
        rc_all=1
    fi
}

case_ going_away going_away /ws "--close-all-at 3 --close-code 1001"
case_ app_code app /ws "--close-all-at 3 --close-code 4003"
case_ reset abnormal /ws "--abort-all-at 3"
case_ sse_ends ended /sse "--close-all-at 3" ", protocol: sse"
exit $rc_all
