#!/usr/bin/env python3
"""The process kubelet: the kubelet of one Node of the test cluster (tests/kcluster), a client
of the real kube-apiserver with the node's credentials (system:node:NAME), that runs each pod
bound to its node as local processes under the containers' cgroup limits, each pod in its own
network namespace on the node's bridge.

  kubelet.py --kubeconfig F --node NAME --node-ip IP --port P --tls-cert F --tls-key F
             --client-ca F --pod-cidr A.B.C.0/24 --router-netns NS --bridge BR --images MAP.json
             --state DIR --cpu N --memory Q [--labels k=v,...] --api-host H --api-port P

It registers the Node and keeps its Ready condition and Lease fresh, watches the pods bound to
it (pods.PodWorker runs each), serves /metrics/resource, /containerLogs, /pods and /healthz
(nodeserver), and on SIGTERM stops every pod and removes every namespace, link and cgroup it
made. On start it removes what an earlier run for the same node left (its state directory
lists the pods' addresses, its cgroups carry the node's name).
"""

import argparse
import json
import os
import platform
import signal
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "..", "..", "fakeapi"))

import cgroups  # noqa: E402
import kapi  # noqa: E402
import netns  # noqa: E402
import nodeserver  # noqa: E402
import podresize  # noqa: E402
import pods  # noqa: E402
import podspec  # noqa: E402
import resmetrics  # noqa: E402
from sandbox import Sandbox  # noqa: E402

LEASE_SECONDS = 40
RENEW = 10.0  # seconds between Lease renewals and node status heartbeats
WATCH_SECONDS = 240  # a watch request's timeoutSeconds
EVENT_REPEAT = 30.0  # seconds before the same Event about the same pod is recorded again
SHUTDOWN_GRACE = 5.0  # seconds a pod's containers get between SIGTERM and SIGKILL at shutdown


def log(msg):
    print("%s kubelet: %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def micro_time(t=None):
    t = time.time() if t is None else t
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%06dZ" % int(
        (t % 1) * 1e6)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("kubeconfig", "node", "node-ip", "tls-cert", "tls-key", "client-ca",
                 "pod-cidr", "router-netns", "bridge", "images", "state", "cpu", "memory",
                 "api-host"):
        ap.add_argument("--" + name, required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--api-port", type=int, required=True)
    ap.add_argument("--labels", default="")
    ap.add_argument("--restart-backoff", type=float, default=2.0,
                    help="seconds before the first restart of a crashed container (doubling)")
    ap.add_argument("--restart-backoff-max", type=float, default=60.0)
    ap.add_argument("--max-grace", type=float, default=30.0,
                    help="the longest termination grace period honoured, in seconds")
    a = ap.parse_args(argv)
    a.max_grace = max(0.0, a.max_grace)
    return a


class Kubelet:
    def __init__(self, args):
        self.args = args
        self.state = os.path.abspath(args.state)
        os.makedirs(self.state, exist_ok=True)
        self.client = kapi.Client(args.kubeconfig)
        with open(args.images) as f:
            self.images = podspec.expand_images(json.load(f), os.environ)
        self.allocatable = {"cpu": podspec.qty("cpu", args.cpu),
                            "memory": podspec.qty("memory", args.memory)}
        self.labels = dict(kv.split("=", 1) for kv in args.labels.split(",") if "=" in kv)
        self.pool = netns.AddressPool(os.path.join(self.state, "addresses.json"),
                                      args.pod_cidr)
        self.stopping = threading.Event()
        self.shutdown_grace = SHUTDOWN_GRACE
        self.lock = threading.Lock()
        self.workers = {}  # uid -> PodWorker
        self.finished = set()  # uids whose worker ended with the pod finished
        self.deleting = set()  # uids whose final delete is under way
        self.recent_events = {}  # (uid, reason, message) -> when last recorded
        self.node_uid = None
        self.version = "v0.0.0"
        self.log = log

    # --- start-up -------------------------------------------------------------------------------

    def clean_leftovers(self):
        """What an earlier run for this node left: the pods' namespaces and links (by the
        addresses file) and cgroups (NodeCgroups removes those by name)."""
        for uid in self.pool.uids():
            if netns.exists(uid):
                log("removing the network namespace of an earlier run: %s"
                    % netns.names(uid)[0])
            netns.teardown(uid, self.args.router_netns)
        self.cg = cgroups.NodeCgroups(self.args.node, log)
        if self.cg.mode is None:
            log("pods run without cgroup limits: %s" % self.cg.reason)
        else:
            log("pod cgroups (%s) under %s" % (self.cg.mode, ", ".join(self.cg.bases.values())))
        self.sandbox = Sandbox(self.state, log)
        # Each pod has a network namespace of its own: the fake's bind() confinement
        # (podnet.so) is not wanted here.
        self.sandbox.podnet = None

    def register(self):
        v = self.client.get("/version")
        self.version = v.get("gitVersion", self.version)
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": self.args.node, "labels": self.node_labels()},
                "spec": {},
                "status": self.node_status()}
        try:
            out = self.client.post("/api/v1/nodes", node)
            log("registered node %s (Kubernetes %s)" % (self.args.node, self.version))
        except kapi.ApiError as e:
            if e.code != 409:
                raise
            out = self.client.merge_patch("/api/v1/nodes/" + self.args.node,
                                          {"metadata": {"labels": self.node_labels()}})
            log("node %s exists, status refreshed" % self.args.node)
        self.node_uid = out["metadata"]["uid"]
        self.heartbeat()

    def node_labels(self):
        lab = {"kubernetes.io/hostname": self.args.node, "kubernetes.io/os": "linux",
               "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
               "beta.kubernetes.io/arch": "amd64"}
        lab.update(self.labels)
        return lab

    def node_status(self):
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        cap = {"cpu": self.args.cpu, "memory": self.args.memory, "pods": "110",
               "ephemeral-storage": "20Gi"}

        def cond(t, status, reason, msg):
            return {"type": t, "status": status, "reason": reason, "message": msg,
                    "lastHeartbeatTime": now, "lastTransitionTime": self.started_at}
        return {
            "capacity": cap, "allocatable": dict(cap),
            "conditions": [
                cond("MemoryPressure", "False", "KubeletHasSufficientMemory",
                     "kubelet has sufficient memory available"),
                cond("DiskPressure", "False", "KubeletHasNoDiskPressure",
                     "kubelet has no disk pressure"),
                cond("PIDPressure", "False", "KubeletHasSufficientPID",
                     "kubelet has sufficient PID available"),
                cond("Ready", "True", "KubeletReady", "kubelet is posting ready status")],
            "addresses": [{"type": "InternalIP", "address": self.args.node_ip},
                          {"type": "Hostname", "address": self.args.node}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.args.port}},
            "nodeInfo": {"machineID": _read("/etc/machine-id") or self.args.node,
                         "systemUUID": self.args.node, "bootID":
                         _read("/proc/sys/kernel/random/boot_id") or "",
                         "kernelVersion": platform.release(),
                         "osImage": "sizeup process kubelet (%s)" % platform.system(),
                         "containerRuntimeVersion": "process://0.1",
                         "kubeletVersion": self.version, "kubeProxyVersion": "",
                         "operatingSystem": "linux", "architecture": "amd64"}}

    def heartbeat(self):
        try:
            self.client.merge_patch("/api/v1/nodes/%s/status" % self.args.node,
                                    {"status": self.node_status()})
        except kapi.ApiError as e:
            log("node status not written: %s" % e)

    def renew_lease(self, lease):
        """Creates or renews the node's Lease; returns the stored Lease (or the last one)."""
        path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
        spec = {"holderIdentity": self.args.node, "leaseDurationSeconds": LEASE_SECONDS,
                "renewTime": micro_time()}
        try:
            if lease is None:
                try:
                    lease = self.client.get(path + "/" + self.args.node)
                except kapi.ApiError as e:
                    if e.code != 404:
                        raise
                    return self.client.post(path, {
                        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                        "metadata": {"name": self.args.node, "namespace": "kube-node-lease",
                                     "ownerReferences": [{"apiVersion": "v1", "kind": "Node",
                                                          "name": self.args.node,
                                                          "uid": self.node_uid}]},
                        "spec": spec})
            lease = dict(lease, spec=dict(lease.get("spec") or {}, **spec))
            return self.client.put(path + "/" + self.args.node, lease)
        except kapi.ApiError as e:
            log("lease not renewed: %s" % e)
            return None

    def heartbeat_loop(self):
        lease = None
        while not self.stopping.is_set():
            lease = self.renew_lease(lease)
            self.heartbeat()
            self.stopping.wait(RENEW)

    # --- pods -----------------------------------------------------------------------------------

    def watch_loop(self):
        """List the node's pods, then watch from the list's resourceVersion; a 410 (or a
        failed request) lists again, one second apart at least."""
        sel = {"fieldSelector": "spec.nodeName=" + self.args.node}
        while not self.stopping.is_set():
            try:
                lst = self.client.get("/api/v1/pods", sel)
                rv = lst["metadata"]["resourceVersion"]
                seen = set()
                for p in lst.get("items") or []:
                    seen.add(p["metadata"]["uid"])
                    self.dispatch("MODIFIED", p)
                with self.lock:
                    stale = [w for uid, w in self.workers.items() if uid not in seen]
                for w in stale:
                    w.delete_seen()
                while not self.stopping.is_set():
                    q = dict(sel, resourceVersion=rv, allowWatchBookmarks="true",
                             timeoutSeconds=str(WATCH_SECONDS))
                    expired = False
                    for ev in self.client.watch("/api/v1/pods", q, WATCH_SECONDS + 30):
                        if self.stopping.is_set():
                            return
                        obj = ev.get("object") or {}
                        if ev.get("type") == "ERROR":
                            expired = obj.get("code") == 410
                            log("watch error: %s" % obj.get("message"))
                            break
                        rv = (obj.get("metadata") or {}).get("resourceVersion", rv)
                        if ev.get("type") != "BOOKMARK":
                            self.dispatch(ev.get("type"), obj)
                    if expired:
                        break
            except kapi.ApiError as e:
                log("pod list/watch: %s" % e)
            self.stopping.wait(1.0)

    def dispatch(self, etype, pod):
        m = pod.get("metadata") or {}
        uid = m.get("uid")
        if not uid or (pod.get("spec") or {}).get("nodeName") != self.args.node:
            return
        with self.lock:
            w = self.workers.get(uid)
            if w is not None:
                if etype == "DELETED":
                    w.delete_seen()
                else:
                    w.update(pod)
                return
            if etype == "DELETED" or self.stopping.is_set():
                self.finished.discard(uid)
                return
            terminal = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
            if m.get("deletionTimestamp"):
                # Nothing of it runs here: only the final delete is left.
                if uid not in self.deleting:
                    self.deleting.add(uid)
                    threading.Thread(target=self.final_delete, args=(pod,),
                                     daemon=True).start()
                return
            if terminal or uid in self.finished:
                return
            w = pods.PodWorker(self, pod)
            self.workers[uid] = w
        log("pod %s/%s: admitted" % (m.get("namespace"), m.get("name")))
        w.start()

    def worker_done(self, w):
        with self.lock:
            self.workers.pop(w.uid, None)
            if not self.stopping.is_set():
                self.finished.add(w.uid)

    def final_delete(self, pod):
        m = pod["metadata"]
        try:
            self.client.delete(kapi.pod_path(m["namespace"], m["name"]), {
                "apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                "preconditions": {"uid": m["uid"]}})
            log("pod %s/%s: deleted" % (m["namespace"], m["name"]))
        except kapi.ApiError as e:
            if e.code not in (404, 409):
                log("pod %s/%s: final delete failed: %s" % (m["namespace"], m["name"], e))
        finally:
            self.pool.release(m["uid"])
            _rmtree(os.path.join(self.state, "logs", "%s_%s_%s" % (m["namespace"], m["name"],
                                                                    m["uid"])))

    def allocated_requests(self, exclude=None):
        """The requests the node has allocated to its pods (every worker's but exclude's)."""
        tot = {k: 0 for k in podresize.KEYS}
        with self.lock:
            ws = [w for w in self.workers.values() if w is not exclude]
        for w in ws:
            by = {c.name: c.allocated for c in w.containers if not c.done}
            for k, v in podresize.pod_requests(by).items():
                tot[k] += v
        return tot

    def lookup(self, kind, ns, name):
        """A ConfigMap or Secret the Node authorizer lets this node read (one its pods
        reference); None when it does not exist."""
        plural = {"configmap": "configmaps", "secret": "secrets"}[kind]
        try:
            return self.client.get("/api/v1/namespaces/%s/%s/%s" % (
                urllib.parse.quote(ns), plural, urllib.parse.quote(name)))
        except kapi.ApiError as e:
            if e.code == 404:
                return None
            raise

    def event(self, pod, etype, reason, message):
        """Records an Event about pod; the same reason and message for the same pod are
        recorded once per EVENT_REPEAT seconds (a kubelet's recorder aggregates them)."""
        m = pod.get("metadata") or {}
        key = (m.get("uid"), reason, message)
        now_s = time.time()
        with self.lock:
            if now_s - self.recent_events.get(key, 0) < EVENT_REPEAT:
                return
            if len(self.recent_events) > 10000:
                self.recent_events.clear()
            self.recent_events[key] = now_s
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        ev = {"apiVersion": "v1", "kind": "Event",
              "metadata": {"name": "%s.%x" % (m.get("name"), time.time_ns()),
                           "namespace": m.get("namespace")},
              "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": m.get("name"),
                                 "namespace": m.get("namespace"), "uid": m.get("uid")},
              "reason": reason, "message": message[:1024], "type": etype,
              "source": {"component": "kubelet", "host": self.args.node},
              "firstTimestamp": now, "lastTimestamp": now, "count": 1,
              "reportingComponent": "kubelet", "reportingInstance": self.args.node}
        try:
            self.client.post("/api/v1/namespaces/%s/events" % m.get("namespace"), ev)
        except kapi.ApiError as e:
            log("event %s not recorded: %s" % (reason, e))

    # --- what the node server serves --------------------------------------------------------------

    def pods(self):
        with self.lock:
            return [w.pod for w in self.workers.values()]

    def metrics_text(self):
        with self.lock:
            ws = list(self.workers.values())
        rows = []
        for w in ws:
            rows += w.usage()
        # The node's usage is what it runs: its pods and this kubelet itself.
        t = os.times()
        own_cpu = t.user + t.system + t.children_user + t.children_system
        own_mem = _rss()
        node = {"cpu": own_cpu + sum(r["cpu"] or 0 for r in rows),
                "memory": own_mem + sum(r["memory"] or 0 for r in rows)}
        return resmetrics.render(node, rows, int(time.time() * 1000))

    def log_file(self, ns, pod, container, previous):
        """(path, running()) of the container's current (or previous) log; (None, None)."""
        with self.lock:
            ws = [w for w in self.workers.values() if w.ns == ns and w.name == pod]
        base = os.path.join(self.state, "logs")
        dirs = [os.path.join(base, d) for d in _listdir(base)
                if d.startswith("%s_%s_" % (ns, pod))]
        if ws:
            dirs = [ws[0].log_dir]
        dirs.sort(key=lambda d: _mtime(d), reverse=True)
        for d in dirs[:1]:
            cdir = os.path.join(d, container)
            runs = sorted((int(f[:-4]) for f in _listdir(cdir) if f.endswith(".log")
                           and f[:-4].isdigit()))
            if previous:
                runs = runs[:-1]
            if not runs:
                return None, None
            path = os.path.join(cdir, "%d.log" % runs[-1])
            w = ws[0] if ws else None

            def running(w=w, path=path):
                if w is None or w.finished:
                    return False
                return any(c.log_path == path and c.proc is not None for c in w.containers)
            return path, running
        return None, None

    # --- stopping -------------------------------------------------------------------------------

    def shutdown(self):
        """Stops every pod (SIGTERM, SHUTDOWN_GRACE, SIGKILL) and removes what it made."""
        self.stopping.set()
        with self.lock:
            ws = list(self.workers.values())
        for w in ws:
            w.wake.set()
        deadline = time.time() + SHUTDOWN_GRACE + 2.5
        for w in ws:
            w.join(max(0.1, deadline - time.time()))
        for w in ws:
            if w.is_alive():
                log("pod %s/%s did not stop in time" % (w.ns, w.name))
        self.cg.shutdown()


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _rss():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 1


def _listdir(d):
    try:
        return os.listdir(d)
    except OSError:
        return []


def _mtime(p):
    try:
        return os.stat(p).st_mtime
    except OSError:
        return 0


def _rmtree(d):
    import shutil
    shutil.rmtree(d, ignore_errors=True)


def main(argv):
    args = parse_args(argv)
    kl = Kubelet(args)
    kl.started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    kl.clean_leftovers()
    srv = None
    try:
        for attempt in range(60):
            try:
                kl.register()
                break
            except kapi.ApiError as e:
                if attempt == 59 or stop.is_set():
                    raise
                log("registering the node: %s (retrying)" % e)
                stop.wait(1.0)
        srv = nodeserver.start(kl, args.node_ip, args.port, args.tls_cert, args.tls_key,
                               args.client_ca)
        threading.Thread(target=kl.heartbeat_loop, daemon=True, name="heartbeat").start()
        threading.Thread(target=kl.watch_loop, daemon=True, name="pod-watch").start()
        log("node %s ready: pods on %s, server on %s:%d" % (args.node, args.pod_cidr,
                                                             args.node_ip, args.port))
        while not stop.is_set():
            stop.wait(1.0)
        log("stopping")
    finally:
        kl.shutdown()
        if srv is not None:
            srv.shutdown()
            srv.server_close()
    log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
