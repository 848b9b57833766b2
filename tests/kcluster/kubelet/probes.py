"""Container probes as the kubelet runs them (httpGet and tcpSocket against the pod's address,
exec in the pod's network namespace): one attempt at a time, each bounded by the probe's
timeoutSeconds; the caller counts successes and failures against the thresholds."""

import subprocess


class Probe:
    """The state of one probe of one container."""

    def __init__(self, spec):
        self.spec = spec or {}
        self.next_at = 0.0
        self.ok = 0
        self.bad = 0

    def get(self, k, default):
        v = self.spec.get(k)
        return default if v is None else v


def _port(v, c):
    if isinstance(v, int):
        return v
    for pt in c.get("ports") or []:
        if pt.get("name") == v:
            return pt.get("containerPort")
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def probe_once(probe, c, ip, ns):
    """Runs one probe (httpGet, tcpSocket, exec; grpc is not supported and fails) against the
    pod at ip; exec runs in the pod's network namespace. Returns (ok, why it failed)."""
    import http.client
    import socket
    import ssl
    timeout = float(probe.get("timeoutSeconds") or 1)
    try:
        if "httpGet" in probe:
            g = probe["httpGet"]
            port = _port(g.get("port"), c)
            host = g.get("host") or ip
            url = "%s://%s:%s%s" % (g.get("scheme", "HTTP").lower(), host, port,
                                    g.get("path") or "/")
            if g.get("scheme", "HTTP") == "HTTPS":
                conn = http.client.HTTPSConnection(host, port, timeout=timeout,
                                                   context=ssl._create_unverified_context())
            else:
                conn = http.client.HTTPConnection(host, port, timeout=timeout)
            try:
                hdrs = {h["name"]: h["value"] for h in g.get("httpHeaders") or []}
                hdrs.setdefault("User-Agent", "kube-probe/1.37")
                conn.request("GET", g.get("path") or "/", headers=hdrs)
                code = conn.getresponse().status
                if 200 <= code < 400:
                    return True, None
                return False, "HTTP probe failed with statuscode: %d" % code
            except (OSError, http.client.HTTPException) as e:
                return False, 'Get "%s": %s' % (url, e)
            finally:
                conn.close()
        if "tcpSocket" in probe:
            t = probe["tcpSocket"]
            addr = (t.get("host") or ip, _port(t.get("port"), c))
            try:
                with socket.create_connection(addr, timeout=timeout):
                    return True, None
            except OSError as e:
                return False, "dial tcp %s:%s: %s" % (addr[0], addr[1], e)
        if "exec" in probe:
            cmd = probe["exec"].get("command") or ["false"]
            try:
                r = subprocess.run(["nsenter", "--net=/run/netns/" + ns, "--"] + list(cmd),
                                   timeout=timeout, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
            except subprocess.TimeoutExpired:
                return False, "command timed out after %ss" % timeout
            except OSError as e:
                return False, str(e)
            if r.returncode == 0:
                return True, None
            return False, "command %s exited with %d: %s" % (
                cmd, r.returncode, r.stdout[-200:].decode(errors="replace").strip())
    except (OSError, ValueError, TypeError) as e:
        return False, str(e)
    return False, "unsupported probe handler: %s" % sorted(probe)
