#!/usr/bin/env bash
# Stream load at scale: STREAMS WebSockets held by sizeup's stream client on ONE thread, and in
# the same run the same number held by a Node.js client on Debian's node-ws (bench/ws_client.js)
# doing the same work (each frame parsed for its "seq"), both on one fan-out server
# (bench/stream_server.js, node-ws, WORKERS processes). Producers send RATE commands/s; every
# command reaches every stream of both clients. Figures: memory per idle stream (RSS growth after
# the ramp, per open stream), the stream thread's CPU, and frames received per CPU-second of
# each client, with their ratio. Then a sizeup-only run against the server with
# permessage-deflate on, for deflate's own cost per stream.
# Knobs: STREAMS (10000) RATE (5) RAMP (10 s) WARMUP (2 s) WINDOW (20 s) FRAME_BYTES (64)
# WORKERS (2). Everything on 127.0.0.1, bounded by the window and `timeout`.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
SIZEUP=${SIZEUP:-$root/build/sizeup}
STREAMS=${STREAMS:-10000} RATE=${RATE:-5} RAMP=${RAMP:-10} WARMUP=${WARMUP:-2} WINDOW=${WINDOW:-20}
FRAME_BYTES=${FRAME_BYTES:-64} WORKERS=${WORKERS:-2}
export NODE_PATH=/usr/share/nodejs
command -v node >/dev/null || { echo "bench/streams: node is needed (nodejs)"; exit 1; }
node -e 'require("ws")' 2>/dev/null || { echo "bench/streams: node-ws is needed (scripts/install-deps.sh bench)"; exit 1; }
[ -x "$SIZEUP" ] || { echo "bench/streams: build sizeup first (make)"; exit 1; }
tmp=$(mktemp -d /tmp/sizeup-bench-streams.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"; }
trap cleanup EXIT

server() { # deflate?
    rm -f "$tmp/port"
    node "$root/bench/stream_server.js" "$tmp/port" "$WORKERS" "$FRAME_BYTES" "${1:-}" >"$tmp/server.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
    [ -s "$tmp/port" ] || { echo "bench/streams: server did not start"; cat "$tmp/server.log"; exit 1; }
    cat "$tmp/port"
}

profile() { # file
    cat >"$1" <<YAML
duration: ${WINDOW}s
warmup: ${WARMUP}s
timeout: 5s
streams: { url: /ws, count: $STREAMS, ramp: ${RAMP}s }
producers: { count: 2, rate: $RATE, request: { method: POST, path: /cmd, body: '{"seq":{{seq}}}' } }
YAML
}

echo "settings: $STREAMS streams per client, $RATE commands/s, ramp ${RAMP}s, warm-up ${WARMUP}s, window ${WINDOW}s, frames ~${FRAME_BYTES} B, server: node-ws, $WORKERS workers"
port=$(server)
profile "$tmp/p.yaml"
node "$root/bench/ws_client.js" "ws://127.0.0.1:$port/ws" "$STREAMS" "$RAMP" "$WARMUP" "$WINDOW" >"$tmp/node.json" 2>"$tmp/node.err" &
npid=$!
pids+=($npid)
timeout $((RAMP + WARMUP + WINDOW + 60)) "$SIZEUP" loadtest --url "http://127.0.0.1:$port" --profile "$tmp/p.yaml" \
    --threads 1 --json --out "$tmp/sizeup.json" 2>"$tmp/sizeup.err"
rc=$?
wait $npid
[ $rc -eq 0 ] || [ $rc -eq 99 ] || { echo "bench/streams: sizeup exit $rc"; cat "$tmp/sizeup.err"; exit 1; }
python3 - "$tmp/sizeup.json" "$tmp/node.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); s = r["streams"]; n = json.load(open(sys.argv[2]))
fps = s["frames_per_cpu_s"]
print("sizeup : %d streams open on %d thread, %d frames in the window, stream thread CPU %.2f s, %.0f frames/CPU-s, "
      "idle %.0f B/stream, at window end %.0f B/stream, delivery p50 %.1f p99 %.1f ms, missing %d"
      % (s["opened"], s["threads"], s["window_frames"], s["tool_cpu_s"], fps,
         s["memory_per_idle_stream_bytes"], s["memory_per_active_stream_bytes"],
         s["delivery_ms"]["p50"], s["delivery_ms"]["p99"], s["missing"]))
print("node-ws: %d streams open, %d frames, CPU %.2f s, %.0f frames/CPU-s, idle %d B/stream"
      % (n["opened"], n["frames"], n["cpu_s"], n["frames_per_cpu_s"], n["memory_per_idle_stream_bytes"]))
if n["frames_per_cpu_s"]:
    print("ratio  : sizeup %.1fx the frames per CPU-second of node-ws, %.1fx less memory per idle stream"
          % (fps / n["frames_per_cpu_s"], n["memory_per_idle_stream_bytes"] / max(1, s["memory_per_idle_stream_bytes"])))
PY
kill "${pids[0]}" 2>/dev/null; wait "${pids[0]}" 2>/dev/null

port=$(server deflate)
timeout $((RAMP + WARMUP + WINDOW + 60)) "$SIZEUP" loadtest --url "http://127.0.0.1:$port" --profile "$tmp/p.yaml" \
    --threads 1 --json --out "$tmp/deflate.json" 2>"$tmp/deflate.err"
python3 - "$tmp/deflate.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["streams"]
print("deflate: %d of %d streams negotiated permessage-deflate, idle %.0f B/stream, at window end %.0f B/stream, "
      "stream thread CPU %.2f s for %d frames (%.0f frames/CPU-s)"
      % (s["deflate_streams"], s["opened"], s["memory_per_idle_stream_bytes"],
         s["memory_per_active_stream_bytes"], s["tool_cpu_s"], s["window_frames"], s["frames_per_cpu_s"]))
PY
