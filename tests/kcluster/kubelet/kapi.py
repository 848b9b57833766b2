"""A small client of the Kubernetes API for the process kubelet: raw JSON over HTTPS with the
node's client certificate, so that every field the server sends (containerStatuses[].resources,
allocatedResources, the resize conditions) arrives as it is, whatever a generated client knows.

One connection per thread (http.client is not thread-safe); a request that fails on a reused
connection is retried once on a new one. Every body read from the server has a maximum size.
"""

import http.client
import json
import os
import ssl
import threading
import urllib.parse

MAX_BODY = 64 << 20  # the largest response body read (a list of every pod of a node)
MAX_LINE = 16 << 20  # the largest watch event (one object; the API's limit is 3 MiB)


class ApiError(Exception):
    """A request the API server answered with an error status (code), or that failed (code 0)."""

    def __init__(self, code, reason, message, body=None):
        Exception.__init__(self, "%s %s: %s" % (code, reason, message))
        self.code = code
        self.reason = reason
        self.message = message
        self.body = body


def load_kubeconfig(path):
    """The current context's server and credential files of a kubeconfig written as JSON or as
    the plain YAML kcluster.sh writes (`key: value` lines), file paths relative to the
    kubeconfig's directory. Returns {"server", "ca", "cert", "key"}."""
    with open(path) as f:
        text = f.read()
    base = os.path.dirname(os.path.abspath(path))
    out = {}
    try:
        cfg = json.loads(text)
        cluster = cfg["clusters"][0]["cluster"]
        user = cfg["users"][0]["user"]
        out = {"server": cluster.get("server"), "ca": cluster.get("certificate-authority"),
               "cert": user.get("client-certificate"), "key": user.get("client-key")}
    except (ValueError, KeyError, IndexError, TypeError):
        keys = {"server": "server", "certificate-authority": "ca",
                "client-certificate": "cert", "client-key": "key"}
        for line in text.splitlines():
            k, sep, v = line.strip().lstrip("- ").partition(":")
            if sep and k.strip() in keys and keys[k.strip()] not in out:
                out[keys[k.strip()]] = v.strip().strip("'\"")
    for k in ("ca", "cert", "key"):
        if out.get(k) and not os.path.isabs(out[k]):
            out[k] = os.path.join(base, out[k])
    missing = [k for k in ("server", "ca", "cert", "key") if not out.get(k)]
    if missing:
        raise ValueError("%s: no %s (file-based credentials are required)"
                         % (path, ", ".join(missing)))
    return out


class Client:
    def __init__(self, kubeconfig, timeout=30.0):
        cfg = load_kubeconfig(kubeconfig)
        u = urllib.parse.urlsplit(cfg["server"])
        self.host = u.hostname
        self.port = u.port or 443
        self.ca_file = cfg["ca"]
        self.timeout = timeout
        self.ctx = ssl.create_default_context(cafile=cfg["ca"])
        self.ctx.load_cert_chain(cfg["cert"], cfg["key"])
        self.local = threading.local()

    # --- requests -----------------------------------------------------------------------------

    def _conn(self, fresh, timeout):
        c = getattr(self.local, "conn", None)
        if c is None or fresh:
            if c is not None:
                c.close()
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                            timeout=timeout)
            self.local.conn = c
        c.timeout = timeout
        if c.sock is not None:
            c.sock.settimeout(timeout)
        return c

    def request(self, method, path, body=None, ctype="application/json", query=None,
                timeout=None):
        """Sends one request; returns the decoded JSON answer (a dict, or the raw text when the
        answer is not JSON). Raises ApiError on a status >= 400 or a failed connection."""
        if query:
            path += "?" + urllib.parse.urlencode(query)
        data = None if body is None else (body if isinstance(body, bytes)
                                          else json.dumps(body).encode())
        headers = {"Accept": "application/json", "User-Agent": "sizeup-process-kubelet"}
        if data is not None:
            headers["Content-Type"] = ctype
        last = None
        for attempt in range(2):
            conn = self._conn(attempt > 0, timeout or self.timeout)
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read(MAX_BODY + 1)
                if len(raw) > MAX_BODY:
                    conn.close()
                    raise ApiError(0, "TooLarge", "%s %s: answer over %d bytes"
                                   % (method, path, MAX_BODY))
                return _decode(method, path, resp.status, raw)
            except (OSError, http.client.HTTPException) as e:
                last = e
                conn.close()
                self.local.conn = None
        raise ApiError(0, "ConnectionFailed", "%s %s: %s" % (method, path, last))

    def get(self, path, query=None):
        return self.request("GET", path, query=query)

    def post(self, path, body):
        return self.request("POST", path, body)

    def put(self, path, body):
        return self.request("PUT", path, body)

    def merge_patch(self, path, body):
        return self.request("PATCH", path, body, ctype="application/merge-patch+json")

    def delete(self, path, body=None):
        return self.request("DELETE", path, body)

    # --- watches ------------------------------------------------------------------------------

    def watch(self, path, query, timeout):
        """Yields the events ({"type", "object"}) of one watch request until the server ends
        it (its timeoutSeconds) or `timeout` seconds pass without a byte. Raises ApiError when
        the request is refused; an ERROR event is yielded as it is (410 means list again)."""
        q = dict(query, watch="1")
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                           timeout=timeout)
        try:
            conn.request("GET", path + "?" + urllib.parse.urlencode(q),
                         headers={"Accept": "application/json",
                                  "User-Agent": "sizeup-process-kubelet"})
            resp = conn.getresponse()
            if resp.status >= 400:
                _decode("GET", path, resp.status, resp.read(MAX_BODY))
            while True:
                line = resp.readline(MAX_LINE + 1)
                if not line:
                    return
                if len(line) > MAX_LINE:
                    raise ApiError(0, "TooLarge", "watch %s: event over %d bytes"
                                   % (path, MAX_LINE))
                line = line.strip()
                if line:
                    try:
                        yield json.loads(line)
                    except ValueError:
                        raise ApiError(0, "BadEvent", "watch %s: not JSON: %r"
                                       % (path, line[:200]))
        except (OSError, http.client.HTTPException) as e:
            raise ApiError(0, "ConnectionFailed", "watch %s: %s" % (path, e))
        finally:
            conn.close()


def _decode(method, path, status, raw):
    try:
        obj = json.loads(raw) if raw else {}
    except ValueError:
        obj = raw.decode(errors="replace")
    if status >= 400:
        if isinstance(obj, dict):
            raise ApiError(status, obj.get("reason", ""), obj.get("message", ""), obj)
        raise ApiError(status, "", "%s %s: %s" % (method, path, str(obj)[:300]))
    return obj


def pod_path(ns, name, sub=None):
    p = "/api/v1/namespaces/%s/pods/%s" % (urllib.parse.quote(ns), urllib.parse.quote(name))
    return p + "/" + sub if sub else p
