#!/usr/bin/env python3
"""An HTTP/1.1 test app whose capacity is known in advance, for the capacity-search tests.

It serves at most SLOTS requests at once; each holds its slot for HOLD_MS milliseconds (a sleep,
not CPU), so it sustains at most SLOTS x 1000 / HOLD_MS requests a second. Below that a request
takes HOLD_MS; above it the excess queues for a slot and latency grows without bound, which is
the knee the search must find. SLOTS is WORKERS x SLOTS_PER_WORKER, so a sweep's variants (which
set WORKERS) get different known capacities.

    WORKERS=2 SLOTS_PER_WORKER=2 HOLD_MS=20 PORT=8080 python3 capacity_server.py [marker]

BURN_CORES (0: off) adds a fixed background burn, as a runtime's idle work or polling: a child
process spins BURN_CORES of a core (in 10 ms periods) whatever the load, so the app's CPU stays
nearly flat while its load grows (the request-rate autoscaler's tests); it exits with the server.

Environment: PORT (8080), WORKERS (1), SLOTS_PER_WORKER (1), HOLD_MS (20), POD_IP (the address
to serve on, as the fake cluster's kubelet gives each pod its own; default 127.0.0.1). One
asyncio event loop (standard library only). A request whose client has gone away while it waited
for a slot is dropped without taking the slot, as a well-behaved server does, so an overloaded
step leaves no backlog behind for the next one. GET /__capacity answers the known capacity.
The optional argument is ignored (tests pass a marker to find the process).
"""

import asyncio
import os
import signal

HOST = os.environ.get("POD_IP") or "127.0.0.1"
PORT = int(os.environ.get("PORT", "8080"))
WORKERS = int(os.environ.get("WORKERS", "1"))
SLOTS = WORKERS * int(os.environ.get("SLOTS_PER_WORKER", "1"))
HOLD = int(os.environ.get("HOLD_MS", "20")) / 1000.0
CAPACITY = SLOTS / HOLD
BURN = min(max(float(os.environ.get("BURN_CORES", "0")), 0.0), 0.9)


async def handle(reader, writer, slots):
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
            if path == b"/__capacity":
                body = b"%.3f\n" % CAPACITY
            else:
                async with slots:
                    if reader.at_eof():
                        return  # the client gave up while this request queued
                    await asyncio.sleep(HOLD)
                body = b"ok\n"
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n"
                         % len(body) + body)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
        pass
    finally:
        writer.close()


async def main():
    slots = asyncio.Semaphore(SLOTS)
    server = await asyncio.start_server(lambda r, w: handle(r, w, slots), HOST, PORT,
                                        backlog=4096, reuse_address=True)
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set_result, None)
    async with server:
        await stop


def burn(parent):
    """Spins BURN of each 10 ms period until the server (parent) is gone."""
    import time
    period = 0.010
    while os.getppid() == parent:
        end = time.monotonic() + BURN * period
        while time.monotonic() < end:
            pass
        time.sleep((1 - BURN) * period)
    os._exit(0)


if __name__ == "__main__":
    if BURN > 0:
        parent = os.getpid()
        if os.fork() == 0:
            burn(parent)
    asyncio.run(main())
