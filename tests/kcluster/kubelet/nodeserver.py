"""The kubelet's HTTPS server on the node's address: /healthz, /pods, /metrics/resource (for
metrics-server) and /containerLogs/NS/POD/CONTAINER (for `kubectl logs`, through the API
server). Every client must present a certificate signed by the cluster CA (the API server and
metrics-server do); the TLS handshake runs on the request's own thread so that a slow client
does not hold up the others.
"""

import json
import os
import socket
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


FOLLOW_MAX = 3600  # seconds a followed log stream stays open at most
LOG_CHUNK = 64 << 10


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, kl, addr, cert, key, client_ca):
        self.kl = kl
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        self.ctx.load_verify_locations(client_ca)
        self.ctx.verify_mode = ssl.CERT_REQUIRED
        ThreadingHTTPServer.__init__(self, addr, Handler)

    def finish_request(self, request, client_address):
        request.settimeout(30)
        try:
            tls = self.ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            request.close()
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            try:
                tls.close()
            except OSError:
                pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _reply(self, code, body, ctype="text/plain; charset=utf-8"):
        b = body if isinstance(body, bytes) else body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        kl = self.server.kl
        parts = [urllib.parse.unquote(p) for p in u.path.split("/") if p]
        try:
            if u.path in ("/healthz", "/livez", "/readyz"):
                return self._reply(200, "ok")
            if u.path == "/pods":
                return self._reply(200, json.dumps({"kind": "PodList", "apiVersion": "v1",
                                                    "metadata": {}, "items": kl.pods()}),
                                   "application/json")
            if u.path == "/metrics/resource":
                return self._reply(200, kl.metrics_text(),
                                   "text/plain; version=0.0.4; charset=utf-8")
            if len(parts) == 4 and parts[0] == "containerLogs":
                return self._logs(kl, parts[1], parts[2], parts[3], q)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            return
        return self._reply(404, "404 page not found\n")

    def _logs(self, kl, ns, pod, container, q):
        path, running = kl.log_file(ns, pod, container, q.get("previous") in ("true", "1"))
        if path is None:
            msg = 'container "%s" in pod "%s" is not available' % (container, pod)
            if q.get("previous") in ("true", "1"):
                msg = 'previous terminated container "%s" in pod "%s" not found' % (container,
                                                                                     pod)
            return self._reply(400, msg + "\n")
        with open(path, "rb") as f:
            data = f.read()
        if q.get("tailLines"):
            try:
                n = int(q["tailLines"])
            except ValueError:
                n = -1
            if n >= 0:
                lines = data.splitlines(keepends=True)
                data = b"".join(lines[-n:]) if n else b""
        if q.get("limitBytes"):
            try:
                data = data[:max(0, int(q["limitBytes"]))]
            except ValueError:
                pass
        if q.get("follow") not in ("true", "1"):
            return self._reply(200, data)
        # Followed: the file as it grows, chunked, until the container stops or the client
        # goes; bounded by FOLLOW_MAX.
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._chunk(data)
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            end = time.time() + FOLLOW_MAX
            while time.time() < end:
                b = f.read(LOG_CHUNK)
                if b:
                    self._chunk(b)
                    continue
                if not running():
                    break
                time.sleep(0.2)
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, b):
        if b:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
            self.wfile.flush()


def start(kl, host, port, cert, key, client_ca):
    """Serves on host:port in a thread; returns the server (shutdown() stops it)."""
    srv = Server(kl, (host, port), cert, key, client_ca)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True,
                     name="node-server").start()
    return srv

