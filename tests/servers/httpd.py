#!/usr/bin/env python3
"""A small HTTP/1.1 test target that counts what it receives and misbehaves on request.

Standard library only, threaded (one thread per connection), listening on 127.0.0.1 (or ::1)
on an ephemeral port. Written for sizeup's load-generator tests; any test may reuse it.

Start it and learn its port:

    python3 tests/servers/httpd.py --port-file /tmp/port &      # writes the port when ready
    python3 tests/servers/httpd.py --bind ::1 --stall-every 5 --stall-for 1
    python3 tests/servers/httpd.py --tls-cert cert.pem --tls-key key.pem

It prints "listening on HOST PORT" on stdout once ready, and with --port-file writes the port
number to that file (atomically, so a test can poll for it). It stops on SIGTERM or SIGINT.

What it answers, chosen by the request path (the query string is ignored):

    /__stats             JSON of everything counted so far (this request is not counted)
    /__reset             zero the counters
    /chunked             200, chunked body (three chunks, with a trailer)
    /close               200 with Content-Length, then "Connection: close" and close
    /http10              HTTP/1.0 200 with no length: the body ends when the connection closes
    /status/NNN          status NNN (e.g. /status/500) with a short body
    /sleep/MS            200 after MS milliseconds
    /close-mid-body      promises 100 bytes, sends 10, closes
    /garbage             non-HTTP bytes, then close
    /never               reads the request and never answers (until the client gives up)
    /trickle             200 whose header and body arrive a few bytes every 20 ms
    /big/N               200 with an N-byte body
    anything else        200, Content-Length, body "Hello, world\\n" (13 bytes)

Server-wide: --stall-every E --stall-for F makes every response that would be sent during the
first F seconds of each E-second period (counted from start-up) wait until that stall ends,
like a server with periodic garbage-collection pauses.

Counters (GET /__stats): requests, connections, bad_requests, by_request {"METHOD /path": n},
headers {"name: value": n} for every request header except Host, Content-Length and
User-Agent, bodies {"body": n} for non-empty request bodies (first 200 bytes), status
{"code": n} for what it answered.
"""

import argparse
import json
import os
import signal
import socket
import socketserver
import ssl
import sys
import threading
import time

MAX_LINE = 65536
MAX_HEADERS = 200
MAX_BODY = 16 << 20
SKIP_HEADERS = {"host", "content-length", "user-agent"}


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.requests = 0
            self.connections = 0
            self.bad_requests = 0
            self.by_request = {}
            self.headers = {}
            self.bodies = {}
            self.status = {}

    def add(self, d, key):
        d[key] = d.get(key, 0) + 1

    def snapshot(self):
        with self.lock:
            return {
                "requests": self.requests,
                "connections": self.connections,
                "bad_requests": self.bad_requests,
                "by_request": dict(self.by_request),
                "headers": dict(self.headers),
                "bodies": dict(self.bodies),
                "status": dict(self.status),
            }


class Handler(socketserver.BaseRequestHandler):
    def setup(self):
        srv = self.server
        self.sock = self.request
        if srv.tls_ctx is not None:
            try:
                self.sock.settimeout(10)
                self.sock = srv.tls_ctx.wrap_socket(self.sock, server_side=True)
                self.sock.settimeout(None)
            except (ssl.SSLError, OSError):
                self.sock = None
                return
        self.rfile = self.sock.makefile("rb", buffering=65536)
        with srv.counters.lock:
            srv.counters.connections += 1

    def finish(self):
        try:
            if self.sock is not None:
                self.rfile.close()
                self.sock.close()
        except OSError:
            pass

    def send(self, data):
        self.sock.sendall(data)

    def stall(self):
        srv = self.server
        if not srv.stall_every:
            return
        t = time.monotonic() - srv.started
        phase = t % srv.stall_every
        if phase < srv.stall_for:
            time.sleep(srv.stall_for - phase)

    def respond(self, status, body, extra=b"", close=False, version=b"HTTP/1.1"):
        self.stall()
        head = version + b" %d X\r\n" % status
        head += b"Content-Length: %d\r\n" % len(body)
        if close:
            head += b"Connection: close\r\n"
        head += extra + b"\r\n"
        self.count_status(status)
        self.send(head + body)

    def count_status(self, status):
        c = self.server.counters
        with c.lock:
            c.add(c.status, str(status))

    def read_request(self):
        """Returns (method, path, version, headers dict, body) or None at EOF/bad input."""
        line = self.rfile.readline(MAX_LINE + 1)
        if not line:
            return None
        if len(line) > MAX_LINE or not line.endswith(b"\n"):
            raise ValueError("request line too long or truncated")
        parts = line.decode("latin-1").rstrip("\r\n").split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise ValueError("bad request line %r" % line[:80])
        method, target, version = parts
        headers = []
        for _ in range(MAX_HEADERS + 1):
            h = self.rfile.readline(MAX_LINE + 1)
            if not h or len(h) > MAX_LINE:
                raise ValueError("truncated headers")
            h = h.decode("latin-1").rstrip("\r\n")
            if h == "":
                break
            name, sep, value = h.partition(":")
            if not sep:
                raise ValueError("header without ':'")
            headers.append((name.strip(), value.strip()))
        else:
            raise ValueError("too many headers")
        hd = {n.lower(): v for n, v in headers}
        body = b""
        if "transfer-encoding" in hd:
            raise ValueError("chunked requests are not supported by this test server")
        if "content-length" in hd:
            n = int(hd["content-length"])
            if n < 0 or n > MAX_BODY:
                raise ValueError("bad Content-Length")
            body = self.rfile.read(n)
            if len(body) != n:
                raise ValueError("truncated body")
        return method, target, version, headers, body

    def count(self, method, path, headers, body):
        c = self.server.counters
        with c.lock:
            c.requests += 1
            c.add(c.by_request, "%s %s" % (method, path))
            for n, v in headers:
                if n.lower() not in SKIP_HEADERS:
                    c.add(c.headers, "%s: %s" % (n.lower(), v))
            if body:
                c.add(c.bodies, body[:200].decode("latin-1"))

    def handle(self):
        if self.sock is None:
            return
        try:
            while True:
                try:
                    req = self.read_request()
                except ValueError:
                    with self.server.counters.lock:
                        self.server.counters.bad_requests += 1
                    self.respond(400, b"bad request\n", close=True)
                    return
                if req is None:
                    return
                method, target, version, headers, body = req
                path = target.split("?", 1)[0]
                hd = {n.lower(): v.lower() for n, v in headers}
                if path == "/__stats":
                    self.respond(200, json.dumps(self.server.counters.snapshot()).encode())
                    continue
                if path == "/__reset":
                    self.server.counters.reset()
                    self.respond(200, b"reset\n")
                    continue
                self.count(method, path, headers, body)
                client_close = hd.get("connection") == "close" or version == "HTTP/1.0"
                if not self.answer(method, path):
                    return
                if client_close:
                    return
        except (OSError, ssl.SSLError):
            return

    def answer(self, method, path):
        """Sends the response for path; returns False when the connection must end."""
        if path == "/chunked":
            self.stall()
            self.count_status(200)
            self.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      b"5\r\nHello\r\n2;ext=1\r\n, \r\n6\r\nworld\n\r\n0\r\nX-Trailer: t\r\n\r\n")
            return True
        if path == "/close":
            self.respond(200, b"closing\n", close=True)
            return False
        if path == "/http10":
            self.stall()
            self.count_status(200)
            self.send(b"HTTP/1.0 200 OK\r\n\r\nbody until close\n")
            return False
        if path.startswith("/status/"):
            try:
                code = int(path[len("/status/"):])
            except ValueError:
                code = 400
            if code < 100 or code > 999:
                code = 400
            self.respond(code, b"status %d\n" % code)
            return True
        if path.startswith("/sleep/"):
            try:
                ms = min(int(path[len("/sleep/"):]), 60000)
            except ValueError:
                ms = 0
            time.sleep(ms / 1000.0)
            self.respond(200, b"slept\n")
            return True
        if path.startswith("/big/"):
            try:
                n = min(int(path[len("/big/"):]), MAX_BODY)
            except ValueError:
                n = 0
            self.respond(200, b"x" * n)
            return True
        if path == "/close-mid-body":
            self.stall()
            self.count_status(200)
            self.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
            return False
        if path == "/garbage":
            self.stall()
            self.send(b"\x00\x01garbage, not HTTP at all\r\n\r\n")
            return False
        if path == "/never":
            # Hold the connection without answering until the client closes it.
            try:
                while self.sock.recv(4096):
                    pass
            except OSError:
                pass
            return False
        if path == "/trickle":
            self.stall()
            self.count_status(200)
            data = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\ntrickle body"
            for i in range(0, len(data), 4):
                self.send(data[i:i + 4])
                time.sleep(0.02)
            return True
        if method == "HEAD":
            self.stall()
            self.count_status(200)
            self.send(b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n")
            return True
        self.respond(200, b"Hello, world\n")
        return True


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 4096


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bind", default="127.0.0.1", help="127.0.0.1 (default) or ::1")
    ap.add_argument("--port", type=int, default=0, help="0 (default): an ephemeral port")
    ap.add_argument("--port-file", help="write the port number here once listening")
    ap.add_argument("--stall-every", type=float, default=0, help="stall period in seconds")
    ap.add_argument("--stall-for", type=float, default=0, help="stall length in seconds")
    ap.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    ap.add_argument("--tls-key", help="... and this private key (PEM)")
    args = ap.parse_args()
    if args.bind not in ("127.0.0.1", "::1") and not args.bind.startswith("127."):
        ap.error("--bind must be a loopback address")

    if ":" in args.bind:
        Server.address_family = socket.AF_INET6
    srv = Server((args.bind, args.port), Handler)
    srv.counters = Counters()
    srv.started = time.monotonic()
    srv.stall_every = args.stall_every
    srv.stall_for = args.stall_for
    srv.tls_ctx = None
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        srv.tls_ctx = ctx
    port = srv.server_address[1]

    def stop(signum, frame):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.port_file)
    print("listening on %s %d" % (args.bind, port), flush=True)
    srv.serve_forever(poll_interval=0.2)
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
