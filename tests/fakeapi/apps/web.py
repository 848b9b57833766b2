#!/usr/bin/env python3
"""The fake cluster's example app: an HTTP server bound to $POD_IP:$PORT.

GET /          200 "hello from <pod>" (plus $GREETING when set)
GET /healthz   200 "ok"
GET /env       the environment as JSON (tests check what the kubelet passed)
GET /work?ms=N burns N ms of CPU, so throughput follows the CPU limit
GET /sleep?ms=N answers after N ms without CPU (a service time no limit changes)
GET /alloc?mb=N allocates and keeps N MiB (the memory limit's OOM kill shows up as OOMKilled)
Any other path: 404. Each request runs on its own thread; $WORKERS is only reported.
$ALLOC_MB: MiB allocated and kept from the start (a memory use a limit can be set below).
"""

import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOLD = []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, code, body, ctype="text/plain"):
        b = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        if u.path == "/healthz":
            return self.reply(200, "ok\n")
        if u.path == "/env":
            return self.reply(200, json.dumps(dict(os.environ), sort_keys=True),
                              "application/json")
        if u.path == "/work":
            end = time.process_time() + int(q.get("ms", "10")) / 1000.0
            x = 0
            while time.process_time() < end:
                x += 1
            return self.reply(200, "worked\n")
        if u.path == "/sleep":
            time.sleep(int(q.get("ms", "10")) / 1000.0)
            return self.reply(200, "slept\n")
        if u.path == "/alloc":
            HOLD.append(bytearray(int(q.get("mb", "1")) << 20))
            for chunk in HOLD[-1:]:
                for i in range(0, len(chunk), 4096):
                    chunk[i] = 1
            return self.reply(200, "holding %d MiB\n" % (sum(len(h) for h in HOLD) >> 20))
        if u.path != "/":
            return self.reply(404, "not found\n")
        greeting = os.environ.get("GREETING", "")
        return self.reply(200, "hello from %s%s\n" % (os.environ.get("POD_NAME", "?"),
                                                      " " + greeting if greeting else ""))


def main():
    ip = os.environ.get("POD_IP", "127.0.0.1")
    port = int(os.environ.get("PORT", "8080"))
    srv = ThreadingHTTPServer((ip, port), Handler)
    srv.daemon_threads = True
    if os.environ.get("ALLOC_MB"):
        HOLD.append(bytearray(int(os.environ["ALLOC_MB"]) << 20))
        for i in range(0, len(HOLD[0]), 4096):
            HOLD[0][i] = 1
    delay = float(os.environ.get("STARTUP_DELAY", "0"))
    if delay:
        time.sleep(delay)
    if os.environ.get("CRASH") == "1":
        print("crashing on purpose", flush=True)
        sys.exit(3)
    print("listening on %s:%d workers=%s" % (ip, port, os.environ.get("WORKERS", "1")),
          flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
