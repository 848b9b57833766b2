#!/usr/bin/env python3
"""Misbehaving HTTP targets for the reliability tests (127.0.0.1 only, standard library only).

tests/servers/httpd.py covers garbage-then-close, a FIN mid-body, never answering and a short
trickle. This server adds the behaviours that one lacks, each chosen by the request path:

    /garbage-stream   random non-HTTP bytes, 4 KiB every 10 ms, never a status line
    /no-end           200 chunked whose chunks never stop (1 KiB every 10 ms)
    /huge-headers     200 whose header block is 80 KiB (over the load generator's 64 KiB cap)
    /reset            promises 1000 bytes, sends 10, then a TCP RST (SO_LINGER 0)
    /never            reads the request and never answers
    /slowloris        the status line and headers one byte every 300 ms, never finished
    anything else     200 "ok\\n"

With --silent-port-file, a second socket listens (backlog 1) but never accepts: the kernel
completes the handshake and the client's request is never read. Every stream is cut after
--max-seconds (default 60) so nothing outlives a test. Writes its port to --port-file.
"""
import argparse
import os
import random
import signal
import socket
import socketserver
import struct
import sys
import threading
import time


class Handler(socketserver.BaseRequestHandler):
    def read_head(self):
        data = b""
        self.request.settimeout(self.server.max_seconds)
        while b"\r\n\r\n" not in data:
            chunk = self.request.recv(4096)
            if not chunk:
                return None
            data += chunk
            if len(data) > 65536:
                return None
        line = data.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        return line[1].split("?", 1)[0] if len(line) == 3 else "/"

    def until(self):
        return time.monotonic() + self.server.max_seconds

    def handle(self):
        s = self.request
        try:
            while True:
                path = self.read_head()
                if path is None:
                    return
                with self.server.lock:
                    self.server.counts[path] = self.server.counts.get(path, 0) + 1
                if not self.answer(s, path):
                    return
        except OSError:
            return

    def answer(self, s, path):
        end = self.until()
        if path == "/garbage-stream":
            rnd = random.Random(1)
            while time.monotonic() < end:
                s.sendall(bytes(rnd.getrandbits(8) for _ in range(4096)))
                time.sleep(0.01)
            return False
        if path == "/no-end":
            s.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            while time.monotonic() < end:
                s.sendall(b"400\r\n" + b"x" * 1024 + b"\r\n")
                time.sleep(0.01)
            return False
        if path == "/huge-headers":
            big = b"X-Big: " + b"a" * (80 * 1024) + b"\r\n"
            s.sendall(b"HTTP/1.1 200 OK\r\n" + big + b"Content-Length: 3\r\n\r\nok\n")
            return True
        if path == "/reset":
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789")
            time.sleep(0.01)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        if path == "/never":
            s.settimeout(1)
            while time.monotonic() < end:
                try:
                    if not s.recv(4096):
                        return False
                except socket.timeout:
                    pass
            return False
        if path == "/slowloris":
            head = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"z" * 100000
            for i in range(len(head)):
                if time.monotonic() >= end:
                    break
                s.sendall(head[i:i + 1])
                time.sleep(0.3)
            return False
        s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
        return True


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024


def write_port(path, port):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--silent-port-file")
    ap.add_argument("--max-seconds", type=float, default=60)
    args = ap.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    srv.max_seconds = args.max_seconds
    srv.lock = threading.Lock()
    srv.counts = {}
    silent = None
    if args.silent_port_file:
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        write_port(args.silent_port_file, silent.getsockname()[1])

    def stop(signum, frame):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    write_port(args.port_file, srv.server_address[1])
    srv.serve_forever(poll_interval=0.2)
    srv.server_close()
    if silent is not None:
        silent.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
