"""The differential test: the same scripted API calls against the project's fake API server
(tests/fakeapi) and the real kube-apiserver (tests/kcluster), compared by status code, Status
reason and the key fields each step names. A difference fails the run unless the allow-list
(differential-allow.txt: `STEP.KEY  reason`) names it with its reason; an allow-list entry that
no longer differs fails too, so the list cannot go stale.

The calls are made three ways: raw HTTPS requests, kubectl (the release's, from the real
cluster's PATH), and the official Python client (Debian's python3-kubernetes, run with
/usr/bin/python3).

Usage: python3 differential.py --fake-dir DIR --real-dir DIR [--allow FILE] [--json OUT]
  --fake-dir  a running fake's directory (ready, token, ca.crt, control-token, kubeconfig)
  --real-dir  a running kcluster's directory (kubeconfig, pki/)
Standard library and the openssl command only (a client certificate is minted for the real
server's unprivileged user).
"""

import argparse
import atexit
import http.client
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time

NS = "kc-diff"
PSS_NS = "kc-diff-restricted"
USER = "kc-diff-user"


class Server:
    """One API server: host, port, a TLS context that may carry a client certificate, and an
    optional bearer token."""

    def __init__(self, name, host, port, ctx, token=None):
        self.name, self.host, self.port, self.ctx, self.token = name, host, port, ctx, token

    def req(self, method, path, body=None, ctype="application/json", timeout=30):
        c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)
        h = {"Accept": "application/json"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        if body is not None:
            h["Content-Type"] = ctype
            if not isinstance(body, (str, bytes)):
                body = json.dumps(body)
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        try:
            return r.status, json.loads(data)
        except ValueError:
            return r.status, {"_text": data.decode(errors="replace")[:200]}

    def first_watch_event(self, path, then, timeout=10):
        """Opens a watch on PATH, runs THEN(), and returns the first event's type and object."""
        c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)
        h = {"Accept": "application/json"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        c.request("GET", path, headers=h)
        r = c.getresponse()
        if r.status != 200:
            c.close()
            return {"status": r.status}
        then()
        line = r.fp.readline()  # chunk size
        deadline = time.time() + timeout
        while line and time.time() < deadline:
            line = line.strip()
            if line and not line.startswith(b"{"):
                line = r.fp.readline()
                continue
            if line:
                break
            line = r.fp.readline()
        c.close()
        try:
            ev = json.loads(line)
        except ValueError:
            return {"status": 200, "event": None}
        return {"status": 200, "event": ev.get("type"), "obj": ev.get("object", {})}


def fake_server(d):
    port = int(open(os.path.join(d, "ready")).read().strip())
    ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.crt"))
    token = open(os.path.join(d, "token")).read().strip()
    admin = Server("fake", "127.0.0.1", port, ctx, token)

    def as_user(user):
        control = Server("fake", "127.0.0.1", port, ctx,
                         open(os.path.join(d, "control-token")).read().strip())
        _, t = control.req("POST", "/fake/tokens", {"user": user})
        return Server("fake", "127.0.0.1", port, ctx, t["token"])

    admin.as_user = as_user
    return admin


def real_server(d):
    pki = os.path.join(d, "pki")
    server = None
    for line in open(os.path.join(d, "kubeconfig")):
        if line.strip().startswith("server:"):
            server = line.split("server:", 1)[1].strip()
    hostport = server.split("//", 1)[1]
    host, port = hostport.rsplit(":", 1)

    def ctx_for(name):
        ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
        ctx.load_cert_chain(os.path.join(pki, name + ".crt"), os.path.join(pki, name + ".key"))
        return ctx

    admin = Server("real", host, int(port), ctx_for("admin"))

    def as_user(user):
        # A client certificate for USER, signed by the cluster's CA, in a temporary directory.
        tmp = tempfile.mkdtemp(prefix="kc-diff.")
        atexit.register(shutil.rmtree, tmp, True)
        key, csr, crt = (os.path.join(tmp, n) for n in ("u.key", "u.csr", "u.crt"))
        run = lambda *a: subprocess.run(a, check=True, capture_output=True)  # noqa: E731
        run("openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key)
        run("openssl", "req", "-new", "-key", key, "-subj", "/CN=" + user, "-out", csr)
        run("openssl", "x509", "-req", "-in", csr, "-CA", os.path.join(pki, "ca.crt"),
            "-CAkey", os.path.join(pki, "ca.key"), "-CAcreateserial", "-days", "1", "-out", crt)
        ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
        ctx.load_cert_chain(crt, key)
        return Server("real", host, int(port), ctx)

    admin.as_user = as_user
    return admin


# ---- the script ---------------------------------------------------------------------------------

def st(res, *fields):
    """A step's record: the status code, the Status reason, and FIELDS read from the body
    (dotted paths; a missing one is None)."""
    code, body = res
    out = {"code": code}
    if isinstance(body, dict) and body.get("kind") == "Status":
        out["reason"] = body.get("reason")
    for f in fields:
        v = body
        for part in f.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        out[f] = v
    return out


def wait_for(s, path, ok, secs=30):
    end = time.time() + secs
    while time.time() < end:
        code, body = s.req("GET", path)
        if code == 200 and ok(body):
            return True
        time.sleep(0.25)
    return False


def pod(name, cpu="100m", mem="64Mi", extra=None):
    c = {"name": "c", "image": "example/web:1",
         "resources": {"limits": {"cpu": cpu, "memory": mem},
                       "requests": {"cpu": cpu, "memory": mem}}}
    c.update(extra or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [c]}}


def deployment(name):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [
                                      {"name": "app", "image": "example/web:1",
                                       "env": [{"name": "A", "value": "1"}]}]}}}}


def script(s):
    """Runs the calls on server S; returns {step: record}."""
    r = {}
    api = "/api/v1/namespaces/" + NS
    cms = api + "/configmaps"
    r["ns.create"] = st(s.req("POST", "/api/v1/namespaces",
                              {"metadata": {"name": NS}}), "metadata.name")
    r["ns.create-again"] = st(s.req("POST", "/api/v1/namespaces", {"metadata": {"name": NS}}))
    wait_for(s, api + "/serviceaccounts/default", lambda b: True)
    r["cm.create"] = st(s.req("POST", cms, {"metadata": {"name": "a"}, "data": {"k": "v"}}),
                        "data.k", "metadata.name")
    r["cm.get"] = st(s.req("GET", cms + "/a"), "data.k", "kind", "apiVersion")
    r["cm.get-missing"] = st(s.req("GET", cms + "/nope"))
    r["cm.create-bad-name"] = st(s.req("POST", cms, {"metadata": {"name": "Bad_Name"}}))
    code, cur = s.req("GET", cms + "/a")
    stale = dict(cur, data={"k": "v2"})
    r["cm.update"] = st(s.req("PUT", cms + "/a", stale), "data.k")
    r["cm.update-stale"] = st(s.req("PUT", cms + "/a", dict(stale, data={"k": "v3"})))
    r["cm.merge-patch"] = st(s.req("PATCH", cms + "/a", {"data": {"m": "1"}},
                                   "application/merge-patch+json"), "data.k", "data.m")
    r["cm.json-patch"] = st(s.req("PATCH", cms + "/a",
                                  [{"op": "replace", "path": "/data/k", "value": "j"}],
                                  "application/json-patch+json"), "data.k")
    r["cm.json-patch-test-fails"] = st(s.req("PATCH", cms + "/a",
                                             [{"op": "test", "path": "/data/k", "value": "no"}],
                                             "application/json-patch+json"))
    r["cm.bad-patch-type"] = st(s.req("PATCH", cms + "/a", {"data": {}}, "text/plain"))
    r["cm.apply-patch"] = st(s.req("PATCH", cms + "/s?fieldManager=diff",
                                   {"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": "s"}, "data": {"x": "1"}},
                                   "application/apply-patch+yaml"), "data.x")
    # Watch from the current resourceVersion: the next change arrives as MODIFIED.
    code, cur = s.req("GET", cms + "/a")
    rv = cur["metadata"]["resourceVersion"]
    w = s.first_watch_event(cms + "?watch=1&fieldSelector=metadata.name%3Da&resourceVersion=" + rv,
                            lambda: s.req("PATCH", cms + "/a", {"data": {"w": "1"}},
                                          "application/merge-patch+json"))
    r["cm.watch"] = {"code": w["status"], "event": w.get("event"),
                     "data.w": (w.get("obj") or {}).get("data", {}).get("w")}
    r["cm.watch-gone"] = st(s.req("GET", cms + "?watch=1&resourceVersion=1&timeoutSeconds=1"))
    # Limits: the 256 KiB of annotations, the 1 MiB of a ConfigMap's data, the 3 MiB request.
    big = "x" * (256 * 1024)
    r["limit.annotations"] = st(s.req("POST", cms, {"metadata": {"name": "ann",
                                                                 "annotations": {"a": big}}}))
    r["limit.annotations-fit"] = st(s.req("POST", cms, {"metadata": {
        "name": "ann2", "annotations": {"a": "x" * (255 * 1024)}}}))
    r["limit.configmap"] = st(s.req("POST", cms, {"metadata": {"name": "big"},
                                                  "data": {"a": "x" * (1024 * 1024 + 1)}}))
    r["limit.body"] = st(s.req("POST", cms, {"metadata": {"name": "huge"},
                                             "data": {"a": "x" * (3 * 1024 * 1024 + 10)}}))
    # Deployments: generation counts spec changes; a strategic merge keeps the env list merged.
    deps = "/apis/apps/v1/namespaces/" + NS + "/deployments"
    r["deploy.create"] = st(s.req("POST", deps, deployment("d")), "metadata.generation")
    res = s.req("PATCH", deps + "/d", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "env": [{"name": "B", "value": "2"}]}]}}}},
        "application/strategic-merge-patch+json")
    rec = st(res, "metadata.generation")
    env = (((res[1].get("spec") or {}).get("template") or {}).get("spec") or {}).get(
        "containers", [{}])[0].get("env") if res[0] == 200 else None
    rec["env"] = sorted(e["name"] for e in env or [])
    r["deploy.strategic-patch"] = rec
    r["deploy.annotation-patch"] = st(s.req("PATCH", deps + "/d", {"metadata": {"annotations": {
        "sizeup.dev/status": "done"}}}, "application/merge-patch+json"), "metadata.generation")
    # Admission: LimitRange maximum, ResourceQuota, Pod Security restricted.
    s.req("POST", api + "/limitranges", {"metadata": {"name": "lr"}, "spec": {"limits": [
        {"type": "Container", "max": {"cpu": "500m"}}]}})
    r["admission.limitrange"] = st(s.req("POST", api + "/pods", pod("too-big", cpu="1")))
    s.req("POST", api + "/resourcequotas", {"metadata": {"name": "q"},
                                            "spec": {"hard": {"pods": "1"}}})
    wait_for(s, api + "/resourcequotas/q", lambda b: (b.get("status") or {}).get("hard"))
    r["admission.quota-first"] = st(s.req("POST", api + "/pods", pod("p1")), "metadata.name")
    wait_for(s, api + "/resourcequotas/q",
             lambda b: (b.get("status") or {}).get("used", {}).get("pods") == "1")
    r["admission.quota-exceeded"] = st(s.req("POST", api + "/pods", pod("p2")))
    s.req("POST", "/api/v1/namespaces", {"metadata": {"name": PSS_NS, "labels": {
        "pod-security.kubernetes.io/enforce": "restricted"}}})
    wait_for(s, "/api/v1/namespaces/%s/serviceaccounts/default" % PSS_NS, lambda b: True)
    res = s.req("POST", "/api/v1/namespaces/%s/pods" % PSS_NS,
                pod("priv", extra={"securityContext": {"privileged": True}}))
    rec = st(res)
    rec["pss-message"] = "violates PodSecurity \"restricted:latest\"" in (res[1].get("message") or "")
    r["admission.pss"] = rec
    # RBAC: a user who may read ConfigMaps in NS and nothing else.
    s.req("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/roles" % NS, {
        "metadata": {"name": "cm-reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]})
    s.req("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings" % NS, {
        "metadata": {"name": "cm-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": USER}]})
    u = s.as_user(USER)
    ok = False
    for _ in range(40):  # the authorizer's cache of the new binding
        if u.req("GET", cms + "/a")[0] == 200:
            ok = True
            break
        time.sleep(0.25)
    r["rbac.get-allowed"] = {"code": 200 if ok else 403}
    r["rbac.list-secrets"] = st(u.req("GET", api + "/secrets"))
    r["rbac.create-configmap"] = st(u.req("POST", cms, {"metadata": {"name": "u"}}))
    r["rbac.other-namespace"] = st(u.req("GET", "/api/v1/namespaces/default/configmaps"))
    # Deleting a namespace: accepted, the namespace is Terminating.
    r["ns.delete"] = st(s.req("DELETE", "/api/v1/namespaces/" + PSS_NS), "status.phase")
    return r


def kubectl_script(kubeconfig):
    """The same kind of calls through kubectl: exit codes and what it prints."""
    def k(*args, stdin=None):
        p = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "-n", NS] + list(args),
                           input=stdin, capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout.strip()
    r = {}
    rc, _ = k("create", "configmap", "kk", "--from-literal=a=1")
    r["kubectl.create"] = {"rc": rc}
    rc, _ = k("create", "configmap", "kk", "--from-literal=a=1")
    r["kubectl.create-again"] = {"rc": rc}
    rc, out = k("patch", "configmap", "kk", "--type", "merge", "-p", '{"data":{"b":"2"}}')
    r["kubectl.patch"] = {"rc": rc}
    rc, out = k("get", "configmap", "kk", "-o", "jsonpath={.data.a}{.data.b}")
    r["kubectl.get"] = {"rc": rc, "out": out}
    rc, out = k("apply", "-f", "-", stdin=json.dumps(deployment("kd")))
    r["kubectl.apply"] = {"rc": rc, "out": out}
    rc, out = k("apply", "-f", "-", stdin=json.dumps(deployment("kd")))
    r["kubectl.apply-again"] = {"rc": rc, "out": out}
    rc, out = k("auth", "can-i", "list", "secrets", "--as", USER)
    r["kubectl.can-i-secrets"] = {"rc": rc, "out": out}
    rc, out = k("auth", "can-i", "get", "configmaps", "--as", USER)
    r["kubectl.can-i-configmaps"] = {"rc": rc, "out": out}
    rc, out = k("get", "configmap", "nope")
    r["kubectl.get-missing"] = {"rc": rc}
    rc, out = k("delete", "configmap", "kk")
    r["kubectl.delete"] = {"rc": rc, "out": out}
    return r


PYCLIENT = r"""
import json, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(sys.argv[1])
v1 = client.CoreV1Api()
apps = client.AppsV1Api()
ns = sys.argv[2]
r = {}
def call(step, fn, *fields):
    try:
        o = fn()
        rec = {"code": 200}
        for f in fields:
            v = o
            for p in f.split("."):
                v = getattr(v, p, None) if not isinstance(v, dict) else v.get(p)
            rec[f] = v
    except ApiException as e:
        rec = {"code": e.status, "reason": json.loads(e.body or "{}").get("reason")}
    r[step] = rec
cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py"), data={"a": "1"})
call("python.create", lambda: v1.create_namespaced_config_map(ns, cm), "data")
call("python.create-again", lambda: v1.create_namespaced_config_map(ns, cm))
call("python.patch", lambda: v1.patch_namespaced_config_map("py", ns, {"data": {"b": "2"}}), "data")
call("python.read", lambda: v1.read_namespaced_config_map("py", ns), "data")
call("python.list", lambda: len(v1.list_namespaced_config_map(ns, label_selector="nope=1").items))
call("python.read-deployment", lambda: apps.read_namespaced_deployment("d", ns),
     "metadata.generation", "spec.replicas")
call("python.scale", lambda: apps.patch_namespaced_deployment_scale("d", ns, {"spec": {"replicas": 0}}),
     "spec.replicas")
call("python.delete", lambda: v1.delete_namespaced_config_map("py", ns) and None)
call("python.read-missing", lambda: v1.read_namespaced_config_map("py", ns))
print(json.dumps(r))
"""


def python_script(kubeconfig):
    """The same kind of calls through the official Python client (Debian's)."""
    p = subprocess.run(["/usr/bin/python3", "-c", PYCLIENT, kubeconfig, NS],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return {"python.client": {"error": p.stderr.strip().splitlines()[-1:]}}
    return json.loads(p.stdout)


def compare(fake, real, allow):
    """Returns (differences not allowed, allow-list entries that no longer differ)."""
    diffs = {}
    for step in sorted(set(fake) | set(real)):
        f, g = fake.get(step, {}), real.get(step, {})
        for k in sorted(set(f) | set(g)):
            if f.get(k) != g.get(k):
                diffs["%s.%s" % (step, k)] = (f.get(k), g.get(k))
    bad = {k: v for k, v in diffs.items() if k not in allow}
    stale = [k for k in allow if k not in diffs]
    return diffs, bad, stale


def read_allow(path):
    allow = {}
    if not path or not os.path.exists(path):
        return allow
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, why = line.partition(" ")
        if not why.strip():
            sys.exit("differential: allow-list entry %s has no reason" % key)
        allow[key] = why.strip()
    return allow


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fake-dir", required=True)
    ap.add_argument("--real-dir", required=True)
    ap.add_argument("--allow", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "differential-allow.txt"))
    ap.add_argument("--json")
    a = ap.parse_args()
    allow = read_allow(a.allow)
    fake = script(fake_server(a.fake_dir))
    real = script(real_server(a.real_dir))
    fake.update(kubectl_script(os.path.join(a.fake_dir, "kubeconfig")))
    real.update(kubectl_script(os.path.join(a.real_dir, "kubeconfig")))
    fake.update(python_script(os.path.join(a.fake_dir, "kubeconfig")))
    real.update(python_script(os.path.join(a.real_dir, "kubeconfig")))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"fake": fake, "real": real}, f, indent=1, sort_keys=True)
    diffs, bad, stale = compare(fake, real, allow)
    steps = len(set(fake) | set(real))
    for k, (f, g) in sorted(diffs.items()):
        mark = "allowed" if k in allow else "DIFFERS"
        print("%-8s %-40s fake=%r real=%r%s" % (mark, k, f, g,
                                                ("  (" + allow[k] + ")") if k in allow else ""))
    for k in stale:
        print("STALE    %-40s the allow-list names it, but fake and real agree now" % k)
    print("differential: %d steps, %d fields compared, %d differences (%d allowed), %d stale "
          "allow-list entries" % (steps, sum(len(v) for v in real.values()), len(diffs),
                                  len(diffs) - len(bad), len(stale)))
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
