#!/usr/bin/env python3
"""An HTTP/1.1 test app whose capacity is known in advance, for the capacity-search tests.

It serves at most SLOTS requests at once; each holds its slot for HOLD_MS milliseconds (a sleep,
not CPU), so it sustains at most SLOTS x 1000 / HOLD_MS requests a second. Below that a request
takes HOLD_MS; above it the excess queues for a slot and latency grows without bound, which is
the knee the search must find. SLOTS is WORKERS x SLOTS_PER_WORKER, so a sweep's variants (which
set WORKERS) get different known capacities.

    WORKERS=2 SLOTS_PER_WORKER=2 HOLD_MS=20 PORT=8080 python3 capacity_server.py [marker]

SLOW_AFTER_S (0: off) makes an app that stays slow after an overload, as one whose collector
storms or whose cache was thrashed: when a request has waited SLOW_TRIGGER_MS (default 5 x
HOLD_MS) for a slot, every request holds its slot SLOW_FACTOR (3) times as long for the next
SLOW_AFTER_S seconds, whatever the load does meanwhile (the storm runs its course), and no storm
starts again for as long after it (a collector that just ran). One user is then still answered
within a few service times, while a load near the capacity queues.

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
import time

HOST = os.environ.get("POD_IP") or "127.0.0.1"
PORT = int(os.environ.get("PORT", "8080"))
WORKERS = int(os.environ.get("WORKERS", "1"))
SLOTS = WORKERS * int(os.environ.get("SLOTS_PER_WORKER", "1"))
HOLD = int(os.environ.get("HOLD_MS", "20")) / 1000.0
CAPACITY = SLOTS / HOLD
BURN = min(max(float(os.environ.get("BURN_CORES", "0")), 0.0), 0.9)
SLOW_AFTER = float(os.environ.get("SLOW_AFTER_S", "0"))
SLOW_TRIGGER = float(os.environ.get("SLOW_TRIGGER_MS", str(5 * HOLD * 1000))) / 1000.0
SLOW_FACTOR = float(os.environ.get("SLOW_FACTOR", "3"))
slow_until = -1e9  # monotonic time the current slow period ends (long past at the start)


def hold_s(waited):
    """The service time of a request that waited this long for its slot: starts a slow period
    when it waited past the trigger and none is running."""
    global slow_until
    now = time.monotonic()
    if SLOW_AFTER > 0 and waited >= SLOW_TRIGGER and now >= slow_until + SLOW_AFTER:
        slow_until = now + SLOW_AFTER
    return HOLD * SLOW_FACTOR if now < slow_until else HOLD


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
                queued = time.monotonic()
                async with slots:
                    if reader.at_eof():
                        return  # the client gave up while this request queued
                    await asyncio.sleep(hold_s(time.monotonic() - queued))
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
