"""Clients of the live-progress feed (ws://HOST:PORT/progress), for the tests.

  progress_client.py watch URL SECONDS [TOKEN]  reads every message for SECONDS; prints a JSON
                                                summary: how many, when, and each sweep's numbers
  progress_client.py slow HOST PORT SECONDS     opens the WebSocket with a tiny receive buffer,
                                                reads nothing for SECONDS, then drains: prints
                                                whether the server had closed it
  progress_client.py refused URL [TOKEN]        prints the HTTP status a refused upgrade got

Runs under Debian's /usr/bin/python3 with python3-websockets (a client no one here wrote).
"""
import asyncio, base64, json, os, socket, sys, time

import websockets


async def watch(url, seconds, token):
    headers = {"Authorization": "Bearer " + token} if token else None
    out = {"messages": 0, "times": [], "sweeps": []}
    end = time.monotonic() + seconds
    async with websockets.connect(url, extra_headers=headers, max_size=1 << 22) as ws:
        while time.monotonic() < end:
            try:
                m = await asyncio.wait_for(ws.recv(), timeout=max(0.1, end - time.monotonic()))
            except asyncio.TimeoutError:
                break
            d = json.loads(m)
            out["messages"] += 1
            out["times"].append(round(time.monotonic(), 3))
            out["sweeps"].append([{k: s[k] for k in ("name", "phase", "variant", "rps", "p95_ms",
                                                       "requests", "errors", "streams")}
                                  for s in d["sweeps"]])
    print(json.dumps(out))


def slow(host, port, seconds):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    s.connect((host, port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET /progress HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
               % (host, port, key)).encode())
    head = s.recv(1024)
    if b" 101 " not in head.split(b"\r\n")[0]:
        print(json.dumps({"closed": None, "error": head[:80].decode("latin1")}))
        return
    # Never read while the server keeps sending: its messages pile up in the two sockets'
    # buffers until it stops being able to write. Then drain: a connection the server dropped
    # ends (EOF or reset) once what was queued is read; a live one keeps delivering.
    time.sleep(seconds)
    closed, got = False, 0
    s.settimeout(3)
    try:
        while True:
            b = s.recv(65536)
            if not b:
                closed = True
                break
            got += len(b)
    except ConnectionResetError:
        closed = True
    except socket.timeout:
        pass
    print(json.dumps({"closed": closed, "drained_bytes": got}))


async def refused(url, token):
    headers = {"Authorization": "Bearer " + token} if token else None
    try:
        async with websockets.connect(url, extra_headers=headers) as ws:
            print(json.dumps({"status": 101}))
    except websockets.exceptions.InvalidStatusCode as e:
        print(json.dumps({"status": e.status_code}))
    except (websockets.exceptions.InvalidHandshake, OSError) as e:
        print(json.dumps({"status": None, "error": str(e)[:100]}))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "watch":
        asyncio.run(watch(sys.argv[2], float(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None))
    elif mode == "slow":
        slow(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif mode == "refused":
        asyncio.run(refused(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
    else:
        sys.exit("unknown mode " + mode)
