#!/usr/bin/env bash
# `make demo-streams`: installs what is missing, builds sizeup, and sweeps the live-board demo
# app (examples/streams/board.py: WebSocket and server-sent-event watchers, renames fanned out
# to all of them) over two variants under real cgroup limits, searching each variant's stream
# capacity: the most watchers it holds with the delivery p95 under 100 ms and none dropped, and
# the memory each watcher costs. Under 3 minutes after the set-up (the profile's time budget is
# 2m40s). DEMO_PORT and DEMO_OUT override the port (18090) and the output dir (sizing-streams/).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== demo-streams: checking packages (python3-aiohttp, the build tools)"
scripts/install-deps.sh demo
echo "== demo-streams: building sizeup"
make --no-print-directory -j2 build/sizeup >/dev/null

port=${DEMO_PORT:-18090}
out=${DEMO_OUT:-sizing-streams}
configs="1@0.5/256Mi 1@1/512Mi"
echo "== demo-streams: sweeping examples/streams/board.py over: $configs"
echo "   (each variant: one aiohttp process in a cgroup with the variant's CPU and memory limits;"
echo "    watchers opened step by step within one session, 20 renames/s fanned out to all,"
echo "    each step judged on delivery p95 < 100 ms from when the rename was due, no drops)"
echo
set +e
start=$(date +%s)
build/sizeup sweep --configs "$configs" --profile examples/streams/profile.yaml \
    --port "$port" --ready-path /healthz --ready-timeout 30s --out "$out" -- \
    env PORT="$port" /usr/bin/python3 examples/streams/board.py 2> >(tee "$out.log" >&2)
rc=$?
set -e
echo
echo "== demo-streams: the sweep took $(($(date +%s) - start)) s"
echo "== demo-streams: stream capacity per variant"
sed -n 's/^.*event=sweep.stream_capacity variant=\([^ ]*\) streams=\([0-9]*\) memory_per_stream=\(-\?[0-9]*\) base=\(-\?[0-9]*\) .*limited_by=\([^ ]*\).*$/   \1: \2 streams, \3 bytes per stream on a base of \4 bytes, limited by \5/p' "$out.log"
[ $rc -eq 0 ] && echo "== demo-streams: done. The files are in $out/; the log of every step in $out.log."
exit $rc
