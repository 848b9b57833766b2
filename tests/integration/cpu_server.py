"""A CPU-bound HTTP test server for the sweep tests: WORKERS pre-forked processes (one core each
at most, the GIL sees to that) share one listening socket on 127.0.0.1:PORT; every GET burns a
fixed amount of CPU (WORK loop iterations) before answering, so throughput follows the CPU limit.
"""
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(os.environ.get("PORT", "8080"))
WORKERS = int(os.environ.get("WORKERS", "1"))
WORK = int(os.environ.get("WORK", "20000"))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        x = 0
        for i in range(WORK):
            x += i * i
        body = b"ok %d\n" % (x % 997)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512
    allow_reuse_address = True


def main():
    srv = Server(("127.0.0.1", PORT), Handler)
    children = []
    for _ in range(WORKERS - 1):
        pid = os.fork()
        if pid == 0:
            children = []
            break
        children.append(pid)

    def stop(signum, frame):
        for c in children:
            try:
                os.kill(c, signal.SIGTERM)
            except OSError:
                pass
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    srv.serve_forever()


if __name__ == "__main__":
    main()
