"""The Deployment/ReplicaSet controller and the kubelet of the fake cluster.

The controller keeps ReplicaSets and Pods for each Deployment and the status fields a real
kube-controller-manager keeps (observedGeneration, replica counts, Available and Progressing
conditions with ProgressDeadlineExceeded). The kubelet runs each pod's containers as real local
processes, each pod on its own loopback address, each container in its own cgroup with the
container's CPU and memory limits, and reports readiness, restarts and OOMKilled.
"""

import datetime
import hashlib
import http.client
import json
import math
import os
import random
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time

import admission
import resize
from api import jcopy, now_ts
from controller import Controller
from resources import BY_PATH
from sandbox import Sandbox, container_argv, expand_env, image_entry
from store import ApiError

DEPLOY = BY_PATH[("apps", "v1", "deployments")]
RS = BY_PATH[("apps", "v1", "replicasets")]
POD = BY_PATH[("", "v1", "pods")]
CM = BY_PATH[("", "v1", "configmaps")]
EVENT = BY_PATH[("", "v1", "events")]
EP = BY_PATH[("", "v1", "endpoints")]
SVC = BY_PATH[("", "v1", "services")]
SA = BY_PATH[("", "v1", "serviceaccounts")]

STUCK_ANNOTATION = "fake.sizeup.dev/stuck"
UNSCHEDULABLE_ANNOTATION = "fake.sizeup.dev/unschedulable"
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
NODE = "fake-node"
SAFE = "bcdfghjklmnpqrstvwxz2456789"


def log(msg):
    print("fakeapi: " + msg, file=sys.stderr, flush=True)


def rand_suffix(n=5):
    return "".join(random.choice(SAFE) for _ in range(n))


def template_hash(tpl):
    h = hashlib.sha256(json.dumps(tpl, sort_keys=True).encode()).digest()
    return "".join(SAFE[b % len(SAFE)] for b in h[:10])


def parse_cpu_millis(q):
    """'500m' -> 500, '1.5' -> 1500, 2 -> 2000."""
    if q is None:
        return None
    s = str(q).strip()
    if s.endswith("m"):
        return int(float(s[:-1]))
    return int(float(s) * 1000)


_MEM = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "k": 10**3, "K": 10**3,
        "M": 10**6, "G": 10**9, "T": 10**12, "m": 0.001}


def parse_bytes(q):
    if q is None:
        return None
    s = str(q).strip()
    m = re.match(r"^([0-9.]+(?:[eE][0-9]+)?)([a-zA-Z]*)$", s)
    if not m or (m.group(2) and m.group(2) not in _MEM):
        raise ValueError("bad quantity %r" % q)
    return int(float(m.group(1)) * _MEM.get(m.group(2), 1))


def set_condition(conds, ctype, status, reason, message, now, force_update=False):
    """Set a condition as the real controllers do: lastTransitionTime changes only when the
    status does; an identical status+reason is left alone unless force_update."""
    cur = next((c for c in conds if c.get("type") == ctype), None)
    if cur and cur.get("status") == status and cur.get("reason") == reason and \
            cur.get("message") == message and not force_update:
        return conds
    new = {"type": ctype, "status": status, "lastUpdateTime": now,
           "lastTransitionTime": cur["lastTransitionTime"] if cur and
           cur.get("status") == status else now, "reason": reason, "message": message}
    return [c for c in conds if c.get("type") != ctype] + [new]


def _resolve(v, total, round_up):
    if isinstance(v, str) and v.endswith("%"):
        x = float(v[:-1]) * total / 100.0
        return int(-(-x // 1)) if round_up else int(x // 1)
    return int(v or 0)


def _epoch(ts):
    import calendar
    try:
        return calendar.timegm(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ"))
    except (TypeError, ValueError):
        return time.time()


def emit_event(api, obj, kind, api_version, etype, reason, message, component):
    """A core v1 Event about obj, as the real controllers and kubelet record them."""
    m = obj["metadata"]
    now = now_ts()
    try:
        api.create(EVENT, m["namespace"], {
            "metadata": {"name": "%s.%x" % (m["name"], int(time.time() * 1e9)),
                         "namespace": m["namespace"]},
            "involvedObject": {"kind": kind, "namespace": m["namespace"], "name": m["name"],
                               "uid": m.get("uid"), "apiVersion": api_version,
                               "resourceVersion": m.get("resourceVersion")},
            "reason": reason, "message": message, "type": etype,
            "source": {"component": component} if component != "kubelet" else
            {"component": component, "host": NODE},
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            "reportingComponent": component, "reportingInstance": NODE
            if component == "kubelet" else ""})
    except ApiError:
        pass


class WorkQueue:
    def __init__(self):
        self.cond = threading.Condition()
        self.items = []
        self.set = set()

    def add(self, key):
        with self.cond:
            if key not in self.set:
                self.set.add(key)
                self.items.append(key)
                self.cond.notify()

    def get(self, timeout):
        with self.cond:
            if not self.items:
                self.cond.wait(timeout)
            if not self.items:
                return None
            k = self.items.pop(0)
            self.set.discard(k)
            return k


class DeploymentController:
    def __init__(self, api, stop):
        self.api = api
        self.store = api.store
        self.stop = stop
        self.queue = WorkQueue()
        self.active = set()  # deployments whose rollout is not complete: re-checked each second
        self.current = None  # (thread id, key) of the reconcile in progress
        self.store.listeners.append(self._on_change)

    def _enqueue(self, key):
        # Events caused by a reconcile's own writes need no second pass of the same key.
        if self.current != (threading.get_ident(), key):
            self.queue.add(key)

    def start(self):
        # Objects created before the controller existed (--preload) get their first sync.
        entries, _ = self.store.entries(DEPLOY.key)
        for e in entries:
            self.queue.add((e.obj["metadata"]["namespace"], e.obj["metadata"]["name"]))
        threading.Thread(target=self.run, name="deployment-controller", daemon=True).start()

    def _on_change(self, key, etype, obj, old):
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace")
        if key == DEPLOY.key:
            if old is not None and etype == "MODIFIED" and \
                    old.get("spec") == obj.get("spec") and \
                    (old["metadata"].get("annotations") or {}).get(STUCK_ANNOTATION) == \
                    (meta.get("annotations") or {}).get(STUCK_ANNOTATION) and \
                    old["metadata"].get("deletionTimestamp") == meta.get("deletionTimestamp") and \
                    old["metadata"].get("generation") == meta.get("generation"):
                return  # our own status write or a metadata edit: nothing to do
            # (An annotation edit bumps a Deployment's generation: the status must observe it.)
            self._enqueue((ns, meta.get("name")))
        elif key in (RS.key, POD.key):
            if key == RS.key and etype == "MODIFIED" and old is not None and \
                    old.get("spec") == obj.get("spec"):
                return  # a ReplicaSet's status is ours, derived from its pods
            for ref in meta.get("ownerReferences") or []:
                if key == RS.key and ref.get("kind") == "Deployment":
                    self._enqueue((ns, ref.get("name")))
                elif key == POD.key and ref.get("kind") == "ReplicaSet":
                    rs = self.store.get(RS.key, ns, ref.get("name"))
                    for r2 in ((rs or {}).get("metadata") or {}).get("ownerReferences") or []:
                        if r2.get("kind") == "Deployment":
                            self._enqueue((ns, r2.get("name")))

    def run(self):
        last_tick = time.time()
        while not self.stop.is_set():
            key = self.queue.get(0.5)
            if key is not None:
                try:
                    self.reconcile(*key)
                except ApiError as e:
                    if e.code != 409:
                        log("deployment %s/%s: %s" % (key[0], key[1], e.message))
                    self.queue.add(key)
                    time.sleep(0.05)
                except Exception:
                    import traceback
                    traceback.print_exc()
            if time.time() - last_tick >= 1.0:
                last_tick = time.time()
                for k in list(self.active):
                    self.queue.add(k)

    # --- reconcile ------------------------------------------------------------------------------

    def _owned(self, key, uid):
        out = []
        for k, ns, name in self.store.dependents(uid):
            if k != key:
                continue
            o = self.store.get(k, ns, name)
            if o is not None:
                out.append(o)
        return out

    def reconcile(self, ns, name):
        self.current = (threading.get_ident(), (ns, name))
        try:
            self._reconcile_locked(ns, name)
        finally:
            self.current = None

    def _reconcile_locked(self, ns, name):
        with self.store.lock:
            d = self.store.get(DEPLOY.key, ns, name)
            if d is None or d["metadata"].get("deletionTimestamp"):
                self.active.discard((ns, name))
                return
            self._reconcile(d, ns, name)

    def _reconcile(self, d, ns, name):
        now = now_ts()
        meta = d["metadata"]
        spec = d.get("spec") or {}
        desired = spec.get("replicas", 1)
        tpl = spec.get("template") or {}
        h = template_hash(tpl)
        rss = self._owned(RS.key, meta["uid"])
        new_rs = None
        for r in rss:
            if (r["metadata"].get("labels") or {}).get("pod-template-hash") == h:
                new_rs = r
                break
        if new_rs is None:
            # A template equal to an old ReplicaSet's but for the hash label (a rollback, an
            # in-place restore) brings that ReplicaSet back, as the real controller does.
            for r in rss:
                rtpl = jcopy((r.get("spec") or {}).get("template") or {})
                lbl = (rtpl.get("metadata") or {}).get("labels") or {}
                lbl.pop("pod-template-hash", None)
                if rtpl == tpl:
                    new_rs = r
                    break
        created_new = False
        revs = [int((r["metadata"].get("annotations") or {}).get(
            "deployment.kubernetes.io/revision", "0")) for r in rss]
        if new_rs is None:
            new_rs = self._create_rs(d, tpl, h, max(revs + [0]) + 1)
            rss.append(new_rs)
            created_new = True
        elif (new_rs["metadata"].get("annotations") or {}).get(
                "deployment.kubernetes.io/revision") != str(max(revs + [0])) and len(rss) > 1:
            # A rollback to an old template: it becomes the newest revision again.
            nr = jcopy(new_rs)
            nr["metadata"].setdefault("annotations", {})[
                "deployment.kubernetes.io/revision"] = str(max(revs) + 1)
            new_rs = self.api.update(RS, ns, nr["metadata"]["name"], nr)
            rss = [new_rs if r["metadata"]["uid"] == new_rs["metadata"]["uid"] else r
                   for r in rss]
        olds = [r for r in rss if r["metadata"]["uid"] != new_rs["metadata"]["uid"]]
        olds.sort(key=lambda r: int((r["metadata"].get("annotations") or {}).get(
            "deployment.kubernetes.io/revision", "0")))
        stuck = (meta.get("annotations") or {}).get(STUCK_ANNOTATION) == "true"

        # Counts per ReplicaSet from its live pods.
        def counts(r):
            pods = [p for p in self._owned(POD.key, r["metadata"]["uid"])
                    if not p["metadata"].get("deletionTimestamp")]
            ready = [p for p in pods if _pod_ready(p)]
            mrs = spec.get("minReadySeconds", 0)
            avail = [p for p in ready if _ready_for(p) >= mrs]
            return pods, len(ready), len(avail)

        replicas = {r["metadata"]["name"]: (r.get("spec") or {}).get("replicas", 0) for r in rss}
        info = {r["metadata"]["name"]: counts(r) for r in rss}
        nname = new_rs["metadata"]["name"]
        if not spec.get("paused"):
            strat = (spec.get("strategy") or {})
            if strat.get("type") == "Recreate":
                if any(replicas[o["metadata"]["name"]] for o in olds):
                    for o in olds:
                        replicas[o["metadata"]["name"]] = 0
                elif not any(info[o["metadata"]["name"]][0] for o in olds):
                    replicas[nname] = desired
            else:
                ru = strat.get("rollingUpdate") or {}
                surge = _resolve(ru.get("maxSurge", "25%"), desired, True)
                unavail = _resolve(ru.get("maxUnavailable", "25%"), desired, False)
                if surge == 0 and unavail == 0:
                    unavail = 1
                # Scale the new ReplicaSet up within maxSurge.
                if replicas[nname] > desired:
                    replicas[nname] = desired
                elif replicas[nname] < desired:
                    total = sum(replicas.values())
                    room = desired + surge - total
                    if room > 0:
                        replicas[nname] += min(room, desired - replicas[nname])
                # Scale old ones down while keeping desired - maxUnavailable available.
                if olds:
                    all_count = sum(replicas.values())
                    min_avail = desired - unavail
                    new_unavail = replicas[nname] - info[nname][2]
                    max_down = all_count - min_avail - new_unavail
                    if max_down > 0:
                        for o in olds:
                            on = o["metadata"]["name"]
                            unhealthy = replicas[on] - info[on][2]
                            k = min(max_down, max(0, unhealthy))
                            replicas[on] -= k
                            max_down -= k
                        avail_total = sum(info[r["metadata"]["name"]][2] for r in rss)
                        budget = min(max_down, avail_total - min_avail)
                        for o in olds:
                            on = o["metadata"]["name"]
                            k = max(0, min(replicas[on], budget))
                            replicas[on] -= k
                            budget -= k
        # Apply the ReplicaSet sizes and keep each one's pods.
        for r in rss:
            rn = r["metadata"]["name"]
            if (r.get("spec") or {}).get("replicas", 0) != replicas[rn]:
                before = (r.get("spec") or {}).get("replicas", 0)
                nr = jcopy(r)
                nr["spec"]["replicas"] = replicas[rn]
                nr["metadata"].setdefault("annotations", {})[
                    "deployment.kubernetes.io/desired-replicas"] = str(desired)
                r = self.api.update(RS, ns, rn, nr)
                emit_event(self.api, d, "Deployment", "apps/v1", "Normal", "ScalingReplicaSet",
                           "Scaled %s replica set %s from %d to %d" % (
                               "up" if replicas[rn] > before else "down", rn, before,
                               replicas[rn]), "deployment-controller")
            failed = self._sync_pods(r, stuck and rn == nname)
            pods, ready, avail = counts(r)
            info[rn] = (pods, ready, avail)
            rst = {"replicas": len(pods), "fullyLabeledReplicas": len(pods),
                   "readyReplicas": ready, "availableReplicas": avail,
                   "observedGeneration": r["metadata"].get("generation", 1)}
            rst = {k: v for k, v in rst.items() if v}
            rst["replicas"] = len(pods)  # required in ReplicaSetStatus: 0 is written too
            rst.update(admission.rs_failure_status(r, failed, now))
            if (r.get("status") or {}) != rst:
                self.api.write_status(RS, ns, rn, rst)
        # Old ReplicaSets beyond revisionHistoryLimit are deleted.
        limit = spec.get("revisionHistoryLimit", 10)
        empty_olds = [o for o in olds if replicas[o["metadata"]["name"]] == 0
                      and not info[o["metadata"]["name"]][0]]
        for o in empty_olds[:max(0, len(empty_olds) - limit)]:
            try:
                self.api.delete(RS, ns, o["metadata"]["name"])
            except ApiError:
                pass
        self._status(d, ns, name, new_rs, rss, replicas, info, created_new, now)

    def _status(self, d, ns, name, new_rs, rss, replicas, info, created_new, now):
        spec = d.get("spec") or {}
        desired = spec.get("replicas", 1)
        nname = new_rs["metadata"]["name"]
        old_st = d.get("status") or {}
        total_pods = sum(len(info[r["metadata"]["name"]][0]) for r in rss)
        updated = len(info[nname][0])
        ready = sum(info[r["metadata"]["name"]][1] for r in rss)
        avail = sum(info[r["metadata"]["name"]][2] for r in rss)
        unavailable = max(0, sum(replicas.values()) - avail)
        st = {"observedGeneration": d["metadata"].get("generation", 1), "replicas": total_pods,
              "updatedReplicas": updated, "readyReplicas": ready, "availableReplicas": avail,
              "unavailableReplicas": unavailable}
        st = {k: v for k, v in st.items() if v}
        conds = list(old_st.get("conditions") or [])
        ru = (spec.get("strategy") or {}).get("rollingUpdate") or {}
        unavail_allowed = _resolve(ru.get("maxUnavailable", "25%"), desired, False) \
            if (spec.get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate" \
            else 0
        if avail >= desired - unavail_allowed:
            conds = set_condition(conds, "Available", "True", "MinimumReplicasAvailable",
                                  "Deployment has minimum availability.", now)
        else:
            conds = set_condition(conds, "Available", "False", "MinimumReplicasUnavailable",
                                  "Deployment does not have minimum availability.", now)
        complete = (updated == desired and total_pods == desired and avail == desired)
        prog = next((c for c in conds if c.get("type") == "Progressing"), None)
        progressed = (old_st.get("updatedReplicas", 0) < updated or
                      old_st.get("readyReplicas", 0) < ready or
                      old_st.get("availableReplicas", 0) < avail or
                      old_st.get("replicas", 0) > total_pods or
                      old_st.get("observedGeneration") != st.get("observedGeneration"))
        if complete:
            conds = set_condition(conds, "Progressing", "True", "NewReplicaSetAvailable",
                                  'ReplicaSet "%s" has successfully progressed.' % nname, now)
            self.active.discard((ns, name))
        else:
            self.active.add((ns, name))
            if created_new:
                conds = set_condition(conds, "Progressing", "True", "NewReplicaSetCreated",
                                      'Created new replica set "%s"' % nname, now)
            elif progressed or prog is None:
                conds = set_condition(conds, "Progressing", "True", "ReplicaSetUpdated",
                                      'ReplicaSet "%s" is progressing.' % nname, now,
                                      force_update=True)
            elif prog.get("reason") != "ProgressDeadlineExceeded" and \
                    time.time() - _epoch(prog.get("lastUpdateTime")) > \
                    spec.get("progressDeadlineSeconds", 600):
                conds = set_condition(conds, "Progressing", "False", "ProgressDeadlineExceeded",
                                      'ReplicaSet "%s" has timed out progressing.' % nname, now)
        # Keep a stable order: Available first, then Progressing, as a real cluster shows.
        order = {"Available": 0, "Progressing": 1}
        conds.sort(key=lambda c: order.get(c.get("type"), 2))
        st["conditions"] = conds
        if old_st.get("collisionCount"):
            st["collisionCount"] = old_st["collisionCount"]
        admission.deploy_failure_condition(st, rss, now, self.store)
        if st != old_st:
            self.api.write_status(DEPLOY, ns, name, st)

    def _create_rs(self, d, tpl, h, revision):
        meta = d["metadata"]
        ns, name = meta["namespace"], meta["name"]
        rtpl = jcopy(tpl)
        rtpl.setdefault("metadata", {}).setdefault("labels", {})["pod-template-hash"] = h
        sel = jcopy((d.get("spec") or {}).get("selector") or {})
        sel.setdefault("matchLabels", {})["pod-template-hash"] = h
        labels = dict((tpl.get("metadata") or {}).get("labels") or {})
        labels["pod-template-hash"] = h
        rs = {"metadata": {"name": "%s-%s" % (name, h), "namespace": ns, "labels": labels,
                           "annotations": {
                               "deployment.kubernetes.io/revision": str(revision),
                               "deployment.kubernetes.io/desired-replicas":
                                   str((d.get("spec") or {}).get("replicas", 1)),
                               "deployment.kubernetes.io/max-replicas":
                                   str((d.get("spec") or {}).get("replicas", 1) + 1)},
                           "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                "name": name, "uid": meta["uid"],
                                                "controller": True,
                                                "blockOwnerDeletion": True}]},
              "spec": {"replicas": 0, "selector": sel, "template": rtpl,
                       "minReadySeconds": (d.get("spec") or {}).get("minReadySeconds", 0)}}
        # A 409 (an old Deployment's ReplicaSet of that name not yet collected) requeues.
        return self.api.create(RS, ns, rs)

    def _sync_pods(self, rs, stuck):
        meta = rs["metadata"]
        ns = meta["namespace"]
        want = (rs.get("spec") or {}).get("replicas", 0)
        pods = [p for p in self._owned(POD.key, meta["uid"])
                if not p["metadata"].get("deletionTimestamp")]
        if len(pods) < want:
            tpl = (rs.get("spec") or {}).get("template") or {}
            for _ in range(want - len(pods)):
                pm = jcopy(tpl.get("metadata") or {})
                pm["name"] = "%s-%s" % (meta["name"], rand_suffix())
                pm["namespace"] = ns
                pm["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": meta["name"], "uid": meta["uid"],
                                          "controller": True, "blockOwnerDeletion": True}]
                if stuck:
                    pm.setdefault("annotations", {})[UNSCHEDULABLE_ANNOTATION] = "true"
                try:
                    self.api.create(POD, ns, {"metadata": pm,
                                              "spec": jcopy(tpl.get("spec") or {})})
                except ApiError as e:
                    if e.code != 403:
                        raise
                    # Refused at admission: the condition and an Event, and a retry later.
                    return admission.failed_create(self.api, rs, "ReplicaSet", "apps/v1", e,
                                                   "replicaset-controller")
        elif len(pods) > want:
            # Not-ready pods go first, then the youngest.
            pods.sort(key=lambda p: (_pod_ready(p), p["metadata"].get("creationTimestamp", "")),
                      reverse=False)
            victims = sorted(pods, key=lambda p: (_pod_ready(p),
                                                  -_epoch(p["metadata"]["creationTimestamp"])))
            for p in victims[:len(pods) - want]:
                try:
                    self.api.delete(POD, ns, p["metadata"]["name"])
                except ApiError:
                    pass


def _pod_ready(p):
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def _ready_for(p):
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready" and c.get("status") == "True":
            return time.time() - _epoch(c.get("lastTransitionTime"))
    return -1


# --- cgroups ----------------------------------------------------------------------------------

class Cgroups:
    """Per-container cgroups below the cgroup this process runs in (v1 or v2)."""

    def __init__(self, disabled=False):
        self.mode = None
        self.reason = ""
        self.bases = {}  # controller -> base dir we created
        if disabled:
            self.reason = "cgroups disabled (--no-cgroups)"
            return
        tag = "fakeapi-%d" % os.getpid()
        try:
            lines = open("/proc/self/cgroup").read().splitlines()
        except OSError as e:
            self.reason = "cannot read /proc/self/cgroup: %s" % e
            return
        v1 = {}
        v2 = None
        for line in lines:
            _, ctrls, path = line.split(":", 2)
            if ctrls == "":
                v2 = path
            for c in ctrls.split(","):
                if c:
                    v1[c] = path
        if "cpu" in v1 and "memory" in v1:
            try:
                for ctrl in ("cpu", "memory"):
                    mount = self._v1_mount(ctrl)
                    self._reap_stale(mount + v1[ctrl].rstrip("/"))
                    base = os.path.join(mount + v1[ctrl].rstrip("/"), tag)
                    os.makedirs(base, exist_ok=True)
                    self.bases[ctrl] = base
                self.mode = "v1"
                self._v1_cpuacct(v1, tag)
                return
            except OSError as e:
                self._remove_bases()
                self.reason = "cgroup v1 not writable: %s" % e
        if v2 is not None and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            try:
                parent = "/sys/fs/cgroup" + v2.rstrip("/")
                self._reap_stale(parent)
                # The parent must delegate cpu and memory; it can only when it holds no
                # processes itself (the root, or a delegated systemd scope).
                with open(os.path.join(parent, "cgroup.subtree_control")) as f:
                    enabled = f.read().split()
                if "cpu" not in enabled or "memory" not in enabled:
                    _write(os.path.join(parent, "cgroup.subtree_control"), "+cpu +memory")
                base = os.path.join(parent, tag)
                os.makedirs(base, exist_ok=True)
                self.bases["unified"] = base
                with open(os.path.join(base, "cgroup.subtree_control"), "w") as f:
                    f.write("+cpu +memory")
                self.mode = "v2"
                return
            except OSError as e:
                self._remove_bases()
                self.reason = (self.reason + "; " if self.reason else "") + \
                    "cgroup v2 not writable: %s" % e
        if not self.reason:
            self.reason = "no cpu and memory cgroup controllers found"

    def _v1_cpuacct(self, v1, tag):
        """CPU accounting for metrics.k8s.io: cpuacct, where it is not mounted with cpu, gets a
        base of its own (best effort: without it, CPU comes from the processes' times)."""
        if "cpuacct" not in v1:
            return
        try:
            mount = self._v1_mount("cpuacct")
            parent = mount + v1["cpuacct"].rstrip("/")
            if os.path.realpath(parent) == os.path.realpath(os.path.dirname(self.bases["cpu"])):
                return  # co-mounted with cpu: cpuacct.usage is in the cpu directory
            self._reap_stale(parent)
            base = os.path.join(parent, tag)
            os.makedirs(base, exist_ok=True)
            self.bases["cpuacct"] = base
        except OSError as e:
            log("no cpuacct cgroup, CPU usage from the processes' times: %s" % e)

    @staticmethod
    def _reap_stale(parent):
        """Cgroups left by a fake that was killed (SIGKILL skips the cleanup): their server pid
        is gone, so their pods are stopped and the directories removed."""
        try:
            names = os.listdir(parent)
        except OSError:
            return
        for n in names:
            m = re.match(r"^fakeapi-([0-9]+)$", n)
            if not m or os.path.exists("/proc/" + m.group(1)):
                continue
            base = os.path.join(parent, n)
            for sub in os.listdir(base):
                if os.path.isdir(os.path.join(base, sub)):
                    _kill_cgroup(os.path.join(base, sub))
                    _rmdir(os.path.join(base, sub))
            _rmdir(base)
            log("removed stale cgroup %s" % base)

    @staticmethod
    def _v1_mount(ctrl):
        for line in open("/proc/self/mountinfo"):
            parts = line.split()
            sep = parts.index("-")
            if parts[sep + 1] == "cgroup" and ctrl in parts[sep + 3].split(","):
                return parts[4]
        raise OSError("no v1 mount for %s" % ctrl)

    def _remove_bases(self):
        for b in self.bases.values():
            try:
                os.rmdir(b)
            except OSError:
                pass
        self.bases = {}

    def create(self, name, cpu_millis, mem_bytes):
        """Returns (paths for cgroup.procs, info dict) or (None, info) when unlimited."""
        info = {"mode": self.mode or "none", "cpuMillis": cpu_millis, "memoryBytes": mem_bytes}
        if self.mode is None:
            info["unlimited"] = self.reason
            return None, info
        dirs = []
        try:
            if self.mode == "v1":
                cpu = os.path.join(self.bases["cpu"], name)
                mem = os.path.join(self.bases["memory"], name)
                for dd in (cpu, mem):
                    os.makedirs(dd, exist_ok=True)
                    dirs.append(dd)
                _write(os.path.join(cpu, "cpu.cfs_period_us"), "100000")
                _write(os.path.join(cpu, "cpu.cfs_quota_us"),
                       str(max(1000, cpu_millis * 100)) if cpu_millis else "-1")
                if mem_bytes:
                    _write(os.path.join(mem, "memory.limit_in_bytes"), str(mem_bytes))
                    try:
                        _write(os.path.join(mem, "memory.memsw.limit_in_bytes"), str(mem_bytes))
                    except OSError:
                        pass
                info["cpuDir"], info["memoryDir"] = cpu, mem
                info["cpuacctDir"] = cpu
                if "cpuacct" in self.bases:
                    acct = os.path.join(self.bases["cpuacct"], name)
                    os.makedirs(acct, exist_ok=True)
                    dirs.append(acct)
                    info["cpuacctDir"] = acct
            else:
                dd = os.path.join(self.bases["unified"], name)
                os.makedirs(dd, exist_ok=True)
                dirs.append(dd)
                _write(os.path.join(dd, "cpu.max"),
                       "%d 100000" % max(1000, cpu_millis * 100) if cpu_millis else "max 100000")
                if mem_bytes:
                    _write(os.path.join(dd, "memory.max"), str(mem_bytes))
                    try:
                        _write(os.path.join(dd, "memory.swap.max"), "0")
                    except OSError:
                        pass
                info["cpuDir"] = info["memoryDir"] = dd
        except OSError as e:
            for dd in dirs:
                _rmdir(dd)
            info["unlimited"] = "cannot set up cgroup %s: %s" % (name, e)
            return None, info
        info["dirs"] = dirs
        return [os.path.join(dd, "cgroup.procs") for dd in dirs], info

    def oom_kills(self, info):
        d = info.get("memoryDir")
        if not d:
            return 0
        f = "memory.oom_control" if self.mode == "v1" else "memory.events"
        try:
            for line in open(os.path.join(d, f)):
                k, _, v = line.partition(" ")
                if k == "oom_kill":
                    return int(v)
        except OSError:
            pass
        return 0

    def cpu_seconds(self, info):
        """CPU time of everything that ran in the container's cgroup, in seconds (cpu.stat's
        usage_usec on v2, cpuacct.usage on v1), as cAdvisor reads it; None when unreadable."""
        try:
            if self.mode == "v2" and info.get("cpuDir"):
                with open(os.path.join(info["cpuDir"], "cpu.stat")) as f:
                    for line in f:
                        k, _, v = line.partition(" ")
                        if k == "usage_usec":
                            return int(v) / 1e6
            elif self.mode == "v1" and info.get("cpuacctDir"):
                with open(os.path.join(info["cpuacctDir"], "cpuacct.usage")) as f:
                    return int(f.read()) / 1e9
        except (OSError, ValueError):
            pass
        return None

    def working_set(self, info):
        """Memory usage minus inactive file cache, as metrics-server reports it."""
        d = info.get("memoryDir")
        if not d:
            return None
        try:
            if self.mode == "v1":
                with open(os.path.join(d, "memory.usage_in_bytes")) as f:
                    usage = int(f.read())
                inactive_key = "total_inactive_file"
            else:
                with open(os.path.join(d, "memory.current")) as f:
                    usage = int(f.read())
                inactive_key = "inactive_file"
            with open(os.path.join(d, "memory.stat")) as f:
                for line in f:
                    k, _, v = line.partition(" ")
                    if k == inactive_key:
                        return max(0, usage - int(v))
            return usage
        except (OSError, ValueError):
            return None

    def reset_peak(self, info):
        """A restarted container starts with a fresh memory high-water mark."""
        d = info.get("memoryDir")
        if d:
            try:
                _write(os.path.join(d, "memory.max_usage_in_bytes" if self.mode == "v1"
                                    else "memory.peak"), "0")
            except OSError:
                pass

    def near_limit(self, info):
        """The memory high-water mark reached the limit: a SIGKILL then is the OOM killer's."""
        d, lim = info.get("memoryDir"), info.get("memoryBytes")
        if not d or not lim:
            return False
        f = "memory.max_usage_in_bytes" if self.mode == "v1" else "memory.peak"
        try:
            with open(os.path.join(d, f)) as fh:
                return int(fh.read().strip()) >= lim * 0.9
        except (OSError, ValueError):
            return False

    def remove(self, info):
        for dd in info.get("dirs") or []:
            _kill_cgroup(dd)
            _rmdir(dd)

    def shutdown(self):
        for b in self.bases.values():
            if os.path.isdir(b):
                for sub in os.listdir(b):
                    p = os.path.join(b, sub)
                    if os.path.isdir(p):
                        _kill_cgroup(p)
                        _rmdir(p)
        self._remove_bases()


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _kill_cgroup(d):
    for _ in range(20):
        try:
            pids = [int(x) for x in open(os.path.join(d, "cgroup.procs")).read().split()]
        except OSError:
            return
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)


def _rmdir(d):
    for _ in range(40):
        try:
            os.rmdir(d)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)
    log("could not remove cgroup %s" % d)


# --- the kubelet ------------------------------------------------------------------------------

class ContainerRun:
    def __init__(self, spec):
        self.spec = spec
        self.name = spec["name"]
        self.proc = None
        self.started_at = None
        self.restarts = 0
        self.last_term = None
        self.next_start = 0.0
        self.waiting = "ContainerCreating"
        self.waiting_msg = None
        self.ready = False
        self.ok_streak = 0
        self.fail_streak = 0
        self.next_probe = 0.0
        self.live_fail = 0
        self.cg_procs = None
        self.cg_info = {}
        self.oom_before = 0
        self.done = False  # exited for good (restartPolicy)
        self.term = None  # current terminated state when done
        self.log_path = None


class PodRun:
    def __init__(self, ns, name, uid, ip):
        self.ns = ns
        self.name = name
        self.uid = uid
        self.ip = ip
        self.containers = []
        self.start_time = now_ts()
        self.stopping = False
        self.sa_dir = None  # the ServiceAccount volume's files, when mounted
        self.sa_token = None  # its token, valid while the pod exists


class Kubelet(Controller):
    name = "kubelet"
    watches = (POD.key,)

    def __init__(self, api, stop, images, args, auth=None):
        """auth issues and revokes tokens (add_token, revoke) and knows the API server's port
        and CA (port, dir): with it, pods get a ServiceAccount token and the KUBERNETES_SERVICE_*
        variables, as in a cluster."""
        Controller.__init__(self, api, stop)
        self.auth = auth
        self.images = images or {}
        self.args = args
        self.dir = args.dir
        self.logdir = os.path.join(args.dir, "pods")
        os.makedirs(self.logdir, exist_ok=True)
        self.prefix = args.pod_net
        self.runs = {}  # (ns, name) -> PodRun
        self.lock = threading.RLock()
        self.cg = Cgroups(disabled=getattr(args, "no_cgroups", False))
        self.apps_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "apps")
        self.sandbox = Sandbox(args.dir, log)
        self.resize_cfg = None  # resize.Config: node capacity for resize admission
        # metrics-server's --metric-resolution: how often pods are scraped for PodMetrics.
        self.metrics_window = max(0.5, float(getattr(args, "metrics_window", 15.0) or 15.0))
        if self.cg.mode is None:
            log("cgroups unavailable, pods run without limits: %s" % self.cg.reason)
        else:
            log("pod cgroups (%s) under %s" % (self.cg.mode, ", ".join(self.cg.bases.values())))

    def owns(self, pod):
        m = pod["metadata"]
        with self.lock:
            return (m.get("namespace"), m["name"]) in self.runs or \
                ((pod.get("spec") or {}).get("nodeName") == NODE and
                 (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))

    # --- the loop -------------------------------------------------------------------------------

    def timeout(self):
        # Woken at the next scrape too, so a PodMetrics window ends where it is due.
        now = time.time()
        scrape = (math.floor(now / self.metrics_window) + 1) * self.metrics_window
        return min(0.25, max(0.01, scrape - now + 0.005))

    def sync(self):
        entries, _ = self.store.entries(POD.key)
        seen = set()
        for e in entries:
            p = e.obj
            m = p["metadata"]
            key = (m["namespace"], m["name"])
            seen.add(key)
            run = self.runs.get(key)
            if run is not None and run.uid != m.get("uid"):
                self._stop_async(run, 0, remove=False)
                run = None
            if m.get("deletionTimestamp"):
                if run is not None and not run.stopping:
                    grace = min(float(m.get("deletionGracePeriodSeconds", 30)),
                                self.args.max_grace)
                    self._stop_async(run, grace, remove=True)
                elif run is None:
                    try:
                        self.api.force_remove(POD, key[0], key[1])
                    except ApiError:
                        pass
                continue
            if run is None:
                if (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                    continue
                if (p.get("spec") or {}).get("nodeName") not in (None, "", NODE):
                    continue  # bound to a seeded node (a DaemonSet's pod): not this kubelet's
                if self._held(p):
                    self._unschedulable(p)
                    continue
                run = self._admit(p)
                if run is None:
                    continue
            if not run.stopping:
                self._tick(p, run)
        with self.lock:
            gone = [k for k in self.runs if k not in seen]
        for k in gone:
            run = self.runs.get(k)
            if run and not run.stopping:
                self._stop_async(run, 0, remove=False)

    def _held(self, p):
        """A pod created while its Deployment carried the stuck annotation stays Pending as
        long as the annotation is there."""
        m = p["metadata"]
        if (m.get("annotations") or {}).get(UNSCHEDULABLE_ANNOTATION) != "true":
            return False
        for ref in m.get("ownerReferences") or []:
            rs = self.store.get(RS.key, m["namespace"], ref.get("name")) \
                if ref.get("kind") == "ReplicaSet" else None
            for r2 in ((rs or {}).get("metadata") or {}).get("ownerReferences") or []:
                d = self.store.get(DEPLOY.key, m["namespace"], r2.get("name"))
                if d and (d["metadata"].get("annotations") or {}).get(
                        STUCK_ANNOTATION) == "true":
                    return True
        return False

    def _unschedulable(self, p):
        st = {"phase": "Pending", "qosClass": (p.get("status") or {}).get("qosClass",
                                                                           "Burstable"),
              "conditions": [{"type": "PodScheduled", "status": "False",
                              "lastProbeTime": None,
                              "lastTransitionTime": ((p.get("status") or {}).get(
                                  "conditions") or [{}])[0].get("lastTransitionTime")
                              or now_ts(),
                              "reason": "Unschedulable",
                              "message": "0/1 nodes are available: the rollout is held "
                                         "(fake.sizeup.dev/stuck)."}]}
        self._write_status(p, st)

    def _alloc_ip(self, ports):
        used = {r.ip for r in self.runs.values()}
        for x in range(2, 255):
            ip = "%s.%d" % (self.prefix, x)
            if ip in used:
                continue
            free = True
            for port in ports or []:
                s = socket.socket()
                try:
                    s.bind((ip, port))
                except OSError:
                    free = False
                finally:
                    s.close()
            if free:
                return ip
        return None

    def _admit(self, p):
        m = p["metadata"]
        spec = p.get("spec") or {}
        ports = [pt.get("containerPort") for c in spec.get("containers") or []
                 for pt in c.get("ports") or [] if pt.get("containerPort")]
        with self.lock:
            ip = self._alloc_ip(ports)
            if ip is None:
                log("no free pod address for %s/%s" % (m["namespace"], m["name"]))
                return None
            run = PodRun(m["namespace"], m["name"], m.get("uid"), ip)
            for c in spec.get("containers") or []:
                run.containers.append(ContainerRun(c))
            self.runs[(run.ns, run.name)] = run
        self._sa_volume(p, run)
        # Bind the pod to the node, as the scheduler would.
        if spec.get("nodeName") != NODE:
            with self.store.lock:
                cur = self.store.get(POD.key, run.ns, run.name)
                if cur is not None:
                    np = jcopy(cur)
                    np["spec"]["nodeName"] = NODE
                    self.api.update(POD, run.ns, run.name, np, check_rv=False)
        return run

    def _sa_volume(self, p, run):
        """The kube-api-access volume a kubelet projects into every pod whose ServiceAccount
        token is automounted (the pod's automountServiceAccountToken, else its
        ServiceAccount's, else yes): a token that authenticates as the pod's ServiceAccount
        while the pod exists, the cluster's CA and the namespace."""
        if self.auth is None:
            return
        spec = p.get("spec") or {}
        sa = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
        auto = spec.get("automountServiceAccountToken")
        if auto is None:
            auto = (self.store.get(SA.key, run.ns, sa) or {}).get(
                "automountServiceAccountToken", True)
        if auto is False:
            return
        with open(os.path.join(self.auth.dir, "ca.crt")) as f:
            ca = f.read()
        token = self.auth.add_token("system:serviceaccount:%s:%s" % (run.ns, sa))
        run.sa_dir = self.sandbox.project_sa(run.uid, token, ca, run.ns)
        if run.sa_dir is None:
            self.auth.revoke(token)
        else:
            run.sa_token = token

    def _release(self, run):
        """Undoes _sa_volume once the pod's processes are gone: a bound token dies with its
        pod."""
        if run.sa_token is not None:
            self.auth.revoke(run.sa_token)
            run.sa_token = None
        if run.uid:
            self.sandbox.remove(run.uid)

    # --- containers ---------------------------------------------------------------------------

    def _env(self, p, run, c):
        env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "PYTHONPATH")
               if k in os.environ}
        if self.auth is not None:
            # The `kubernetes` Service's variables, which every pod gets (its own env wins);
            # the fake's API server is 127.0.0.1:port, the address its certificate names.
            host, port = "127.0.0.1", str(self.auth.port)
            env.update({"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port,
                        "KUBERNETES_SERVICE_PORT_HTTPS": port,
                        "KUBERNETES_PORT": "tcp://%s:%s" % (host, port)})
        m = p["metadata"]
        ns = m["namespace"]
        lim = (c.get("resources") or {}).get("limits") or {}

        def field(path):
            vals = {"metadata.name": m["name"], "metadata.namespace": ns,
                    "metadata.uid": m.get("uid", ""), "status.podIP": run.ip,
                    "status.hostIP": "127.0.0.1", "spec.nodeName": NODE,
                    "spec.serviceAccountName": (p.get("spec") or {}).get(
                        "serviceAccountName", "default")}
            mm = re.match(r"metadata\.(labels|annotations)\['(.*)'\]$", path)
            if mm:
                return (m.get(mm.group(1)) or {}).get(mm.group(2), "")
            return vals.get(path, "")

        for ef in c.get("envFrom") or []:
            ref = ef.get("configMapRef") or {}
            cm = self.store.get(CM.key, ns, ref.get("name")) if ref else None
            for k, v in ((cm or {}).get("data") or {}).items():
                env[(ef.get("prefix") or "") + k] = v
        for e in c.get("env") or []:
            if "value" in e:
                env[e["name"]] = expand_env(e.get("value") or "", env)
            elif "valueFrom" in e:
                vf = e["valueFrom"]
                if "configMapKeyRef" in vf:
                    r = vf["configMapKeyRef"]
                    cm = self.store.get(CM.key, ns, r.get("name"))
                    if cm is not None and r.get("key") in (cm.get("data") or {}):
                        env[e["name"]] = cm["data"][r["key"]]
                elif "fieldRef" in vf:
                    env[e["name"]] = field(vf["fieldRef"].get("fieldPath", ""))
                elif "resourceFieldRef" in vf:
                    r = vf["resourceFieldRef"].get("resource", "")
                    if r == "limits.cpu":
                        ms = parse_cpu_millis(lim.get("cpu"))
                        env[e["name"]] = str(max(1, -(-ms // 1000)) if ms else os.cpu_count())
                    elif r == "limits.memory":
                        env[e["name"]] = str(parse_bytes(lim.get("memory")) or 0)
            else:
                env[e["name"]] = ""
        ports = [pt.get("containerPort") for pt in c.get("ports") or []]
        env.setdefault("PORT", str(ports[0]) if ports else "8080")
        env["POD_IP"] = run.ip
        env["POD_NAME"] = m["name"]
        env["POD_NAMESPACE"] = ns
        env["HOSTNAME"] = m["name"]
        env["FAKEAPI_APPS"] = self.apps_dir
        env["FAKEAPI_DIR"] = self.dir
        return env

    def _start(self, p, run, cr):
        c = cr.spec
        entry = image_entry(self.images, c.get("image", ""))
        if entry is None:
            cr.waiting = "ErrImagePull"
            cr.waiting_msg = 'image "%s" is not in the fake\'s image map' % c.get("image")
            cr.next_start = time.time() + 5
            return
        env = self._env(p, run, c)
        for k, v in entry["env"].items():
            # Like an image's ENV: the container's own env wins.
            if k not in env:
                env[k] = expand_env(str(v), env)
        argv = container_argv(entry, c, env)
        lim = (c.get("resources") or {}).get("limits") or {}
        try:
            cpu = parse_cpu_millis(lim.get("cpu"))
            mem = parse_bytes(lim.get("memory"))
        except ValueError as e:
            cr.waiting = "CreateContainerConfigError"
            cr.waiting_msg = str(e)
            return
        if cr.cg_procs is None and not cr.cg_info:
            cr.cg_procs, cr.cg_info = self.cg.create(
                "%s_%s_%s" % (run.ns, run.name, cr.name), cpu, mem)
        cr.oom_before = self.cg.oom_kills(cr.cg_info)
        self.cg.reset_peak(cr.cg_info)
        cr.log_path = os.path.join(self.logdir, "%s_%s_%s.log" % (run.ns, run.name, cr.name))
        logf = open(cr.log_path, "ab")
        if cr.cg_info.get("unlimited"):
            logf.write(("fakeapi: running without cgroup limits: %s\n"
                        % cr.cg_info["unlimited"]).encode())
            logf.flush()
        wrapper = self.sandbox.command(argv, env, cr.cg_procs, run.sa_dir, run.ip)
        try:
            cr.proc = subprocess.Popen(wrapper, env=env, stdin=subprocess.DEVNULL,
                                       stdout=logf, stderr=subprocess.STDOUT,
                                       start_new_session=True,
                                       cwd=expand_env(c.get("workingDir") or "", env) or None)
        except OSError as e:
            cr.waiting = "RunContainerError"
            cr.waiting_msg = str(e)
            cr.next_start = time.time() + 5
            return
        finally:
            logf.close()
        cr.started_at = now_ts()
        cr.waiting = None
        cr.waiting_msg = None
        cr.ready = False
        cr.ok_streak = cr.fail_streak = 0
        rp = c.get("readinessProbe") or {}
        cr.next_probe = time.time() + float(rp.get("initialDelaySeconds", 0))
        cr.live_fail = 0
        cr.live_next = time.time() + float((c.get("livenessProbe") or {}).get(
            "initialDelaySeconds", 0))

    def _tick(self, p, run):
        now = time.time()
        policy = (p.get("spec") or {}).get("restartPolicy", "Always")
        if self.resize_cfg is not None:
            resize.sync(self, p, run)
        for cr in run.containers:
            if cr.done:
                continue
            if cr.proc is None:
                if now >= cr.next_start:
                    self._start(p, run, cr)
                continue
            rc = cr.proc.poll()
            if rc is not None:
                self._exited(p, run, cr, rc, policy)
                continue
            self._probe(run, cr, now)
            self._sample(cr, now)
        self._report(p, run)

    def _exited(self, p, run, cr, rc, policy):
        code = 128 - rc if rc < 0 else rc
        if self.cg.oom_kills(cr.cg_info) > cr.oom_before or \
                (rc == -signal.SIGKILL and self.cg.near_limit(cr.cg_info)):
            reason, code = "OOMKilled", 137
        elif rc == 126 and (cr.cg_procs or run.sa_dir):
            reason = "StartError"
        else:
            reason = "Completed" if code == 0 else "Error"
        term = {"exitCode": code, "reason": reason, "startedAt": cr.started_at,
                "finishedAt": now_ts(), "containerID": "fake://%s" % cr.proc.pid}
        cr.proc = None
        cr.ready = False
        if policy == "Always" or (policy == "OnFailure" and code != 0):
            cr.last_term = term
            delay = min(self.args.restart_backoff * (2 ** cr.restarts),
                        self.args.restart_backoff * 30)
            cr.restarts += 1
            cr.next_start = time.time() + delay
            cr.waiting = "CrashLoopBackOff"
            cr.waiting_msg = "back-off %ds restarting failed container=%s pod=%s" % (
                delay, cr.name, run.name)
            self._event(p, "Warning", "BackOff", "Back-off restarting failed container %s in "
                        "pod %s (%s)" % (cr.name, run.name, reason))
        else:
            cr.done = True
            cr.term = term

    def _probe(self, run, cr, now):
        c = cr.spec
        rp = c.get("readinessProbe")
        if now < cr.next_probe:
            return
        if rp:
            period = min(float(rp.get("periodSeconds", 10)), 1.0) if not cr.ready else \
                float(rp.get("periodSeconds", 10))
            ok = self._check(run, c, rp)
            cr.next_probe = now + max(0.2, period)
            if ok:
                cr.ok_streak += 1
                cr.fail_streak = 0
                if cr.ok_streak >= int(rp.get("successThreshold", 1)):
                    cr.ready = True
            else:
                cr.fail_streak += 1
                cr.ok_streak = 0
                if cr.fail_streak >= int(rp.get("failureThreshold", 3)) or not cr.ready:
                    cr.ready = False
        else:
            ports = [pt.get("containerPort") for pt in c.get("ports") or []]
            cr.next_probe = now + 0.5
            if ports:
                cr.ready = cr.ready or self._check(run, c, {"tcpSocket": {"port": ports[0]}})
            else:
                cr.ready = True
        lp = c.get("livenessProbe")
        if lp and cr.proc is not None and now >= getattr(cr, "live_next", 0):
            cr.live_next = now + float(lp.get("periodSeconds", 10))
            if self._check(run, c, lp):
                cr.live_fail = 0
            else:
                cr.live_fail += 1
                if cr.live_fail >= int(lp.get("failureThreshold", 3)):
                    _killpg(cr.proc, signal.SIGKILL)

    def _check(self, run, c, probe):
        timeout = float(probe.get("timeoutSeconds", 1))

        def port_of(v):
            if isinstance(v, int):
                return v
            for pt in c.get("ports") or []:
                if pt.get("name") == v:
                    return pt.get("containerPort")
            try:
                return int(v)
            except (TypeError, ValueError):
                return None
        try:
            if "httpGet" in probe:
                g = probe["httpGet"]
                port = port_of(g.get("port"))
                host = g.get("host") or run.ip
                if g.get("scheme", "HTTP") == "HTTPS":
                    conn = http.client.HTTPSConnection(
                        host, port, timeout=timeout,
                        context=ssl._create_unverified_context())
                else:
                    conn = http.client.HTTPConnection(host, port, timeout=timeout)
                try:
                    hdrs = {h["name"]: h["value"] for h in g.get("httpHeaders") or []}
                    conn.request("GET", g.get("path", "/"), headers=hdrs)
                    return 200 <= conn.getresponse().status < 400
                finally:
                    conn.close()
            if "tcpSocket" in probe:
                port = port_of(probe["tcpSocket"].get("port"))
                with socket.create_connection((probe["tcpSocket"].get("host") or run.ip, port),
                                              timeout=timeout):
                    return True
            if "exec" in probe:
                r = subprocess.run(probe["exec"].get("command") or ["false"], timeout=timeout,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                return r.returncode == 0
        except (OSError, http.client.HTTPException, subprocess.TimeoutExpired):
            return False
        return True

    # --- status ---------------------------------------------------------------------------------

    def _report(self, p, run):
        old = p.get("status") or {}
        oldc = {c.get("type"): c for c in old.get("conditions") or []}
        now = now_ts()
        statuses = []
        for cr in run.containers:
            cs = {"name": cr.name, "image": cr.spec.get("image", ""),
                  "imageID": "fake://" + cr.spec.get("image", ""),
                  "ready": cr.ready, "restartCount": cr.restarts,
                  "started": cr.proc is not None}
            if cr.proc is not None:
                cs["containerID"] = "fake://%d" % cr.proc.pid
                cs["state"] = {"running": {"startedAt": cr.started_at}}
            elif cr.done:
                cs["state"] = {"terminated": cr.term}
            else:
                w = {"reason": cr.waiting or "ContainerCreating"}
                if cr.waiting_msg:
                    w["message"] = cr.waiting_msg
                cs["state"] = {"waiting": w}
            cs["lastState"] = {"terminated": cr.last_term} if cr.last_term else {}
            statuses.append(cs)
        all_ready = all(cr.ready for cr in run.containers)
        any_running = any(cr.proc is not None for cr in run.containers)
        if all(cr.done for cr in run.containers):
            phase = "Succeeded" if all(cr.term["exitCode"] == 0 for cr in run.containers) \
                else "Failed"
        elif any_running or any(cr.restarts for cr in run.containers):
            phase = "Running"
        else:
            phase = "Pending"

        def cond(t, ok):
            s = "True" if ok else "False"
            prev = oldc.get(t)
            c = {"type": t, "status": s, "lastProbeTime": None,
                 "lastTransitionTime": prev["lastTransitionTime"] if prev and
                 prev.get("status") == s else now}
            if not ok and t in ("Ready", "ContainersReady"):
                c["reason"] = "ContainersNotReady"
                c["message"] = "containers with unready status: [%s]" % " ".join(
                    cr.name for cr in run.containers if not cr.ready)
            return c

        st = {"phase": phase,
              "conditions": [cond("PodReadyToStartContainers", True),
                             cond("Initialized", True), cond("Ready", all_ready),
                             cond("ContainersReady", all_ready), cond("PodScheduled", True)],
              "hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}],
              "podIP": run.ip, "podIPs": [{"ip": run.ip}], "startTime": run.start_time,
              "containerStatuses": statuses, "qosClass": old.get("qosClass", "Burstable")}
        if self.resize_cfg is not None:
            resize.report(run, st, old.get("conditions"), now)
        unlimited = [cr.cg_info["unlimited"] for cr in run.containers
                     if cr.cg_info.get("unlimited")]
        if unlimited:
            st["message"] = "fake kubelet: running without cgroup limits: " + unlimited[0]
        self._write_status(p, st)

    def _write_status(self, p, st):
        if (p.get("status") or {}) == st:
            return
        m = p["metadata"]
        with self.store.lock:
            cur = self.store.get(POD.key, m["namespace"], m["name"])
            if cur is None or cur["metadata"].get("uid") != m.get("uid"):
                return
            try:
                self.api.write_status(POD, m["namespace"], m["name"], st)
            except ApiError:
                pass

    def _event(self, p, etype, reason, message):
        emit_event(self.api, p, "Pod", "v1", etype, reason, message, "kubelet")

    # --- stopping -------------------------------------------------------------------------------

    def _stop_async(self, run, grace, remove):
        run.stopping = True
        threading.Thread(target=self._stop, args=(run, grace, remove), daemon=True).start()

    def _stop(self, run, grace, remove):
        procs = [cr.proc for cr in run.containers if cr.proc is not None]
        for pr in procs:
            _killpg(pr, signal.SIGTERM)
        deadline = time.time() + grace
        while time.time() < deadline and any(pr.poll() is None for pr in procs):
            time.sleep(0.05)
        for pr in procs:
            _killpg(pr, signal.SIGKILL)
            try:
                pr.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for cr in run.containers:
            self.cg.remove(cr.cg_info)
        self._release(run)
        with self.lock:
            if self.runs.get((run.ns, run.name)) is run:
                del self.runs[(run.ns, run.name)]
        if remove:
            with self.store.lock:
                cur = self.store.get(POD.key, run.ns, run.name)
                if cur is not None and cur["metadata"].get("uid") == run.uid:
                    self.api.force_remove(POD, run.ns, run.name)

    def shutdown(self):
        # The loop may be starting a container right now: let it finish its pass first.
        if getattr(self, "thread", None) is not None:
            self.thread.join(timeout=10)
        with self.lock:
            runs = list(self.runs.values())
        for run in runs:
            for cr in run.containers:
                if cr.proc is not None:
                    _killpg(cr.proc, signal.SIGTERM)
        deadline = time.time() + 2
        for run in runs:
            for cr in run.containers:
                if cr.proc is not None:
                    try:
                        cr.proc.wait(timeout=max(0.01, deadline - time.time()))
                    except subprocess.TimeoutExpired:
                        pass
                    _killpg(cr.proc, signal.SIGKILL)
                    try:
                        cr.proc.wait(timeout=2)
                    except subprocess.TimeoutExpired:
                        pass
                self.cg.remove(cr.cg_info)
            self._release(run)
        self.cg.shutdown()

    # --- usage (metrics.k8s.io) ------------------------------------------------------------------

    def _pids(self, cr):
        for key in ("memoryDir", "cpuDir"):
            d = cr.cg_info.get(key)
            if d:
                try:
                    with open(os.path.join(d, "cgroup.procs")) as f:
                        return [int(x) for x in f.read().split()]
                except OSError:
                    pass
        return [cr.proc.pid] if cr.proc else []

    def _sample(self, cr, now):
        """A scrape, as metrics-server makes one every --metric-resolution: all pods together at
        multiples of the window, the cgroup's cumulative CPU time and working set. Only the last
        two scrapes are kept: a PodMetrics is the rate between them, so its window is always a
        whole resolution. A new container waits for the next tick: a scrape off the grid (as
        this fake once took at container start) gave a first window shorter than the
        resolution, from which a client reckons too short a hold for its CPU figures."""
        window = self.metrics_window
        first = getattr(cr, "next_sample", 0) == 0
        if getattr(cr, "next_sample", 0) > now:
            return
        cr.next_sample = (math.floor(now / window) + 1) * window
        if first:
            return
        cpu = self.cg.cpu_seconds(cr.cg_info)
        rss = 0
        if cpu is None:
            tick = os.sysconf("SC_CLK_TCK")
            cpu = 0.0
            for pid in self._pids(cr):
                try:
                    with open("/proc/%d/stat" % pid) as f:
                        parts = f.read().rsplit(")", 1)[1].split()
                    cpu += sum(int(x) for x in parts[11:15]) / tick
                except (OSError, ValueError, IndexError):
                    pass
        mem = self.cg.working_set(cr.cg_info)
        if mem is None:
            for pid in self._pids(cr):
                try:
                    with open("/proc/%d/statm" % pid) as f:
                        rss += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
                except (OSError, ValueError, IndexError):
                    pass
        cr.samples = (list(getattr(cr, "samples", None) or [])[-1:]) + \
            [(now, cpu, mem if mem is not None else rss)]

    def metrics(self, ns, name):
        """PodMetrics for the pods the kubelet runs, as metrics-server serves them: CPU as the
        rate between the last two scrapes, `timestamp` the last scrape's time (whole seconds,
        as metav1.Time marshals it) and `window` the time between the two; memory the working
        set at the last scrape. A container scraped once has no metrics yet."""
        out = []
        with self.lock:
            runs = [r for r in self.runs.values()
                    if (ns is None or r.ns == ns) and (name is None or r.name == name)]
        for run in runs:
            cs = []
            t0 = t1 = None
            for cr in run.containers:
                smp = list(getattr(cr, "samples", []) or [])
                if len(smp) < 2:
                    continue
                (t0, c0, _), (t1, c1, m1) = smp[0], smp[-1]
                rate = max(0.0, (c1 - c0) / (t1 - t0)) if t1 > t0 else 0.0
                cs.append({"name": cr.name, "usage": {"cpu": "%dn" % int(rate * 1e9),
                                                      "memory": "%dKi" % (m1 // 1024)}})
            if not cs:
                continue
            ts = datetime.datetime.fromtimestamp(t1, datetime.timezone.utc)
            out.append({"metadata": {"name": run.name, "namespace": run.ns,
                                     "creationTimestamp": now_ts()},
                        "timestamp": ts.strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "window": "%.3fs" % (t1 - t0), "containers": cs})
        return out

    # --- inspection -----------------------------------------------------------------------------

    def describe(self):
        out = []
        with self.lock:
            for run in self.runs.values():
                out.append({"namespace": run.ns, "name": run.name, "ip": run.ip,
                            "stopping": run.stopping, "serviceAccountDir": run.sa_dir,
                            "containers": [{"name": cr.name,
                                            "pid": cr.proc.pid if cr.proc else None,
                                            "restarts": cr.restarts, "ready": cr.ready,
                                            "cgroup": {k: v for k, v in cr.cg_info.items()
                                                       if k != "dirs"},
                                            "log": cr.log_path}
                                           for cr in run.containers]})
        return {"cgroups": self.cg.mode or "none", "cgroupReason": self.cg.reason,
                "serviceAccountVolume": self.sandbox.mount_reason or "mounted",
                "podNetwork": self.sandbox.podnet_reason or "wildcard binds confined",
                "pods": out}

    def logs(self, ns, name, query):
        pod = self.store.get(POD.key, ns, name)
        if pod is None:
            raise ApiError(404, "NotFound", 'pods "%s" not found' % name,
                           {"name": name, "kind": "pods"})
        cname = query.get("container") or ((pod.get("spec") or {}).get("containers")
                                           or [{}])[0].get("name")
        path = os.path.join(self.logdir, "%s_%s_%s.log" % (ns, name, cname))
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            data = b""
        if query.get("tailLines"):
            n = int(query["tailLines"])
            data = b"\n".join(data.rstrip(b"\n").split(b"\n")[-n:]) + b"\n" if n > 0 else b""
        return data


def _killpg(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# --- Services: Endpoints and a loopback proxy on each ClusterIP --------------------------------

class ServiceProxy(Controller):
    """Keeps an Endpoints object per Service (ready pods matching its selector) and listens on
    each ClusterIP:port, forwarding TCP connections round-robin to the ready pods, so a URL
    through a Service works as it would in a cluster (all on 127.0.0.0/8)."""

    name = "service-proxy"
    watches = (POD.key, SVC.key)
    period = 1.0

    def __init__(self, api, stop):
        Controller.__init__(self, api, stop)
        self.listeners = {}  # (ip, port) -> (socket, service key, port spec)
        self.backends = {}  # (ns, svc, port name or number) -> [(ip, port)]
        self.rr = 0
        self.lock = threading.Lock()

    def finish(self):
        for sock, _, _ in list(self.listeners.values()):
            sock.close()

    def sync(self):
        svcs, _ = self.store.entries(SVC.key)
        want = {}
        for e in svcs:
            s = e.obj
            m, spec = s["metadata"], s.get("spec") or {}
            sel = spec.get("selector")
            if not sel:
                continue
            ns = m["namespace"]
            pods, _ = self.store.entries(POD.key, ns)
            ready, notready = [], []
            for pe in pods:
                p = pe.obj
                if p["metadata"].get("deletionTimestamp") or not (p.get("status") or {}).get(
                        "podIP"):
                    continue
                labels = p["metadata"].get("labels") or {}
                if any(labels.get(k) != v for k, v in sel.items()):
                    continue
                (ready if _pod_ready(p) else notready).append(p)
            subset_ports = []
            for sp in spec.get("ports") or []:
                tp = sp.get("targetPort", sp.get("port"))
                addrs = []
                for p in ready:
                    port = _container_port(p, tp)
                    if port:
                        addrs.append((p["status"]["podIP"], port))
                with self.lock:
                    self.backends[(ns, m["name"], sp.get("port"))] = addrs
                subset_ports.append({"name": sp.get("name"), "port": addrs[0][1] if addrs else
                                     (tp if isinstance(tp, int) else sp.get("port")),
                                     "protocol": sp.get("protocol", "TCP")})
                ip = spec.get("clusterIP")
                if ip and ip.startswith("127.") and sp.get("protocol", "TCP") == "TCP":
                    want[(ip, sp.get("port"))] = (ns, m["name"], sp.get("port"))
            self._endpoints(ns, m["name"], ready, notready, subset_ports)
        self._drop_orphan_endpoints({(e.obj["metadata"]["namespace"], e.obj["metadata"]["name"])
                                     for e in svcs})
        for k in list(self.listeners):
            if k not in want:
                self.listeners.pop(k)[0].close()
        for k, target in want.items():
            if k not in self.listeners:
                self._listen(k, target)

    def _drop_orphan_endpoints(self, services):
        """The endpoints controller deletes the Endpoints of a Service that is gone (except the
        ones leader election uses, which have no Service)."""
        eps, _ = self.store.entries(EP.key)
        for e in eps:
            m = e.obj["metadata"]
            if (m["namespace"], m["name"]) in services or \
                    LEADER_ANNOTATION in (m.get("annotations") or {}):
                continue
            try:
                self.api.delete(EP, m["namespace"], m["name"])
            except ApiError:
                pass

    def _endpoints(self, ns, name, ready, notready, ports):
        def addr(p):
            return {"ip": p["status"]["podIP"], "nodeName": NODE,
                    "targetRef": {"kind": "Pod", "namespace": ns, "name": p["metadata"]["name"],
                                  "uid": p["metadata"].get("uid")}}
        subset = {}
        if ready:
            subset["addresses"] = [addr(p) for p in ready]
        if notready:
            subset["notReadyAddresses"] = [addr(p) for p in notready]
        for pt in ports:
            if pt.get("name") is None:
                pt.pop("name")
        body = {"metadata": {"name": name, "namespace": ns},
                "subsets": [dict(subset, ports=ports)] if subset else []}
        with self.store.lock:
            cur = self.store.get(EP.key, ns, name)
            try:
                if cur is None:
                    self.api.create(EP, ns, body)
                elif cur.get("subsets") != body["subsets"]:
                    new = jcopy(cur)
                    new["subsets"] = body["subsets"]
                    self.api.update(EP, ns, name, new, check_rv=False)
            except ApiError:
                pass

    def _listen(self, key, target):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(key)
            s.listen(128)
        except OSError as e:
            log("service %s/%s: cannot listen on %s:%d: %s" % (target[0], target[1], key[0],
                                                                 key[1], e))
            s.close()
            return
        self.listeners[key] = (s, target, None)
        threading.Thread(target=self._accept, args=(s, target), daemon=True).start()

    def _accept(self, s, target):
        while not self.stop.is_set():
            try:
                c, _ = s.accept()
            except OSError:
                return
            with self.lock:
                addrs = list(self.backends.get(target) or [])
                self.rr += 1
                rr = self.rr
            if not addrs:
                c.close()
                continue
            threading.Thread(target=_pump, args=(c, addrs[rr % len(addrs)]),
                             daemon=True).start()


def _container_port(p, tp):
    if isinstance(tp, int):
        return tp
    for c in (p.get("spec") or {}).get("containers") or []:
        for pt in c.get("ports") or []:
            if pt.get("name") == tp:
                return pt.get("containerPort")
    try:
        return int(tp)
    except (TypeError, ValueError):
        return None


def _pump(client, backend):
    import selectors
    try:
        up = socket.create_connection(backend, timeout=5)
    except OSError:
        client.close()
        return
    up.settimeout(None)
    for s in (client, up):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sel = selectors.DefaultSelector()
    sel.register(client, selectors.EVENT_READ, up)
    sel.register(up, selectors.EVENT_READ, client)
    open_ends = 2
    try:
        while open_ends:
            for k, _ in sel.select(timeout=300):
                try:
                    data = k.fileobj.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(k.fileobj)
                    try:
                        k.data.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    open_ends -= 1
                    continue
                k.data.sendall(data)
    except OSError:
        pass
    finally:
        sel.close()
        client.close()
        up.close()
