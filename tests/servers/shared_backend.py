#!/usr/bin/env python3
"""A test app whose pods share a backend of known capacity, for the scale-out tests.

A pod serves at most SLOTS requests at once, each holding its slot HOLD_MS (a sleep, not CPU):
one pod sustains SLOTS x 1000 / HOLD_MS req/s. Each request then calls the backend, which
serves at most BACKEND_SLOTS requests at once for SERVICE_MS each: all the pods together sustain
at most BACKEND_SLOTS x 1000 / SERVICE_MS req/s, however many there are. So the scale-out's
points rise with N, N x one pod, then flatten at the backend's capacity; neither figure depends
on CPU. Without BACKEND_PORT the pods share nothing and scale linearly.

    python3 shared_backend.py --backend --port-file F      # the backend (BACKEND_SLOTS, SERVICE_MS)
    PORT=8080 BACKEND_PORT=9000 python3 shared_backend.py [marker]   # one pod

Environment: PORT (8080), SLOTS (4), HOLD_MS (40), BACKEND_PORT (none), BACKEND_SLOTS (5),
SERVICE_MS (20). GET /__capacity answers the pod's (or the backend's) known capacity. A request
whose client has gone away while it queued is dropped. Standard library only, 127.0.0.1 only.
"""

import asyncio
import os
import signal
import sys

BACKEND = "--backend" in sys.argv
PORT = int(os.environ.get("PORT", "8080"))
SLOTS = int(os.environ.get("SLOTS", "4"))
HOLD = int(os.environ.get("HOLD_MS", "40")) / 1000.0
BACKEND_PORT = int(os.environ.get("BACKEND_PORT", "0"))
BACKEND_SLOTS = int(os.environ.get("BACKEND_SLOTS", "5"))
SERVICE = int(os.environ.get("SERVICE_MS", "20")) / 1000.0


async def call_backend():
    """One GET to the backend on a fresh connection; True when it answered 200."""
    r, w = await asyncio.open_connection("127.0.0.1", BACKEND_PORT)
    try:
        w.write(b"GET / HTTP/1.1\r\nHost: backend\r\nConnection: close\r\n\r\n")
        await w.drain()
        status = await r.readline()
        await r.read()
        return b" 200 " in status
    finally:
        w.close()


async def handle(reader, writer, slots, hold, capacity):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            line = head.split(b"\r\n", 1)[0].split(b" ")
            path = line[1] if len(line) > 1 else b"/"
            length = 0
            for h in head.split(b"\r\n")[1:]:
                k, _, v = h.partition(b":")
                if k.strip().lower() == b"content-length":
                    length = int(v.strip() or b"0")
            if length:
                await reader.readexactly(length)
            status = b"200 OK"
            if path == b"/__capacity":
                body = b"%.3f\n" % capacity
            else:
                async with slots:
                    if reader.at_eof():
                        return  # the client gave up while this request queued
                    await asyncio.sleep(hold)
                body = b"ok\n"
                if not BACKEND and BACKEND_PORT and not await call_backend():
                    status, body = b"502 Bad Gateway", b"backend\n"
            writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body) + body)
            await writer.drain()
            if BACKEND:
                return  # a pod's call is one request on its own connection (Connection: close)
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
        pass
    finally:
        writer.close()


async def main():
    port, port_file = PORT, None
    if "--port-file" in sys.argv:
        port_file = sys.argv[sys.argv.index("--port-file") + 1]
        port = 0
    n, hold = (BACKEND_SLOTS, SERVICE) if BACKEND else (SLOTS, HOLD)
    slots = asyncio.Semaphore(n)
    server = await asyncio.start_server(lambda r, w: handle(r, w, slots, hold, n / hold),
                                        "127.0.0.1", port, backlog=4096, reuse_address=True)
    if port_file:
        with open(port_file + ".tmp", "w") as f:
            f.write("%d\n" % server.sockets[0].getsockname()[1])
        os.rename(port_file + ".tmp", port_file)
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set_result, None)
    async with server:
        await stop


if __name__ == "__main__":
    asyncio.run(main())
