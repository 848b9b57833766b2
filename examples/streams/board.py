#!/usr/bin/python3
"""A live board: the second demo app (make demo-streams). Clients watch the board over a
WebSocket (/ws) or server-sent events (/events); a rename of a card (POST /api/cards/rename,
JSON {"id": N}) is fanned out to every watcher as one frame {"seq": N, "card": ..., "title":
...}. Each watcher keeps the board's recent history (HISTORY frames) to replay after a
reconnect, so its memory grows with the frames it has seen, as a real live view's does.

    PORT=8090 /usr/bin/python3 examples/streams/board.py

aiohttp from Debian's python3-aiohttp (run it with /usr/bin/python3). GET /healthz answers 200.
"""

import asyncio
import collections
import json
import os
import signal

from aiohttp import WSMsgType, web

HISTORY = 64  # frames each watcher keeps for a replay


class Board:
    def __init__(self):
        self.watchers = set()
        self.cards = {}


class Watcher:
    """One open stream: how to send it a frame, and the history it keeps for a replay."""

    def __init__(self, send):
        self.send = send
        self.history = collections.deque(maxlen=HISTORY)


def frame(board, body):
    seq = int(body["id"])
    card = seq % 100
    title = "card %d, rename %d" % (card, seq)
    board.cards[card] = title
    return json.dumps({"seq": seq, "card": card, "title": title, "by": "demo"})


async def fanout(board, text):
    for w in list(board.watchers):
        w.history.append(text)
        try:
            await w.send(text)
        except Exception:
            board.watchers.discard(w)


async def rename(request):
    board = request.app["board"]
    try:
        text = frame(board, await request.json())
    except Exception:
        return web.Response(status=400, text='a JSON body {"id": N}\n')
    await fanout(board, text)
    return web.Response(status=202, text="ok\n")


async def ws_handler(request):
    board = request.app["board"]
    ws = web.WebSocketResponse(heartbeat=None)
    await ws.prepare(request)
    w = Watcher(ws.send_str)
    board.watchers.add(w)
    try:
        async for msg in ws:
            if msg.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
                break
    finally:
        board.watchers.discard(w)
    return ws


async def events(request):
    board = request.app["board"]
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                       "Cache-Control": "no-cache"})
    await resp.prepare(request)
    await resp.write(b": board\n\n")
    gone = asyncio.Event()

    async def send(text):
        try:
            await resp.write(("data: %s\n\n" % text).encode())
        except Exception:
            gone.set()
            raise

    w = Watcher(send)
    board.watchers.add(w)
    try:
        await gone.wait()
    finally:
        board.watchers.discard(w)
    return resp


async def healthz(request):
    return web.Response(text="ok\n")


async def main():
    app = web.Application(client_max_size=1 << 16)
    app["board"] = Board()
    app.add_routes([web.get("/ws", ws_handler), web.get("/events", events),
                    web.post("/api/cards/rename", rename), web.get("/healthz", healthz)])
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", int(os.environ.get("PORT", "8090")), backlog=4096)
    await site.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
