#!/usr/bin/env bash
# Stream load against misbehaving servers: each case ends in a clear, counted failure within a
# bounded time, never a crash. A URL that is not a WebSocket (or not an event stream), a
# handshake that never finishes, a server that closes every stream at once (WebSocket 1001,
# an application code, a reset, an event stream that ends), frames without the match field,
# and a 16 MiB frame.
set -u
. "$ROOT/tests/servers/lib.sh"
. "$ROOT/tests/servers/streamlib.sh"

# run NAME PORT URL [extra streams fields]: a 10-stream run; prints its JSON path.
run() {
    local name=$1 port=$2 url=$3 extra=${4:-}
    stream_profile "$SRV_TMP/$name.yaml" "$url" 10 10 "$extra"
    local t0=$SECONDS
    timeout 60 "$SIZEUP" loadtest --url "http://127.0.0.1:$port" --profile "$SRV_TMP/$name.yaml" \
        --json --out "$SRV_TMP/$name.json" 2>"$SRV_TMP/$name.err"
    local rc=$?
    echo "$name: exit $rc in $((SECONDS - t0)) s"
    [ $rc -eq 0 ] || [ $rc -eq 99 ] || fail "$name: exit $rc ($(cat "$SRV_TMP/$name.err"))"
    [ $((SECONDS - t0)) -le 20 ] || fail "$name took more than 20 s"
}

# check NAME PYTHON-ASSERTIONS over s (the streams object) and r (the report)
check() {
    python3 - "$SRV_TMP/$1.json" "$1" "$2" <<'PY' || fail "$1"
import json, sys
r = json.load(open(sys.argv[1])); s = r["streams"]
print("%s: opened %d failed %d dropped %d frames %d unmatched %d, by_failure %s, by_close %s"
      % (sys.argv[2], s["opened"], s["failed"], s["dropped"], s["frames"], s["unmatched"],
         {k: v for k, v in s["by_failure"].items() if v},
         {k: v for k, v in s["by_close_class"].items() if v}))
exec(sys.argv[3])
PY
}

stream_srv a --delay-ms 10
P=$SRV_PORT_a
run notws "$P" /notws
check notws 'assert s["failed"] == 10 and s["by_failure"]["handshake"] == 10 and s["opened"] == 0
assert r["verdict"] == "OVERLOADED"'
run notsse "$P" /notws ", protocol: sse"
check notsse 'assert s["failed"] == 10 and s["by_failure"]["handshake"] == 10'
run hang "$P" /hang
check hang 'assert s["failed"] == 10 and s["by_failure"]["timeout"] == 10'
port=$(free_port)
run refused "$P" "ws://127.0.0.1:$port/ws"
check refused 'assert s["failed"] == 10 and s["by_failure"]["refused"] == 10'

stream_srv c --close-all-at 3 --close-code 1001
run going_away "$SRV_PORT_c" /ws
check going_away 'assert s["dropped"] == 10 and s["by_close_class"]["going_away"] == 10'
stream_srv c2 --close-all-at 3 --close-code 4003
run app_code "$SRV_PORT_c2" /ws
check app_code 'assert s["dropped"] == 10 and s["by_close_class"]["app"] == 10'
stream_srv r --abort-all-at 3
run reset "$SRV_PORT_r" /ws
check reset 'assert s["dropped"] == 10 and s["by_close_class"]["abnormal"] == 10'
stream_srv e --close-all-at 3
run sse_ends "$SRV_PORT_e" /sse ", protocol: sse"
check sse_ends 'assert s["dropped"] == 10 and s["by_close_class"]["ended"] == 10'

stream_srv k --no-key --delay-ms 10
run nokey "$SRV_PORT_k" /ws
check nokey 'assert s["frames"] >= 500 and s["unmatched"] == s["frames"] and s["delivery_ms"]["samples"] == 0
assert s["missing"] == 500 and r["verdict"] == "OVERLOADED", "every frame is missing its command"
assert s["dropped"] == 0'

stream_srv b --big-frame 16777216 --delay-ms 10
run big "$SRV_PORT_b" /ws
check big 'assert s["dropped"] == 10 and s["by_close_class"]["too_big"] == 10'
echo ok
