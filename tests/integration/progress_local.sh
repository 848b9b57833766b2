#!/usr/bin/env bash
# sizeup sweep --progress-addr: a real WebSocket client (python3-websockets) sees a message about
# once a second whose numbers change while the sweep runs; a client that never reads is dropped
# while the others keep getting theirs and the sweep takes no longer than without any client;
# the page at / loads in headless Chromium, shows the running sweep and its numbers change
# between three looks (screenshots kept in $BUILD/test-logs/); the page fetches nothing from
# outside; an upgrade on another path is refused.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
PY=/usr/bin/python3
$PY -c 'import websockets' 2>/dev/null ||
    { echo "python3-websockets is missing for $PY (scripts/install-deps.sh test)"; exit 1; }
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "chromium is missing (scripts/install-deps.sh test)"; exit 1; }
tmp=$(mktemp -d)
marker="sizeup-progress-local-$$"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
client="$ROOT/tests/servers/progress_client.py"
port=$(free_port)
lport=$(free_port)

# Three variants of 12 s: long enough for a stalled reader to fill its buffers and be dropped.
start=$(date +%s.%N)
"$SIZEUP" sweep --configs "1@0.25/128Mi 1@0.5/128Mi 2@0.5/128Mi" --port "$port" --load fixed \
    --users 4 --duration 12s --warmup 1s --out "$tmp/out" --progress-addr "127.0.0.1:$lport" -- \
    env WORK=20000 python3 "$ROOT/tests/integration/cpu_server.py" "$marker" \
    >"$tmp/sweep.out" 2>"$tmp/sweep.err" &
sweep=$!
pids+=($sweep)
for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$lport/" && break
    sleep 0.2
done
curl -s -o "$tmp/page.html" -w '%{http_code}' "http://127.0.0.1:$lport/" | grep -qx 200 ||
    { cat "$tmp/sweep.err"; echo "the page did not answer"; exit 1; }

# The stalled reader first, then the watcher beside it for most of the sweep.
$PY "$client" slow 127.0.0.1 "$lport" 30 >"$tmp/slow.json" &
slowpid=$!
pids+=($slowpid)
$PY "$client" watch "ws://127.0.0.1:$lport/progress" 12 >"$tmp/watch.json"
$PY "$client" refused "ws://127.0.0.1:$lport/elsewhere" >"$tmp/refused.json"

# Three looks at the page in Chromium, a few seconds apart.
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run
       --disable-extensions --user-data-dir="$tmp/profile" --virtual-time-budget=2500)
logs="${BUILD:-$tmp}/test-logs"
mkdir -p "$logs"
for k in 1 2 3; do
    timeout 60 "$chrome" "${flags[@]}" --dump-dom "http://127.0.0.1:$lport/" >"$tmp/dom$k.html" \
        2>/dev/null || { echo "chromium failed"; exit 1; }
    timeout 60 "$chrome" "${flags[@]}" --window-size=1000,700 \
        --screenshot="$logs/progress_local-$k.png" "http://127.0.0.1:$lport/" >/dev/null 2>&1 ||
        { echo "chromium screenshot failed"; exit 1; }
    sleep 2
done
wait "$slowpid"
wait "$sweep" || { cat "$tmp/sweep.err"; echo "the sweep failed"; exit 1; }
took=$(python3 -c "import time; print(round(time.time() - $start, 1))")

python3 - "$tmp" "$took" "$logs" <<'PY'
import json, os, re, sys
tmp, took, logs = sys.argv[1], float(sys.argv[2]), sys.argv[3]
w = json.load(open(f"{tmp}/watch.json"))
n = w["messages"]
assert 9 <= n <= 16, f"{n} messages in 12 s: want about one a second"
gaps = [b - a for a, b in zip(w["times"], w["times"][1:])]
assert max(gaps) < 2.5, f"a gap of {max(gaps):.1f} s between messages"
local = [s[0] for s in w["sweeps"] if s]
assert local and all(s["name"] == "local" for s in local), local[:2]
reqs = [s["requests"] for s in local if s["phase"] == "measure"]
assert len(set(reqs)) >= 5, f"the request count did not move: {reqs}"
assert any(s["rps"] > 0 for s in local) and any(s["p95_ms"] > 0 for s in local), local[-1]
slow = json.load(open(f"{tmp}/slow.json"))
assert slow["closed"] is True, f"the stalled reader was not dropped: {slow}"
err = open(f"{tmp}/sweep.err").read()
m = re.search(r"event=progress.drop .*waited_ms=(\d+)", err)
assert m, "no progress.drop in the log"
ref = json.load(open(f"{tmp}/refused.json"))
assert ref["status"] not in (101,), f"an upgrade on another path was accepted: {ref}"
# The sweep: 3 x 13 s of load plus start-up; a reader must not stretch it.
assert took < 3 * 13 + 25, f"the sweep took {took} s"
page = open(f"{tmp}/page.html").read()
for k, v in re.findall(r'\b(src|href)="([^"]*)"', page):
    assert v.startswith("#"), f"external reference {k}={v}"
def numbers(path):
    d = open(path).read()
    assert 'data-name="local"' in d, f"{path}: the running sweep is not on the page"
    return dict(re.findall(r'<dd class="(\w+)">([^<]*)</dd>', d))
looks = [numbers(f"{tmp}/dom{k}.html") for k in (1, 2, 3)]
assert all(x.get("requests") for x in looks), looks
# Three looks a few seconds apart: the numbers change between them (two may catch the same
# second of a loaded machine).
seen = {(x["requests"], x["rate"]) for x in looks}
assert len(seen) > 1, f"the page did not change: {looks}"
# Screenshots for people to look at; the DOM checks above are the proof. A look taken before the
# first message shows the page's frame only (a smaller PNG), so one of the three must be full.
sizes = [os.path.getsize(f"{logs}/progress_local-{k}.png") for k in (1, 2, 3)]
assert min(sizes) > 2000 and max(sizes) > 10000, f"screenshot sizes {sizes}"
print(f"feed: {n} messages in 12 s, requests {reqs[0]} -> {reqs[-1]}; stalled reader dropped "
      f"after {int(m.group(1)) / 1000:.1f} s of waiting; page: requests "
      f"{' -> '.join(x['requests'] for x in looks)}; sweep took {took} s")
PY
