"""A small HTTPS client for tests of the fake API server (standard library only)."""

import http.client
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class Fake:
    """Starts fakeapi.py in a temporary directory; stop() sends SIGTERM."""

    def __init__(self, *flags, directory=None):
        self.dir = directory or tempfile.mkdtemp(prefix="fakeapi-test.")
        if os.path.exists(os.path.join(self.dir, "ready")):
            os.unlink(os.path.join(self.dir, "ready"))  # left by a fake killed with SIGKILL
        self.logf = open(os.path.join(self.dir, "server.log"), "wb")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fakeapi.py"),
                                      "--dir", self.dir] + list(flags),
                                     stdout=self.logf, stderr=subprocess.STDOUT)
        ready = os.path.join(self.dir, "ready")
        for _ in range(300):
            if os.path.exists(ready) and self.read("ready"):
                break
            if self.proc.poll() is not None:
                raise RuntimeError("fakeapi exited: " + open(os.path.join(
                    self.dir, "server.log")).read())
            time.sleep(0.05)
        else:
            raise RuntimeError("fakeapi not ready")
        self.port = int(self.read("ready"))
        self.ctx = ssl.create_default_context(cafile=os.path.join(self.dir, "ca.crt"))
        # Control requests work even when a test gives the server a wrong host name.
        self.control_ctx = ssl.create_default_context(cafile=os.path.join(self.dir, "ca.crt"))
        self.control_ctx.check_hostname = False
        self.token = self.read("token")
        self.control_token = self.read("control-token")

    def read(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return f.read().strip()

    def stop(self, remove=True):
        """SIGTERM and wait; returns the exit code. The directory goes unless remove=False
        or $FAKEAPI_KEEP is set."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        if remove and not os.environ.get("FAKEAPI_KEEP"):
            shutil.rmtree(self.dir, ignore_errors=True)
        return self.proc.returncode

    def conn(self, timeout=30, ctx=None):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=ctx or self.ctx,
                                           timeout=timeout)

    def request(self, method, path, body=None, ctype="application/json", token=None,
                headers=None, ctx=None):
        """Returns (status, headers dict, decoded JSON or text)."""
        c = self.conn(ctx=ctx)
        h = {"Authorization": "Bearer " + (token if token is not None else self.token),
             "Accept": "application/json"}
        if body is not None:
            h["Content-Type"] = ctype
            if not isinstance(body, (str, bytes)):
                body = json.dumps(body)
        h.update(headers or {})
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        c.close()
        try:
            out = json.loads(data)
        except ValueError:
            out = data.decode(errors="replace")
        return r.status, hdrs, out

    def control(self, method, path, body=None):
        return self.request(method, path, body, token=self.control_token, ctx=self.control_ctx)

    def watch(self, path, timeout=30):
        """Yields decoded watch events; the generator ends when the stream ends. Raises
        http.client.IncompleteRead (or similar) when the server drops the connection."""
        c = self.conn(timeout=timeout)
        c.request("GET", path, headers={"Authorization": "Bearer " + self.token})
        r = c.getresponse()
        if r.status != 200:
            body = json.loads(r.read() or b"null")
            c.close()
            raise WatchError(r.status, body)
        # Chunks are parsed here, not by http.client, so that a connection dropped without
        # the terminating chunk raises IncompleteRead as it does for a Go client.
        fp = r.fp
        buf = b""
        try:
            while True:
                size_line = fp.readline()
                if not size_line:
                    raise http.client.IncompleteRead(buf)
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    fp.readline()
                    return
                data = fp.read(size)
                if len(data) < size:
                    raise http.client.IncompleteRead(data)
                fp.readline()
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        yield json.loads(line)
        finally:
            c.close()


class WatchError(Exception):
    def __init__(self, status, body):
        super().__init__("watch failed with %d: %r" % (status, body))
        self.status = status
        self.body = body


def deployment(name, replicas=0, image="example/web:1", env=None, annotations=None,
               labels=None, **spec_extra):
    c = {"name": "app", "image": image, "ports": [{"containerPort": 8080}]}
    if env is not None:
        c["env"] = env
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [c]}}}
    spec.update(spec_extra)
    meta = {"name": name, "labels": dict(labels or {"app": name})}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}


def http_get(url, timeout=5):
    """GET url (a pod or a Service address): (status, body as text)."""
    import urllib.request
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


class PodChecks:
    """Mixed into a unittest.TestCase whose class attribute f is a running Fake: requests and
    waits on the pods of the default namespace."""

    def req(self, *a, **kw):
        return self.f.request(*a, **kw)

    def wait(self, what, fn, timeout=30.0):
        """Polls fn until it returns something true, and returns that; fails the test after
        timeout seconds, naming what and the last value."""
        end = time.time() + timeout
        last = None
        while time.time() < end:
            last = fn()
            if last:
                return last
            time.sleep(0.1)
        self.fail("timed out waiting for %s (last: %r)" % (what, last))

    def pods(self, app):
        """The pods labelled app=APP that are not being deleted."""
        _, _, lst = self.req("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3D" + app)
        return [p for p in lst["items"] if not p["metadata"].get("deletionTimestamp")]

    def ready_pods(self, app, n=None):
        """Waits until app has n Ready pods (None: at least one) and returns them."""
        def f():
            ps = [p for p in self.pods(app) if any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in p.get("status", {}).get("conditions", []))]
            return ps if ps and (n is None or len(ps) == n) else None
        return self.wait("%s ready pods of %s" % (n or "some", app), f)

    def ready_pod(self, app):
        return self.ready_pods(app)[0]
