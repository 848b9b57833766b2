#!/usr/bin/env python3
"""sizeup's fake Kubernetes API server: HTTPS on 127.0.0.1, the real API paths and semantics
kubectl and sizeup use, a Deployment controller and a kubelet that runs pods as local processes
under cgroup limits, RBAC, and fault injection. See docs/testing.md.

    python3 tests/fakeapi/fakeapi.py --dir DIR [--port 0] [--images images.json]

writes DIR/kubeconfig and, once listening, DIR/ready (the port). SIGTERM stops every pod.
"""

import argparse
import base64
import json
import os
import random
import secrets
import select
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rbac  # noqa: E402
import resize  # noqa: E402
import tables  # noqa: E402
from api import Api, full, invalid, to_view  # noqa: E402
from faults import REASONS, Faults, RequestLog  # noqa: E402
from resources import BY_PATH, RESOURCES, group_versions  # noqa: E402
from store import (ApiError, Store, fields_match, labels_match,  # noqa: E402
                   parse_field_selector, parse_label_selector)

VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.0-fake", "gitCommit": "fake",
           "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23",
           "compiler": "gc", "platform": "linux/amd64"}
MAX_BODY = 3 << 20  # the API server's limit on a request body (--max-resource-write-bytes)
OPENAPI_V2_PB = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
# Create-only resources that store nothing: the answer comes back in the object's status.
REVIEWS = ("selfsubjectaccessreviews", "subjectaccessreviews", "tokenreviews")


def log(msg):
    print("fakeapi: " + msg, file=sys.stderr, flush=True)


# --- certificates -------------------------------------------------------------------------------

def _openssl(args, cwd):
    subprocess.run(["openssl"] + args, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def make_certs(d, san, client_cert):
    """A CA, a server certificate for `san`, and optionally an admin client certificate."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    _openssl(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.crt", "-days", "30",
              "-subj", "/CN=fakeapi-ca", "-addext", "basicConstraints=critical,CA:TRUE",
              "-addext", "keyUsage=critical,keyCertSign,cRLSign"], d)

    def leaf(name, subj, ext):
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write(ext)
        _openssl(["req"] + ec + ["-keyout", name + ".key", "-out", name + ".csr", "-subj", subj],
                 d)
        _openssl(["x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                  "-CAcreateserial", "-out", name + ".crt", "-days", "30", "-extfile",
                  name + ".ext"], d)
        os.unlink(os.path.join(d, name + ".csr"))
        os.unlink(os.path.join(d, name + ".ext"))

    leaf("server", "/CN=fakeapi", "subjectAltName=%s\nbasicConstraints=CA:FALSE\n"
         "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
         % san)
    if client_cert:
        leaf("client", "/O=system:masters/CN=admin-cert",
             "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
             "extendedKeyUsage=clientAuth\n")
    for f in os.listdir(d):
        if f.endswith(".key"):
            os.chmod(os.path.join(d, f), 0o600)


def _b64file(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def write_atomic(path, text, mode=0o600):
    tmp = path + ".tmp%d" % os.getpid()
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def write_kubeconfig(d, port, token, client_cert):
    ca = _b64file(os.path.join(d, "ca.crt"))
    users = "- name: admin\n  user:\n    token: %s\n" % token
    users_tf = "- name: admin\n  user:\n    tokenFile: %s\n" % os.path.join(d, "token")
    extra_ctx = ""
    if client_cert:
        users += ("- name: admin-cert\n  user:\n    client-certificate-data: %s\n"
                  "    client-key-data: %s\n" % (_b64file(os.path.join(d, "client.crt")),
                                                 _b64file(os.path.join(d, "client.key"))))
        extra_ctx = ("- name: fake-cert\n  context:\n    cluster: fake\n    user: admin-cert\n"
                     "    namespace: default\n")
    head = ("apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n"
            "    server: https://127.0.0.1:%d\n    certificate-authority-data: %s\n"
            "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: admin\n"
            "    namespace: default\n" % (port, ca))
    write_atomic(os.path.join(d, "kubeconfig"),
                 head + extra_ctx + "current-context: fake\nusers:\n" + users)
    write_atomic(os.path.join(d, "kubeconfig-tokenfile"),
                 head + "current-context: fake\nusers:\n" + users_tf)


def write_user_kubeconfig(d, port, path, token, namespace):
    ca = _b64file(os.path.join(d, "ca.crt"))
    write_atomic(path, "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n"
                 "    server: https://127.0.0.1:%d\n    certificate-authority-data: %s\n"
                 "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: user\n"
                 "    namespace: %s\ncurrent-context: fake\nusers:\n- name: user\n  user:\n"
                 "    token: %s\n" % (port, ca, namespace, token))


# --- discovery and OpenAPI ------------------------------------------------------------------------

def discovery_api(port):
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                            "serverAddress": "127.0.0.1:%d" % port}]}


def discovery_group(group):
    vs = [v for g, v in group_versions() if g == group]
    if not vs:
        return None
    versions = [{"groupVersion": "%s/%s" % (group, v), "version": v} for v in vs]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": versions,
            "preferredVersion": versions[0]}


def discovery_apis():
    groups = []
    for g in dict.fromkeys(g for g, _ in group_versions()):
        grp = discovery_group(g)
        grp.pop("kind")
        grp.pop("apiVersion")
        groups.append(grp)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def discovery_resources(group, version):
    rs = [r for r in RESOURCES if r.group == group and r.version == version]
    if not rs:
        return None
    out = []
    for r in rs:
        out += r.discovery()
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": group + "/" + version if group else version, "resources": out}


def openapi_v3_root():
    paths = {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=FAKE1"}}
    for g, v in group_versions():
        paths["apis/%s/%s" % (g, v)] = {
            "serverRelativeURL": "/openapi/v3/apis/%s/%s?hash=FAKE1" % (g, v)}
    return {"paths": paths}


def openapi_v3_gv(group, version):
    """Just enough for kubectl: each kind's PATCH operation declares the fieldValidation query
    parameter (so kubectl validates on the server, which accepts) and no request body schema
    (so kubectl computes strategic merge patches from its compiled-in types)."""
    rs = [r for r in RESOURCES if r.group == group and r.version == version]
    if not rs:
        return None
    paths = {}
    for r in rs:
        prefix = "/api/v1" if not group else "/apis/%s/%s" % (group, version)
        item = (prefix + "/namespaces/{namespace}/%s/{name}" if r.namespaced
                else prefix + "/%s/{name}") % r.plural
        gvk = {"group": group, "version": version, "kind": r.kind}
        params = [{"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
                  for n in ("dryRun", "fieldManager", "fieldValidation", "force")]
        paths[item] = {
            "get": {"operationId": "read" + r.kind, "x-kubernetes-action": "get",
                    "x-kubernetes-group-version-kind": gvk, "responses": {}},
            "put": {"operationId": "replace" + r.kind, "x-kubernetes-action": "put",
                    "x-kubernetes-group-version-kind": gvk, "parameters": params,
                    "responses": {}},
            "patch": {"operationId": "patch" + r.kind, "x-kubernetes-action": "patch",
                      "x-kubernetes-group-version-kind": gvk, "parameters": params,
                      "responses": {}},
        }
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"},
            "paths": paths, "components": {"schemas": {}}}


def _pb_str(field, s):
    b = s.encode()
    return bytes([(field << 3) | 2, len(b)]) + b


def openapi_v2_protobuf():
    """An openapi_v2.Document with only `swagger` and `info`: kubectl finds no schema for any
    kind and falls back to its compiled-in types."""
    info = _pb_str(1, "Kubernetes") + _pb_str(2, "v1.32.0")
    return _pb_str(1, "2.0") + bytes([(2 << 3) | 2, len(info)]) + info


# --- the HTTP server ------------------------------------------------------------------------------

class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, handler, ctx, state):
        super().__init__(addr, handler)
        self.ctx = ctx
        self.st = state

    def finish_request(self, request, client_address):
        # The TLS handshake runs in the connection's own thread, never in the accept loop.
        request.settimeout(10)
        # Headers and body go out as separate TLS records: without TCP_NODELAY, Nagle and
        # the client's delayed ACK add 40 ms to every response.
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            tls = self.ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            self.st.handshake_failures += 1
            log("TLS handshake from %s failed: %s" % (client_address[0], e.__class__.__name__))
            return
        try:
            tls.settimeout(300)
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            try:
                tls.close()
            except OSError:
                pass


class State:
    """Everything the handlers share."""

    def __init__(self, args):
        self.args = args
        self.dir = args.dir
        self.store = Store(history=args.history)
        pod_net = args.pod_net
        self.pod_prefix = pod_net
        a, b, c = pod_net.split(".")
        self.service_prefix = "%s.%s.%d" % (a, b, (int(c) + 1) % 256)
        self.api = Api(self.store, self.service_prefix)
        self.faults = Faults()
        self.log = RequestLog(os.path.join(args.dir, "requests.log"))
        self.tokens = {}  # token -> (user, groups)
        self.tokens_lock = threading.Lock()
        self.control_token = secrets.token_hex(24)
        self.port = 0
        self.bookmark_interval = args.bookmark_interval
        self.watch_timeout = args.watch_timeout
        self.stop = threading.Event()
        self.handshake_failures = 0
        self.kubelet = None
        self.controller = None
        self.resize = resize.Config(
            int(args.node_cpu * 1000), resize.qty("memory", args.node_memory)
            if args.node_memory else os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))

    def add_token(self, user, groups=None, token=None):
        groups = list(groups or [])
        if user.startswith("system:serviceaccount:"):
            ns = user.split(":")[2]
            for g in ("system:serviceaccounts", "system:serviceaccounts:" + ns):
                if g not in groups:
                    groups.append(g)
        if "system:authenticated" not in groups:
            groups.append("system:authenticated")
        token = token or secrets.token_urlsafe(32)
        with self.tokens_lock:
            self.tokens[token] = (user, groups)
        return token

    def revoke(self, token=None, user=None):
        with self.tokens_lock:
            for t in list(self.tokens):
                if t == token or (user is not None and self.tokens[t][0] == user):
                    del self.tokens[t]

    def whois(self, token):
        with self.tokens_lock:
            return self.tokens.get(token)


def _truthy(v):
    return v in ("1", "true", "True", "yes")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fakeapi/1"

    def log_message(self, fmt, *args):
        pass  # every request goes to the request log instead

    @property
    def st(self):
        return self.server.st

    # --- plumbing ------------------------------------------------------------------------------

    def _read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            body = b""
            while True:
                size = int(self.rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return body
                if len(body) + size > MAX_BODY:
                    raise ApiError(413, "RequestEntityTooLarge", "request body too large")
                body += self.rfile.read(size)
                self.rfile.readline(16)
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            # Read what the client sends (up to 64 MiB) so that it receives the 413 instead of
            # a connection closed under its upload.
            left = min(n, 64 << 20)
            while left > 0:
                got = self.rfile.read(min(left, 1 << 20))
                if not got:
                    break
                left -= len(got)
            raise ApiError(413, "RequestEntityTooLarge", "request body too large")
        return self.rfile.read(n) if n > 0 else b""

    def send_bytes(self, code, body, ctype="application/json", headers=None):
        self._code = code
        self._log_request()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self._code = code

    def send_json(self, code, obj, headers=None):
        self.send_bytes(code, json.dumps(obj, separators=(",", ":")).encode(), headers=headers)

    def send_error_status(self, err):
        self.send_json(err.code, err.status(), headers=err.headers)

    def do_GET(self):
        self.dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_GET

    # --- the request -----------------------------------------------------------------------------

    def dispatch(self):
        t0 = time.time()
        self._code = 0
        self._watch_fault = None
        self._table_watch = None
        u = urllib.parse.urlsplit(self.path)
        path = u.path.rstrip("/") or "/"
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(u.query, keep_blank_values=True)
                 .items()}
        attrs = {"method": self.command, "path": path}
        # What the request log needs; the entry is written before the response goes out, so
        # a client that reads the log right after its answer always finds its request there.
        self._req = {"t0": t0, "path": path, "query": u.query, "attrs": attrs, "user": None,
                     "fault": None, "logged": path.startswith("/fake")}
        try:
            body = self._read_body()
            if path.startswith("/fake/") or path == "/fake":
                return self.control(path, query, body)
            user, groups = self.impersonate(*self.authenticate())
            self._who = (user, groups)
            self._req["user"] = user
            attrs["user"] = user
            self.route(path, query, attrs)
            if attrs.get("resource") != "selfsubjectaccessreviews" and \
                    not rbac.authorize(self.st.store, user, groups, attrs):
                msg = rbac.forbidden_message(user, attrs)
                det = {"kind": attrs.get("resource", "")}
                if attrs.get("name"):
                    det["name"] = attrs["name"]
                if attrs.get("group"):
                    det["group"] = attrs["group"]
                raise ApiError(403, "Forbidden", msg, det if not attrs.get("nonResource")
                               else None)
            f = self.st.faults.take(("delay",), attrs)
            if f:
                self._req["fault"] = "delay"
                time.sleep(float(f.get("seconds", 1)))
            f = self.st.faults.take(("error",), attrs)
            if f:
                self._req["fault"] = "error:%d" % f["code"]
                code = f["code"]
                headers = {}
                if code == 429 or "retryAfter" in f:
                    headers["Retry-After"] = str(f.get("retryAfter", 1))
                msg = f.get("message") or "injected fault: %s" % REASONS.get(code, "Error")
                if code == 409 and attrs.get("resource"):
                    r = BY_PATH.get((attrs["group"], attrs["version"], attrs["resource"]))
                    msg = 'Operation cannot be fulfilled on %s "%s": the object has been ' \
                          'modified; please apply your changes to the latest version and try ' \
                          'again' % (r.qualified if r else attrs["resource"],
                                     attrs.get("name", ""))
                raise ApiError(code, f.get("reason") or REASONS.get(code, "InternalError"),
                               msg, {"retryAfterSeconds": int(f.get("retryAfter", 1))}
                               if code == 429 else None, headers)
            self.handle_api(path, query, body, attrs)
        except ApiError as e:
            self.send_error_status(e)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout):
            self.close_connection = True
        except Exception as e:
            traceback.print_exc()
            try:
                self.send_error_status(ApiError(500, "InternalError", "fake: %r" % e))
            except OSError:
                self.close_connection = True
        finally:
            self._log_request()

    def _log_request(self):
        r = getattr(self, "_req", None)
        if r is None or r["logged"]:
            return
        r["logged"] = True
        attrs = r["attrs"]
        entry = {"method": self.command, "path": r["path"], "code": self._code,
                 "user": r["user"], "ms": int((time.time() - r["t0"]) * 1000)}
        if r["query"]:
            entry["query"] = r["query"]
        for k in ("verb", "resource", "sub", "ns", "name"):
            if attrs.get(k):
                entry[k] = attrs[k]
        if r["fault"] or self._watch_fault:
            entry["fault"] = r["fault"] or self._watch_fault
        self.st.log.add(entry)

    def authenticate(self):
        auth = self.headers.get("Authorization") or ""
        if auth.startswith("Bearer "):
            who = self.st.whois(auth[7:].strip())
            if who:
                return who
        elif not auth:
            cert = self.connection.getpeercert() if hasattr(self.connection, "getpeercert") \
                else None
            if cert:
                subj = dict(x[0] for x in cert.get("subject", ()))
                groups = [v for rdn in cert.get("subject", ()) for k, v in rdn
                          if k == "organizationName"]
                return subj.get("commonName", "unknown"), groups + ["system:authenticated"]
        raise ApiError(401, "Unauthorized", "Unauthorized")

    def impersonate(self, user, groups):
        """Impersonate-User / Impersonate-Group (kubectl --as / --as-group): the caller must be
        allowed the `impersonate` verb on users (and groups), as on a real API server; the
        request then runs as the impersonated user."""
        as_user = self.headers.get("Impersonate-User")
        as_groups = self.headers.get_all("Impersonate-Group") or []
        if not as_user:
            if as_groups:
                raise ApiError(500, "InternalError",
                               "requested [%s] without impersonating a user" %
                               ", ".join("{Group %s}" % g for g in as_groups))
            return user, groups
        for kind, name in [("users", as_user)] + [("groups", g) for g in as_groups]:
            attrs = {"verb": "impersonate", "group": "", "resource": kind, "name": name}
            if not rbac.authorize(self.st.store, user, groups, attrs):
                raise ApiError(403, "Forbidden", 'users "%s" is forbidden: User "%s" cannot '
                               'impersonate resource "%s" in API group "" at the cluster scope'
                               % (as_user, user, kind), {"kind": kind, "name": name})
        return as_user, as_groups + ["system:authenticated"]

    def route(self, path, query, attrs):
        """Fill attrs with verb/group/version/resource/sub/ns/name, or mark non-resource."""
        parts = [p for p in path.split("/") if p]
        rest = None
        if len(parts) >= 2 and parts[0] == "api" and parts[1] == "v1":
            attrs["group"], attrs["version"] = "", "v1"
            rest = parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            attrs["group"], attrs["version"] = parts[1], parts[2]
            rest = parts[3:]
        if not rest:
            attrs["nonResource"] = True
            attrs["verb"] = self.command.lower()
            return
        ns = None
        if rest[0] == "namespaces" and len(rest) >= 3 and \
                (attrs["group"], attrs["version"], rest[2]) in BY_PATH:
            ns = rest[1]
            rest = rest[2:]
        attrs["resource"] = rest[0]
        attrs["ns"] = ns
        if len(rest) >= 2:
            attrs["name"] = rest[1]
        if len(rest) >= 3:
            attrs["sub"] = rest[2]
        if len(rest) > 3:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        m = self.command
        named = "name" in attrs
        if m in ("GET", "HEAD"):
            attrs["verb"] = "watch" if _truthy(query.get("watch")) else \
                ("get" if named else "list")
        elif m == "POST":
            attrs["verb"] = "create"
        elif m == "PUT":
            attrs["verb"] = "update"
        elif m == "PATCH":
            attrs["verb"] = "patch"
        elif m == "DELETE":
            attrs["verb"] = "delete" if named else "deletecollection"
        else:
            attrs["verb"] = m.lower()
        if attrs.get("sub") == "log":
            attrs["verb"] = "get"

    # --- non-resource paths ----------------------------------------------------------------------

    def handle_nonresource(self, path, query):
        accept = self.headers.get("Accept") or ""
        if path == "/version":
            return self.send_json(200, VERSION)
        if path in ("/healthz", "/livez", "/readyz"):
            return self.send_bytes(200, b"ok", "text/plain")
        if path == "/api":
            return self.send_json(200, discovery_api(self.st.port))
        if path == "/apis":
            return self.send_json(200, discovery_apis())
        if path == "/api/v1":
            return self.send_json(200, discovery_resources("", "v1"))
        parts = [p for p in path.split("/") if p]
        if parts[0] == "apis" and len(parts) == 2:
            g = discovery_group(parts[1])
            if g:
                return self.send_json(200, g)
        if parts[0] == "apis" and len(parts) == 3:
            d = discovery_resources(parts[1], parts[2])
            if d:
                return self.send_json(200, d)
        if path == "/openapi/v2":
            if "protobuf" in accept or not accept:
                return self.send_bytes(200, openapi_v2_protobuf(), OPENAPI_V2_PB)
            return self.send_json(200, {"swagger": "2.0", "info": {"title": "Kubernetes",
                                                                   "version": "v1.32.0"},
                                        "paths": {}, "definitions": {}})
        if path == "/openapi/v3":
            return self.send_json(200, openapi_v3_root())
        if parts[:2] == ["openapi", "v3"]:
            if parts[2:4] == ["api", "v1"] and len(parts) == 4:
                return self.send_json(200, openapi_v3_gv("", "v1"))
            if parts[2] == "apis" and len(parts) == 5:
                d = openapi_v3_gv(parts[3], parts[4])
                if d:
                    return self.send_json(200, d)
        raise ApiError(404, "NotFound", "the server could not find the requested resource")

    # --- resources --------------------------------------------------------------------------------

    def handle_api(self, path, query, body, attrs):
        if attrs.get("nonResource"):
            if self.command not in ("GET", "HEAD"):
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method "
                               "on the requested resource")
            return self.handle_nonresource(path, query)
        st = self.st
        res = BY_PATH.get((attrs["group"], attrs["version"], attrs["resource"]))
        if res is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        ns = attrs.get("ns")
        name = attrs.get("name")
        sub = attrs.get("sub")
        if res.namespaced and name is not None and ns is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not res.namespaced:
            if ns is not None:
                raise ApiError(404, "NotFound", "the server could not find the requested "
                               "resource")
        if sub and sub not in res.subresources:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        dry = "All" in query.get("dryRun", "")
        verb = attrs["verb"]
        if res.group == "metrics.k8s.io":
            return self.pod_metrics(res, ns, name, verb, query)
        if res.plural in REVIEWS:
            if verb != "create":
                raise ApiError(405, "MethodNotAllowed", "only create is allowed")
            review = self._json(body)
            if not isinstance(review, dict):
                raise ApiError(400, "BadRequest", "expected a %s" % res.kind)
            if res.plural == "tokenreviews":
                return self.token_review(res, review)
            return self.access_review(res, review)
        api = st.api
        if sub == "scale":
            if verb == "get":
                return self.send_json(200, api.scale_of(res, api.get(res, ns, name)))
            if verb == "update":
                return self.send_json(200, api.update_scale(res, ns, name, self._json(body)))
            if verb == "patch":
                return self.send_json(200, api.update_scale(
                    res, ns, name, None, self._ctype(), body))
            raise ApiError(405, "MethodNotAllowed", "method not allowed on scale")
        if sub == "log":
            return self.send_bytes(200, st.kubelet.logs(ns, name, query) if st.kubelet
                                   else b"", "text/plain")
        if sub == "resize":
            if verb == "get":
                return self.send_json(200, full(res, api.get(res, ns, name)))
            if verb == "patch":
                return self.send_json(200, resize.patch(api, st.resize, ns, name, self._ctype(),
                                                        body, dry))
            if verb == "update":
                return self.send_json(200, resize.update(api, st.resize, ns, name,
                                                         self._json(body), dry))
            raise ApiError(405, "MethodNotAllowed", "method not allowed on resize")
        if verb == "watch":
            return self.watch(res, ns, query, name)
        if verb == "list":
            return self.list(res, ns, query)
        if verb == "get":
            obj = api.get(res, ns, name)
            if self._wants_table():
                return self.send_json(200, tables.table(res.plural, [to_view(res, obj)],
                                                        obj["metadata"]["resourceVersion"],
                                                        res.kind, res.gv,
                                                        query.get("includeObject", "Metadata")))
            return self.send_json(200, full(res, obj))
        if verb == "create":
            if name is not None:
                raise ApiError(405, "MethodNotAllowed", "POST to a named resource")
            obj = api.create(res, ns, self._json(body), dry)
            return self.send_json(201, full(res, obj))
        if verb == "update":
            obj = api.update(res, ns, name, self._json(body), sub, dry)
            return self.send_json(200, full(res, obj))
        if verb == "patch":
            ctype = self._ctype()
            if ctype == "application/apply-patch+yaml":
                raise ApiError(415, "UnsupportedMediaType", "server-side apply is not "
                               "implemented by the fake API server")
            obj = api.patch(res, ns, name, ctype, body, sub, dry)
            return self.send_json(200, full(res, obj))
        if verb == "delete":
            opts = self._json(body) if body else {}
            if "gracePeriodSeconds" in query:
                opts["gracePeriodSeconds"] = int(query["gracePeriodSeconds"])
            if "propagationPolicy" in query:
                opts["propagationPolicy"] = query["propagationPolicy"]
            obj = api.delete(res, ns, name, opts, dry)
            return self.send_json(200, full(res, obj))
        if verb == "deletecollection":
            opts = self._json(body) if body else {}
            entries, _, _, _ = api.list(res, ns, query)
            for e in entries:
                m = e.obj["metadata"]
                try:
                    api.delete(res, m.get("namespace"), m["name"], opts, dry)
                except ApiError:
                    pass
            return self.send_json(200, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                        "status": "Success"})
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the "
                       "requested resource")

    def pod_metrics(self, res, ns, name, verb, query):
        if verb not in ("get", "list") or self.st.kubelet is None:
            raise ApiError(404 if self.st.kubelet is None else 405,
                           "NotFound" if self.st.kubelet is None else "MethodNotAllowed",
                           "the server could not find the requested resource")
        items = self.st.kubelet.metrics(ns, name)
        lsel = parse_label_selector(query.get("labelSelector", ""))
        if lsel:
            keep = []
            for it in items:
                pod = self.st.store.get(("", "pods"), it["metadata"]["namespace"],
                                        it["metadata"]["name"])
                labels = ((pod or {}).get("metadata") or {}).get("labels") or {}
                if labels_match(lsel, labels):
                    it["metadata"]["labels"] = labels
                    keep.append(it)
            items = keep
        if verb == "get":
            if not items:
                raise ApiError(404, "NotFound", 'podmetrics.metrics.k8s.io "%s" not found'
                               % name, {"name": name, "group": "metrics.k8s.io",
                                        "kind": "pods"})
            return self.send_json(200, dict(items[0], kind=res.kind, apiVersion=res.gv))
        return self.send_json(200, {"kind": "PodMetricsList", "apiVersion": res.gv,
                                    "metadata": {}, "items": items})

    def _review_answer(self, res, review, status):
        """A review as the API server answers it: the request echoed, the verdict in status,
        nothing stored (201, as for every create)."""
        out = {"kind": res.kind, "apiVersion": res.gv, "metadata": {"creationTimestamp": None},
               "spec": review.get("spec") or {}, "status": status}
        return self.send_json(201, out)

    def token_review(self, res, review):
        """TokenReview: who a bearer token the fake issued belongs to. An unknown token is an
        answer (authenticated false), not an error."""
        tok = (review.get("spec") or {}).get("token")
        if not isinstance(tok, str) or not tok:
            raise ApiError(400, "BadRequest", "token is required for TokenReview in "
                           "authentication")
        who = self.st.whois(tok)
        if who is None:
            status = {"authenticated": False, "user": {}, "error": "invalid bearer token"}
        else:
            status = {"authenticated": True,
                      "user": {"username": who[0], "groups": list(who[1])}}
        return self._review_answer(res, review, status)

    def access_review(self, res, review):
        """SelfSubjectAccessReview (`kubectl auth can-i`: the caller's own permissions) and
        SubjectAccessReview (the user and groups the spec names, as a webhook authorizer or
        kube-rbac-proxy asks), judged by the same matcher as every request."""
        spec = review.get("spec") or {}
        if res.plural == "selfsubjectaccessreviews":
            user, groups = self._who
        else:
            user, groups = spec.get("user") or "", list(spec.get("groups") or [])
            if not user and not groups:
                raise invalid(res, "", [("spec.user", 'Invalid value: "": at least one of user '
                                         'or group must be specified')])
        ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if ra and nra:
            raise invalid(res, "", [("spec.nonResourceAttributes", "Invalid value: cannot be "
                                     "specified in combination with resourceAttributes")])
        if ra:
            q = {"verb": ra.get("verb", ""), "group": ra.get("group", ""),
                 "resource": ra.get("resource", ""), "sub": ra.get("subresource") or None,
                 "name": ra.get("name") or None, "ns": ra.get("namespace") or None}
        elif nra:
            q = {"nonResource": True, "verb": nra.get("verb", ""), "path": nra.get("path", "")}
        else:
            raise invalid(res, "", [("spec.resourceAttributes", "Invalid value: exactly one of "
                                     "nonResourceAttributes or resourceAttributes must be "
                                     "specified")])
        allowed = rbac.authorize(self.st.store, user, groups, q)
        status = {"allowed": allowed}
        if allowed:
            status["reason"] = "allowed by the fake's RBAC"
        return self._review_answer(res, review, status)

    def _ctype(self):
        return (self.headers.get("Content-Type") or "").split(";")[0].strip()

    def _json(self, body):
        if "protobuf" in (self.headers.get("Content-Type") or ""):
            import protobuf
            try:
                return protobuf.decode(body)
            except protobuf.ProtoError as e:
                raise ApiError(415, "UnsupportedMediaType", str(e))
        try:
            return json.loads(body or b"null")
        except ValueError as e:
            raise ApiError(400, "BadRequest", "the body of the request is not valid JSON: %s"
                           % e)

    def _wants_table(self):
        return "as=Table" in (self.headers.get("Accept") or "")

    def list(self, res, ns, query):
        entries, rv, cont, remaining = self.st.api.list(res, ns, query)
        if self._wants_table():
            return self.send_json(200, tables.table(
                res.plural, [to_view(res, e.obj) for e in entries], rv, res.kind, res.gv,
                query.get("includeObject", "Metadata")))
        meta = {"resourceVersion": str(rv)}
        if cont:
            meta["continue"] = cont
            meta["remainingItemCount"] = remaining
        if res.group == "events.k8s.io":
            items = ",".join(json.dumps(to_view(res, e.obj), separators=(",", ":"))
                             for e in entries)
        else:
            items = ",".join(e.item_json() for e in entries)
        head = json.dumps({"kind": res.kind + "List", "apiVersion": res.gv, "metadata": meta},
                          separators=(",", ":"))
        body = head[:-1] + ',"items":[' + items + "]}"
        return self.send_bytes(200, body.encode())

    # --- watch ------------------------------------------------------------------------------------

    def _chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _event(self, etype, obj):
        if getattr(self, "_table_watch", None) is not None and etype != "ERROR":
            # kubectl get -w asks for Tables: each event carries a one-row Table, the column
            # definitions only in the first, as a real server sends them.
            res, first = self._table_watch
            if etype == "BOOKMARK":
                obj = {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
                       "metadata": {"resourceVersion": obj["metadata"]["resourceVersion"]},
                       "columnDefinitions": [], "rows": []}
            else:
                plain = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
                obj = tables.table(res.plural, [plain], plain["metadata"].get(
                    "resourceVersion", ""), res.kind, res.gv)
                if not first:
                    obj["columnDefinitions"] = []
                self._table_watch = (res, False)
        self._chunk(json.dumps({"type": etype, "object": obj},
                               separators=(",", ":")).encode() + b"\n")

    def _peer_closed(self):
        """A watch client sends nothing after its request: the socket turning readable means
        it closed (or reset) the connection, and this thread can stop waiting for events."""
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(r)

    def watch(self, res, ns, query, name):
        st = self.st
        store = st.store
        attrs = {"verb": "watch", "resource": res.plural, "group": res.group, "ns": ns,
                 "name": name, "method": "GET", "path": self.path.split("?")[0],
                 "user": getattr(self, "_who", (None,))[0]}
        lsel = parse_label_selector(query.get("labelSelector", ""))
        fsel = parse_field_selector(query.get("fieldSelector", ""))
        if name:
            fsel.append(("metadata.name", True, name))
        bookmarks = _truthy(query.get("allowWatchBookmarks"))
        timeout = float(query.get("timeoutSeconds") or st.watch_timeout)
        deadline = time.time() + timeout
        rvq = query.get("resourceVersion", "")
        view = res.group == "events.k8s.io"
        expire = st.faults.take(("watch-expire",), attrs)
        if expire:
            self._watch_fault = "watch-expire:" + expire.get("mode", "http")
        if expire and expire.get("mode", "http") == "http":
            raise ApiError(410, "Expired", "too old resource version: %s (%d)"
                           % (rvq or "0", store.rv))
        close = st.faults.take(("watch-close",), attrs)
        if close and "afterEvents" not in close and "afterSeconds" not in close:
            close["afterEvents"] = 0
        if close:
            self._watch_fault = "watch-close"

        def wanted(ev_key, obj):
            if ev_key != res.key:
                return False
            meta = obj.get("metadata") or {}
            if ns is not None and meta.get("namespace") != ns:
                return False
            o = obj if not view else to_view(res, obj)
            return labels_match(lsel, meta.get("labels") or {}) and fields_match(fsel, o)

        initial = []
        with store.lock:
            if rvq in ("", "0"):
                entries, last = store.entries(res.key, ns)
                initial = [full(res, e.obj) for e in entries if wanted(res.key, e.obj)]
            else:
                try:
                    last = int(rvq)
                except ValueError:
                    raise ApiError(400, "BadRequest", "invalid resourceVersion %r" % rvq)
                if store.events_after(last) is None:
                    raise ApiError(410, "Expired", "too old resource version: %d (%d)"
                                   % (last, store.oldest_rv))
        self._table_watch = (res, True) if self._wants_table() else None
        self._code = 200
        self._log_request()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        self._code = 200
        sent = 0
        started = time.time()
        next_bm = time.time() + st.bookmark_interval

        def fault_due():
            if close and "afterEvents" in close and sent >= close["afterEvents"]:
                return "close"
            if close and "afterSeconds" in close and time.time() - started >= \
                    close["afterSeconds"]:
                if "probability" not in close or random.random() < close["probability"]:
                    return "close"
            if expire and sent >= expire.get("afterEvents", 0):
                return "expire"
            return None

        def act(what):
            if what == "expire":
                self._event("ERROR", {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                      "status": "Failure", "message": "too old resource "
                                      "version: %d (%d)" % (last, store.rv),
                                      "reason": "Expired", "code": 410})
                self._chunk(b"")
                self.close_connection = True
                return
            # A dropped connection: no terminating chunk, the client sees an unexpected EOF.
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        for obj in initial:
            what = fault_due()
            if what:
                return act(what)
            self._event("ADDED", obj)
            sent += 1
        if bookmarks and _truthy(query.get("sendInitialEvents")):
            self._event("BOOKMARK", {"kind": res.kind, "apiVersion": res.gv, "metadata": {
                "resourceVersion": str(last),
                "annotations": {"k8s.io/initial-events-end": "true"}}})
        while not st.stop.is_set():
            what = fault_due()
            if what:
                return act(what)
            now = time.time()
            if now >= deadline:
                break
            if self._peer_closed():
                self.close_connection = True
                return
            with store.lock:
                evs = store.events_after(last)
                if evs is not None and not evs:
                    store.cond.wait(max(0.05, min(deadline, next_bm if bookmarks
                                                  else deadline, now + 1.0) - now))
                    evs = store.events_after(last)
                cur = store.rv
            if evs is None:
                return act("expire")
            for ev in evs:
                if wanted(ev.key, ev.obj):
                    obj = ev.obj if not view else full(res, {
                        k: v for k, v in ev.obj.items() if k not in ("kind", "apiVersion")})
                    self._event(ev.type, obj)
                    sent += 1
                    last = ev.rv
                    what = fault_due()
                    if what:
                        return act(what)
            last = max(last, cur) if evs is not None else last
            if bookmarks and time.time() >= next_bm:
                self._event("BOOKMARK", {"kind": res.kind, "apiVersion": res.gv,
                                         "metadata": {"resourceVersion": str(last)}})
                next_bm = time.time() + st.bookmark_interval
        self._chunk(b"")

    # --- control endpoints ------------------------------------------------------------------------

    def control(self, path, query, body):
        st = self.st
        if (self.headers.get("Authorization") or "") != "Bearer " + st.control_token:
            raise ApiError(401, "Unauthorized", "control endpoints need the control token")
        m = self.command
        data = self._json(body) if body else {}
        if path == "/fake/log":
            if m == "DELETE":
                st.log.clear()
                return self.send_json(200, {})
            return self.send_json(200, {"entries": st.log.since(int(query.get("since") or 0))})
        if path == "/fake/faults":
            if m == "DELETE":
                st.faults.clear()
            elif m == "POST":
                try:
                    st.faults.add(data)
                except ValueError as e:
                    raise ApiError(400, "BadRequest", str(e))
            return self.send_json(200, st.faults.snapshot())
        if path == "/fake/tokens":
            if m == "POST":
                tok = st.add_token(data.get("user") or "admin", data.get("groups"),
                                   data.get("token"))
                if data.get("file"):
                    write_atomic(data["file"], tok)
                if data.get("kubeconfig"):
                    write_user_kubeconfig(st.dir, st.port, data["kubeconfig"], tok,
                                          data.get("namespace") or "default")
                if data.get("serviceAccountDir"):
                    # The files a pod finds in /var/run/secrets/kubernetes.io/serviceaccount.
                    sad = data["serviceAccountDir"]
                    os.makedirs(sad, exist_ok=True)
                    write_atomic(os.path.join(sad, "token"), tok)
                    with open(os.path.join(st.dir, "ca.crt")) as f:
                        write_atomic(os.path.join(sad, "ca.crt"), f.read(), 0o644)
                    user = data.get("user") or ""
                    ns = user.split(":")[2] if user.startswith("system:serviceaccount:") \
                        else (data.get("namespace") or "default")
                    write_atomic(os.path.join(sad, "namespace"), ns, 0o644)
                return self.send_json(200, {"token": tok})
            if m == "DELETE":
                st.revoke(data.get("token"), data.get("user"))
                return self.send_json(200, {})
        if path == "/fake/tokens/rotate" and m == "POST":
            user = data.get("user") or "admin"
            with st.tokens_lock:
                groups = next((g for u, g in st.tokens.values() if u == user),
                              ["system:masters"] if user == "admin" else [])
            if not data.get("keepOld"):
                st.revoke(user=user)
            tok = st.add_token(user, groups)
            f = data.get("file") or (os.path.join(st.dir, "token") if user == "admin" else None)
            if f:
                write_atomic(f, tok)
            return self.send_json(200, {"token": tok})
        if path == "/fake/config" and m == "POST":
            if "bookmarkInterval" in data:
                st.bookmark_interval = float(data["bookmarkInterval"])
            if "watchTimeout" in data:
                st.watch_timeout = float(data["watchTimeout"])
            if "resizeForbidMemoryDecrease" in data:
                st.resize.forbid_memory_decrease = bool(data["resizeForbidMemoryDecrease"])
            return self.send_json(200, {"bookmarkInterval": st.bookmark_interval,
                                        "watchTimeout": st.watch_timeout,
                                        "resizeForbidMemoryDecrease":
                                        st.resize.forbid_memory_decrease})
        if path == "/fake/state":
            with st.store.lock:
                counts = {"%s/%s" % k: len(v) for k, v in st.store.objs.items() if v}
                out = {"resourceVersion": st.store.rv, "oldestResourceVersion":
                       st.store.oldest_rv, "objects": counts,
                       "handshakeFailures": st.handshake_failures}
            return self.send_json(200, out)
        if path == "/fake/pods":
            return self.send_json(200, st.kubelet.describe() if st.kubelet else {"pods": []})
        raise ApiError(404, "NotFound", "no such control endpoint")


# --- main -----------------------------------------------------------------------------------------

def load_json_or_yaml(path):
    with open(path) as f:
        text = f.read()
    try:
        return json.loads(text)
    except ValueError:
        import miniyaml
        return miniyaml.load(text)


def bootstrap(st):
    api = st.api
    from resources import BY_PATH as P
    for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
        api.create(P[("", "v1", "namespaces")], None, {"metadata": {"name": ns}})
    api.create(P[("", "v1", "services")], "default", {
        "metadata": {"name": "kubernetes", "labels": {"component": "apiserver",
                                                      "provider": "kubernetes"}},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": st.port}]}})


def preload(st, path):
    data = load_json_or_yaml(path)
    items = data.get("items") if isinstance(data, dict) and "items" in data else data
    if isinstance(items, dict):
        items = [items]
    from resources import find_kind
    for o in items or []:
        r = find_kind(o.get("apiVersion", ""), o.get("kind", ""))
        if r is None:
            log("preload: skipping unknown kind %s %s" % (o.get("apiVersion"), o.get("kind")))
            continue
        ns = (o.get("metadata") or {}).get("namespace") or ("default" if r.namespaced else None)
        if r.namespaced and st.store.get(("", "namespaces"), None, ns) is None:
            st.api.create(BY_PATH[("", "v1", "namespaces")], None, {"metadata": {"name": ns}})
        st.api.create(r, ns, o)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help="state directory (kubeconfig, certs, logs)")
    ap.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: any free)")
    ap.add_argument("--images", help="image map (JSON or simple YAML): image -> command")
    ap.add_argument("--faults", help="JSON file with fault rules active from the start")
    ap.add_argument("--preload", help="JSON/YAML List of objects created at start "
                    "(e.g. RBAC from `kubectl kustomize`)")
    ap.add_argument("--token", help="the admin bearer token (default: random)")
    ap.add_argument("--client-cert", action="store_true",
                    help="also issue an admin client certificate (context fake-cert)")
    ap.add_argument("--server-san", default="IP:127.0.0.1,DNS:localhost",
                    help="server certificate subjectAltName (tests of a host mismatch)")
    ap.add_argument("--pod-net", default=None,
                    help="pod addresses A.B.C.2-254 (default: a random 127.x.y); services "
                    "take the next /24")
    ap.add_argument("--history", type=int, default=10000,
                    help="watch events kept; older resourceVersions get 410 Gone")
    ap.add_argument("--bookmark-interval", type=float, default=5.0)
    ap.add_argument("--watch-timeout", type=float, default=1800.0,
                    help="server-side watch timeout when the client sets none")
    ap.add_argument("--no-kubelet", action="store_true", help="do not run pods")
    ap.add_argument("--no-cgroups", action="store_true",
                    help="run pods without cgroup limits (as when no cgroup is writable)")
    ap.add_argument("--no-metrics", action="store_true",
                    help="do not serve metrics.k8s.io (it is served when pods run)")
    ap.add_argument("--metrics-window", type=float, default=15.0,
                    help="seconds between two scrapes of a pod's CPU and memory, the window a "
                    "PodMetrics averages over (metrics-server's --metric-resolution, default 15)")
    ap.add_argument("--restart-backoff", type=float, default=1.0,
                    help="first crash-restart delay in seconds (doubles, max 30x)")
    ap.add_argument("--max-grace", type=float, default=5.0,
                    help="cap on terminationGracePeriodSeconds when stopping pods")
    ap.add_argument("--node-cpu", type=float, default=float(os.cpu_count() or 1),
                    help="the node's allocatable CPU in cores, for resize admission "
                    "(default: the host's CPUs)")
    ap.add_argument("--node-memory", default=None,
                    help="the node's allocatable memory (a quantity such as 8Gi), for resize "
                    "admission (default: the host's memory)")
    ap.add_argument("--no-resize", action="store_true",
                    help="do not serve pods/resize (a server without in-place resize)")
    ap.add_argument("--resize-forbid-memory-decrease", action="store_true",
                    help="refuse a memory-limit decrease under resizePolicy NotRequired with "
                    "422, as Kubernetes 1.33 did")
    args = ap.parse_args()
    if args.pod_net is None:
        args.pod_net = "127.%d.%d" % (random.randint(100, 199), random.randrange(0, 254, 2))
    args.pod_net = ".".join(args.pod_net.split(".")[:3])
    os.makedirs(args.dir, exist_ok=True)
    args.dir = os.path.abspath(args.dir)
    if args.no_kubelet or args.no_metrics:
        import resources
        resources.disable_group("metrics.k8s.io")
    if args.no_resize:
        import resources
        resources.disable_subresource("pods", "resize")
    for f in ("ready", "kubeconfig"):
        try:
            os.unlink(os.path.join(args.dir, f))
        except FileNotFoundError:
            pass
    make_certs(args.dir, args.server_san, args.client_cert)
    st = State(args)
    st.resize.forbid_memory_decrease = args.resize_forbid_memory_decrease
    admin_token = st.add_token("admin", ["system:masters"], args.token)
    write_atomic(os.path.join(args.dir, "token"), admin_token)
    write_atomic(os.path.join(args.dir, "control-token"), st.control_token)

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(os.path.join(args.dir, "server.crt"),
                        os.path.join(args.dir, "server.key"))
    ctx.load_verify_locations(os.path.join(args.dir, "ca.crt"))
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(["http/1.1"])
    srv = Server(("127.0.0.1", args.port), Handler, ctx, st)
    st.port = srv.server_address[1]
    bootstrap(st)
    if args.preload:
        preload(st, args.preload)
    if args.faults:
        st.faults.add(load_json_or_yaml(args.faults))

    threading.Thread(target=st.api.gc_loop, args=(st.stop,), daemon=True).start()
    try:
        import controllers
    except ImportError:
        controllers = None
    if controllers is not None:
        st.controller = controllers.DeploymentController(st.api, st.stop)
        st.controller.start()
        import jobs
        jobs.JobController(st.api, st.stop, args).start()
        import admission
        admission.QuotaController(st.api, st.stop).start()
        if not args.no_kubelet:
            images = load_json_or_yaml(args.images or os.path.join(
                os.path.dirname(os.path.abspath(__file__)), "images.json"))
            st.kubelet = controllers.Kubelet(st.api, st.stop, images, args, auth=st)
            st.kubelet.resize_cfg = st.resize
            st.api.kubelet = st.kubelet
            st.kubelet.start()
            controllers.ServiceProxy(st.api, st.stop).start()

    write_kubeconfig(args.dir, st.port, admin_token, args.client_cert)
    with open(os.path.join(args.dir, "pid"), "w") as f:
        f.write("%d\n" % os.getpid())

    def on_signal(signum, frame):
        if not st.stop.is_set():
            st.stop.set()
            threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    write_atomic(os.path.join(args.dir, "ready"), "%d\n" % st.port, 0o644)
    log("listening on https://127.0.0.1:%d (kubeconfig %s, pods on %s.0/24)"
        % (st.port, os.path.join(args.dir, "kubeconfig"), args.pod_net))
    try:
        srv.serve_forever(poll_interval=0.2)
    finally:
        st.stop.set()
        with st.store.lock:
            st.store.cond.notify_all()
        if st.kubelet:
            st.kubelet.shutdown()
        try:
            os.unlink(os.path.join(args.dir, "ready"))
        except FileNotFoundError:
            pass
        srv.server_close()
        log("stopped")


if __name__ == "__main__":
    main()
