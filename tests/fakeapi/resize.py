"""In-place pod resize, as Kubernetes 1.35 (GA) does it, for the fake cluster.

The API side: `PATCH` / `PUT /api/v1/namespaces/NS/pods/NAME/resize` takes a whole pod (or a
patch of one) but keeps only the containers' `resources` (and `resizePolicy`, which must not
change): every other change in the body is dropped, as the real resize strategy drops it. It
then validates like the real server: only cpu and memory may change, requests and limits
cannot be removed, a request cannot pass its limit, and the pod's QoS class (`status.qosClass`,
computed when the pod was created) cannot change. A server emulating an older release (the
`forbidMemoryDecrease` switch, 1.33's rule) also refuses a memory-limit decrease unless the
container's memory resizePolicy is `RestartContainer`. Resources cannot change through a plain
pod update.

The kubelet side (`sync`, called on every kubelet pass for a running pod): a desired change
that does not fit the node at all is `PodResizePending` / `Infeasible`; one that does not fit
beside the other pods is `PodResizePending` / `Deferred`; otherwise it is allocated
(`allocatedResources`), `PodResizeInProgress` is set, and on the next pass the container's
cgroup limits are rewritten on the running process (or, for a resource whose resizePolicy is
`RestartContainer`, the container is restarted with them). A memory limit below the
container's current usage is not applied: the resize stays in progress with reason `Error`
and a message, retried on every pass. Once applied, `containerStatuses[].resources` reports
the new values and the condition goes.
"""

import os
import re
import signal
import time

from resources import BY_PATH
from store import ApiError

POD = BY_PATH[("", "v1", "pods")]
KEYS = ("cpu", "memory")
# How long an accepted resize is shown in progress before the kubelet actuates it: a real
# kubelet takes at least one pod sync, and clients must be able to see the condition.
ACTUATE_DELAY = 0.3


class Config:
    """The server-wide resize settings (`--node-cpu`, `--node-memory`, and the older-server
    switch, also set at run time through POST /fake/config)."""

    def __init__(self, node_cpu_millis, node_memory_bytes):
        self.node_cpu_millis = node_cpu_millis
        self.node_memory_bytes = node_memory_bytes
        self.forbid_memory_decrease = False


# --- quantities ----------------------------------------------------------------------------------

_MEM = {"": 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "k": 10**3,
        "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "m": 0.001}


def qty(kind, v):
    """cpu in millicores or memory in bytes; None when absent, ValueError when malformed."""
    if v is None:
        return None
    s = str(v).strip()
    m = re.match(r"^([0-9]+(?:\.[0-9]*)?(?:[eE][0-9]+)?)([a-zA-Z]*)$", s)
    if not m or m.group(2) not in _MEM:
        raise ValueError("quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    n = float(m.group(1))
    if kind == "cpu":
        return int(round(n * (1 if m.group(2) == "m" else 1000 * _MEM[m.group(2)])))
    return int(n * _MEM[m.group(2)])


def norm(resources):
    """{"requests": {"cpu": millis, "memory": bytes}, "limits": {...}}, cpu/memory only."""
    out = {}
    for part in ("requests", "limits"):
        src = (resources or {}).get(part) or {}
        out[part] = {k: qty(k, src[k]) for k in KEYS if k in src}
    return out


def qos_class(spec):
    """The pod's QoS class from its containers, by the real rules: BestEffort when no
    container asks for or limits cpu or memory; Guaranteed when every container has cpu and
    memory limits and its requests (when set) equal them; Burstable otherwise."""
    cs = [c for c in (spec or {}).get("containers") or [] if isinstance(c, dict)]
    cs += [c for c in (spec or {}).get("initContainers") or [] if isinstance(c, dict)]
    any_set = False
    guaranteed = bool(cs)
    for c in cs:
        try:
            r = norm(c.get("resources"))
        except ValueError:
            return "Burstable"
        if r["requests"] or r["limits"]:
            any_set = True
        for k in KEYS:
            lim = r["limits"].get(k)
            req = r["requests"].get(k, lim)
            if lim is None or req != lim:
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _policy(c, key):
    for p in c.get("resizePolicy") or []:
        if p.get("resourceName") == key:
            return p.get("restartPolicy") or "NotRequired"
    return "NotRequired"


# --- the API side ----------------------------------------------------------------------------

def check_pod_update(old, new):
    """A plain pod update cannot change container resources: only /resize can."""
    oc = {c.get("name"): c.get("resources") for c in (old.get("spec") or {}).get(
        "containers") or []}
    for i, c in enumerate((new.get("spec") or {}).get("containers") or []):
        if c.get("name") in oc and (c.get("resources") or {}) != (oc[c.get("name")] or {}):
            from api import invalid
            raise invalid(POD, old["metadata"]["name"], [(
                "spec.containers[%d].resources" % i,
                "Forbidden: pod updates may not change container resources; use the resize "
                "subresource")])


def _validate(old, new, cfg):
    """The causes (field, message) that make a resize invalid."""
    causes = []
    ocs = (old.get("spec") or {}).get("containers") or []
    ncs = (new.get("spec") or {}).get("containers") or []
    if [c.get("name") for c in ocs] != [c.get("name") for c in ncs if isinstance(c, dict)]:
        return [("spec.containers", "Forbidden: containers may not be added, removed, "
                 "reordered or renamed by a resize")]
    for i, (oc, nc) in enumerate(zip(ocs, ncs)):
        path = "spec.containers[%d]" % i
        ores, nres = oc.get("resources") or {}, nc.get("resources") or {}
        for part in ("requests", "limits"):
            o, n = ores.get(part) or {}, nres.get(part) or {}
            for k in set(o) | set(n):
                if k not in KEYS and o.get(k) != n.get(k):
                    causes.append(("%s.resources.%s[%s]" % (path, part, k),
                                   "Forbidden: only cpu and memory resources are mutable"))
                elif k in o and k not in n:
                    causes.append(("%s.resources.%s[%s]" % (path, part, k),
                                   "Forbidden: resource %s cannot be removed" % part))
        try:
            on, nn = norm(ores), norm(nres)
        except ValueError as e:
            causes.append(("%s.resources" % path, "Invalid value: %s" % e))
            continue
        for k in KEYS:
            lim, req = nn["limits"].get(k), nn["requests"].get(k)
            if lim is not None and req is not None and req > lim:
                causes.append(("%s.resources.requests[%s]" % (path, k),
                               "Invalid value: %r: must be less than or equal to %s limit of %s"
                               % (nres["requests"][k], k, nres["limits"][k])))
        if (oc.get("resizePolicy") or []) != (nc.get("resizePolicy") or []):
            causes.append(("%s.resizePolicy" % path, "Forbidden: field is immutable"))
        olim, nlim = on["limits"].get("memory"), nn["limits"].get("memory")
        if cfg.forbid_memory_decrease and olim is not None and nlim is not None and \
                nlim < olim and _policy(oc, "memory") != "RestartContainer":
            causes.append(("%s.resources.limits[memory]" % path,
                           "Forbidden: memory limits cannot be decreased unless resizePolicy "
                           "is RestartContainer"))
    if not causes:
        was = (old.get("status") or {}).get("qosClass") or qos_class(old.get("spec"))
        now = qos_class(new.get("spec"))
        if now != was:
            causes.append(("spec", 'Invalid value: "%s": Pod QOS Class may not change as a '
                           "result of resizing" % now))
    return causes


def _keep_resources_only(old, new):
    """The old pod with only the containers' resources (and resizePolicy) taken from new, as
    the real resize strategy drops every other change."""
    from api import jcopy
    out = jcopy(old)
    by_name = {c.get("name"): c for c in (new.get("spec") or {}).get("containers") or []
               if isinstance(c, dict)}
    for c in out["spec"].get("containers") or []:
        nc = by_name.get(c.get("name"))
        if nc is None:
            continue
        c["resources"] = nc.get("resources") or {}
        if "resizePolicy" in nc:
            c["resizePolicy"] = nc["resizePolicy"]
        else:
            c.pop("resizePolicy", None)
    return out


def _apply(api, cfg, ns, name, old, new, dry):
    from api import full, invalid
    if len((new.get("spec") or {}).get("containers") or []) != \
            len((old.get("spec") or {}).get("containers") or []):
        raise invalid(POD, name, [("spec.containers", "Forbidden: containers may not be "
                                   "added or removed by a resize")])
    merged = _keep_resources_only(old, new)
    causes = _validate(old, merged, cfg)
    if causes:
        raise invalid(POD, name, causes)
    import admission  # admission -> controller -> ...: a late import keeps this module light
    admission.admit_resize(api, ns, old, merged)
    out = api.update(POD, ns, name, merged, "resize", dry, check_rv=False)
    return full(POD, out)


def patch(api, cfg, ns, name, ptype, body, dry):
    """PATCH pods/NAME/resize: the pod as stored after the resize (a full Pod)."""
    with api.store.lock:
        old, new = api.patched(POD, ns, name, ptype, body)
        return _apply(api, cfg, ns, name, old, new, dry)


def update(api, cfg, ns, name, obj, dry):
    """PUT pods/NAME/resize with a whole Pod."""
    from api import conflict, not_found
    if not isinstance(obj, dict):
        raise ApiError(400, "BadRequest", "the body of the request was not a JSON object")
    with api.store.lock:
        old = api.store.get(POD.key, ns, name)
        if old is None:
            raise not_found(POD, name)
        want = (obj.get("metadata") or {}).get("resourceVersion")
        if want and want != old["metadata"]["resourceVersion"]:
            raise conflict(POD, name)
        return _apply(api, cfg, ns, name, old, obj, dry)


# --- the kubelet side --------------------------------------------------------------------------

class PodState:
    """What the kubelet knows about one pod's resizes."""

    def __init__(self):
        self.pending = None  # (reason, message) while PodResizePending
        self.accepted_at = None  # set while a resize is allocated but not yet actuated
        self.error = None  # the message while PodResizeInProgress has reason Error


def _state(run):
    st = getattr(run, "resize", None)
    if st is None:
        st = run.resize = PodState()
    return st


def _init(cr):
    if not hasattr(cr, "allocated"):
        cr.allocated = cr.actual = (cr.spec.get("resources") or {})


def _requests(res):
    n = norm(res)
    return {k: n["requests"].get(k, n["limits"].get(k)) or 0 for k in KEYS}


def _fit(kubelet, run, desired):
    """None when the pod's desired requests fit the node, else (reason, message)."""
    cfg = kubelet.resize_cfg
    cap = {"cpu": cfg.node_cpu_millis, "memory": cfg.node_memory_bytes}
    want = {k: sum(_requests(r)[k] for r in desired.values()) for k in KEYS}
    for k in KEYS:
        if cap[k] and want[k] > cap[k]:
            return ("Infeasible", "Node didn't have enough capacity: %s, requested: %d, "
                    "capacity: %d" % (k, want[k], cap[k]))
    used = {k: 0 for k in KEYS}
    with kubelet.lock:
        others = [r for r in kubelet.runs.values() if r is not run and not r.stopping]
    for r in others:
        for cr in r.containers:
            _init(cr)
            for k in KEYS:
                used[k] += _requests(cr.allocated)[k]
    for k in KEYS:
        if cap[k] and want[k] + used[k] > cap[k]:
            return ("Deferred", "Node didn't have enough resource: %s, requested: %d, used: "
                    "%d, capacity: %d" % (k, want[k], used[k], cap[k]))
    return None


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _set_limits(cg, info, cpu_millis, mem_bytes):
    """Rewrites the container's cgroup limits in place (what UpdateContainerResources does)."""
    if not info.get("cpuDir"):
        return  # running unlimited: nothing to enforce, the pod says why
    if cg.mode == "v1":
        _write(os.path.join(info["cpuDir"], "cpu.cfs_quota_us"),
               str(max(1000, cpu_millis * 100)) if cpu_millis else "-1")
        if mem_bytes:
            try:
                _write(os.path.join(info["memoryDir"], "memory.memsw.limit_in_bytes"),
                       str(mem_bytes))
            except OSError:
                pass
            _write(os.path.join(info["memoryDir"], "memory.limit_in_bytes"), str(mem_bytes))
    else:
        _write(os.path.join(info["cpuDir"], "cpu.max"),
               "%d 100000" % max(1000, cpu_millis * 100) if cpu_millis else "max 100000")
        _write(os.path.join(info["memoryDir"], "memory.max"),
               str(mem_bytes) if mem_bytes else "max")
    info["cpuMillis"], info["memoryBytes"] = cpu_millis, mem_bytes


def _usage(cg, info):
    d = info.get("memoryDir")
    if not d:
        return None
    f = "memory.usage_in_bytes" if cg.mode == "v1" else "memory.current"
    try:
        with open(os.path.join(d, f)) as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return None


def _actuate(kubelet, run, cr):
    """Applies cr.allocated to the running container; returns an error message or None."""
    new, old = norm(cr.allocated), norm(cr.actual)
    cpu, mem = new["limits"].get("cpu"), new["limits"].get("memory")
    olim = old["limits"].get("memory")
    restart = any(_policy(cr.spec, k) == "RestartContainer" and
                  (new["limits"].get(k), new["requests"].get(k)) !=
                  (old["limits"].get(k), old["requests"].get(k)) for k in KEYS)
    if not restart and mem is not None and olim is not None and mem < olim:
        usage = _usage(kubelet.cg, cr.cg_info)
        if usage is not None and usage > mem:
            return ("attempting to set container %s memory limit (%d) below its current "
                    "usage (%d)" % (cr.name, mem, usage))
    try:
        _set_limits(kubelet.cg, cr.cg_info, cpu, mem)
    except OSError as e:
        return "failed to update the cgroup of container %s: %s" % (cr.name, e)
    cr.spec = dict(cr.spec, resources=cr.allocated)
    cr.actual = cr.allocated
    if restart and cr.proc is not None:
        # RestartContainer: stop the container; the kubelet's pass starts it again at once,
        # with the new limits, and counts the restart.
        try:
            os.killpg(cr.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            cr.proc.wait(timeout=5)
        except Exception:
            pass
        cr.proc = None
        cr.ready = False
        cr.restarts += 1
        cr.next_start = 0.0
        cr.waiting = "ContainerCreating"
    return None


def sync(kubelet, p, run):
    """One kubelet pass over pod p (running as run): admit, actuate, report."""
    st = _state(run)
    by_name = {c.get("name"): c for c in (p.get("spec") or {}).get("containers") or []}
    for cr in run.containers:
        _init(cr)
    desired = {cr.name: (by_name.get(cr.name) or {}).get("resources") or {}
               for cr in run.containers}
    try:
        changed = [cr for cr in run.containers if norm(desired[cr.name]) != norm(cr.allocated)]
    except ValueError:
        changed = []
    if changed:
        st.pending = _fit(kubelet, run, desired)
        if st.pending is None:
            for cr in changed:
                cr.allocated = desired[cr.name]
            st.accepted_at = time.time()
            st.error = None
    else:
        st.pending = None
    todo = [cr for cr in run.containers if norm(cr.allocated) != norm(cr.actual)]
    if todo and time.time() - (st.accepted_at or 0) >= ACTUATE_DELAY:
        errors = [e for e in (_actuate(kubelet, run, cr) for cr in todo) if e]
        st.error = "; ".join(errors) if errors else None
        todo = [cr for cr in run.containers if norm(cr.allocated) != norm(cr.actual)]
    if not todo:
        st.accepted_at = None
        st.error = None


def report(run, st, old_conditions, now):
    """Adds what the kubelet reports of resizes to the pod status st: each container's
    allocatedResources and resources, and the PodResizePending / PodResizeInProgress
    conditions while they hold."""
    rs = _state(run)
    for cr, cs in zip(run.containers, st.get("containerStatuses") or []):
        _init(cr)
        if cr.allocated.get("requests"):
            cs["allocatedResources"] = dict(cr.allocated["requests"])
        act = {k: dict(v) for k, v in cr.actual.items() if k in ("requests", "limits") and v}
        if act:
            cs["resources"] = act
    prev = {c.get("type"): c for c in old_conditions or []}

    def cond(ctype, reason, message):
        c = {"type": ctype, "status": "True", "lastProbeTime": None,
             "lastTransitionTime": prev[ctype]["lastTransitionTime"] if ctype in prev else now}
        if reason:
            c["reason"] = reason
        if message:
            c["message"] = message
        return c

    if rs.pending:
        st["conditions"].append(cond("PodResizePending", rs.pending[0], rs.pending[1]))
    if any(norm(cr.allocated) != norm(cr.actual) for cr in run.containers):
        st["conditions"].append(cond("PodResizeInProgress", "Error" if rs.error else None,
                                     rs.error))
