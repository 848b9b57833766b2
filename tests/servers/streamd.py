#!/usr/bin/python3
"""A stream server with known behaviour, for sizeup's stream-load tests (aiohttp, from Debian's
python3-aiohttp; run it with /usr/bin/python3, where Debian's packages are).

    /usr/bin/python3 tests/servers/streamd.py --port-file /tmp/port --delay-ms 200 &

Listens on 127.0.0.1 on an ephemeral port; writes the port to --port-file when ready.

    GET  /ws            WebSocket: every command fans out to it as a text frame
    GET  /sse           text/event-stream: every command fans out to it as an event
    POST /cmd           a command: the JSON body's "seq" (a number); answered 202 at once, and
                        --delay-ms later the frame {"seq": N, "pad": "..."} goes to every open
                        stream (one fan-out loop, so a slow server is slow for all)
    GET  /notws         200 text/plain (neither a WebSocket nor an event stream)
    GET  /hang          reads the request and never answers
    GET  /__stats       JSON counters: commands, bad_commands, streams_opened, streams_now,
                        frames_sent, subscribes (first messages received on WebSockets)

Misbehaviour on request:
    --deflate           accept permessage-deflate (off by default: frames are not compressed)
    --frame-bytes N     pad each frame to about N bytes
    --no-key            frames carry no "seq" field
    --big-frame N       the first command's frame is N bytes (e.g. 16 MiB), for every stream
    --close-all-at S    S seconds after the first stream opened, close every stream at once
                        (WebSocket close code --close-code, default 1001; event streams end)
    --abort-all-at S    the same, but by resetting the connections (no close frame)
    --stall-at S --stall-for T
                        S seconds after the first command, the whole server stops (it reads
                        nothing, answers nothing, sends nothing) for T seconds, then goes on
"""

import argparse
import asyncio
import json
import os
import signal
import sys
import time

from aiohttp import WSMsgType, web


class State:
    def __init__(self, args):
        self.args = args
        self.ws = set()
        self.sse = set()
        self.commands = 0
        self.bad_commands = 0
        self.streams_opened = 0
        self.frames_sent = 0
        self.subscribes = 0
        self.first_open = None
        self.first_command = None
        self.big_sent = False
        self.stalled = False


def frame_for(state, seq):
    a = state.args
    if a.big_frame and not state.big_sent:
        state.big_sent = True
        return "x" * a.big_frame
    body = {"seq": seq} if not a.no_key else {"id": "n%d" % seq}
    text = json.dumps(body)
    if a.frame_bytes > len(text) + 10:
        body["pad"] = "p" * (a.frame_bytes - len(text) - 10)
        text = json.dumps(body)
    return text


async def send_all(state, streams, send):
    """One frame to each stream of the set; a stream whose send fails leaves it."""
    for st in list(streams):
        try:
            await send(st)
            state.frames_sent += 1
        except Exception:
            streams.discard(st)


async def fanout(state, seq):
    text = frame_for(state, seq)
    data = ("data: %s\n\n" % text).encode()
    await send_all(state, state.ws, lambda ws: ws.send_str(text))
    await send_all(state, state.sse, lambda resp: resp.write(data))


def maybe_stall(state):
    a = state.args
    if a.stall_for <= 0 or state.stalled or state.first_command is None:
        return
    if time.monotonic() - state.first_command >= a.stall_at:
        state.stalled = True
        # The whole event loop stops: nothing is read, answered or sent until it ends.
        time.sleep(a.stall_for)


async def cmd(request):
    state = request.app["state"]
    try:
        body = await request.json()
        seq = int(body["seq"])
    except Exception:
        state.bad_commands += 1
        return web.Response(status=400, text="a JSON body with a numeric seq\n")
    state.commands += 1
    if state.first_command is None:
        state.first_command = time.monotonic()
    loop = asyncio.get_running_loop()
    loop.call_later(state.args.delay_ms / 1000.0, lambda: asyncio.ensure_future(fanout(state, seq)))
    return web.Response(status=202, text="ok\n")


def opened(state):
    state.streams_opened += 1
    if state.first_open is None:
        state.first_open = time.monotonic()
        a = state.args
        loop = asyncio.get_running_loop()
        if a.close_all_at > 0:
            loop.call_later(a.close_all_at, lambda: asyncio.ensure_future(close_all(state, False)))
        if a.abort_all_at > 0:
            loop.call_later(a.abort_all_at, lambda: asyncio.ensure_future(close_all(state, True)))


async def close_all(state, abort):
    for ws in list(state.ws):
        if abort:
            ws._req.transport.abort()
        else:
            # The close frame straight from the writer: aiohttp's ws.close() from another task
            # races the handler's own close and may send 1000 instead of the code asked for.
            await ws._writer.close(state.args.close_code, b"server closes")
            ws._req.transport.close()
    for resp in list(state.sse):
        if abort:
            resp._req.transport.abort()
        else:
            resp.ended = True
            resp.done.set()


async def ws_handler(request):
    state = request.app["state"]
    ws = web.WebSocketResponse(compress=state.args.deflate, heartbeat=None)
    await ws.prepare(request)
    ws._req = request
    state.ws.add(ws)
    opened(state)
    try:
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                state.subscribes += 1
            elif msg.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
                break
    finally:
        state.ws.discard(ws)
    return ws


async def sse_handler(request):
    state = request.app["state"]
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                       "Cache-Control": "no-cache"})
    await resp.prepare(request)
    resp._req = request
    resp.done = asyncio.Event()
    await resp.write(b": welcome\n\n")
    state.sse.add(resp)
    opened(state)
    try:
        await resp.done.wait()
    finally:
        state.sse.discard(resp)
    return resp


async def notws(request):
    return web.Response(text="not a stream\n")


async def hang(request):
    await asyncio.sleep(3600)
    return web.Response(text="late\n")


async def stats(request):
    s = request.app["state"]
    return web.json_response({
        "commands": s.commands, "bad_commands": s.bad_commands,
        "streams_opened": s.streams_opened, "streams_now": len(s.ws) + len(s.sse),
        "frames_sent": s.frames_sent, "subscribes": s.subscribes})


async def stall_watch(state):
    while True:
        await asyncio.sleep(0.01)
        maybe_stall(state)


async def main(args):
    state = State(args)
    app = web.Application(client_max_size=1 << 20)
    app["state"] = state
    app.add_routes([web.get("/ws", ws_handler), web.get("/sse", sse_handler),
                    web.post("/cmd", cmd), web.get("/notws", notws), web.get("/hang", hang),
                    web.get("/__stats", stats)])
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print("listening on 127.0.0.1 %d" % port, flush=True)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.port_file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    watcher = asyncio.ensure_future(stall_watch(state))
    await stop.wait()
    watcher.cancel()
    await runner.cleanup()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port-file")
    ap.add_argument("--delay-ms", type=float, default=0)
    ap.add_argument("--deflate", action="store_true")
    ap.add_argument("--frame-bytes", type=int, default=0)
    ap.add_argument("--no-key", action="store_true")
    ap.add_argument("--big-frame", type=int, default=0)
    ap.add_argument("--close-all-at", type=float, default=0)
    ap.add_argument("--close-code", type=int, default=1001)
    ap.add_argument("--abort-all-at", type=float, default=0)
    ap.add_argument("--stall-at", type=float, default=0)
    ap.add_argument("--stall-for", type=float, default=0)
    sys.exit(asyncio.run(main(ap.parse_args())))
