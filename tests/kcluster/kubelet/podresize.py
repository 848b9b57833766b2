"""In-place resize as the kubelet decides it (Kubernetes 1.35+, GA): the desired resources are
the containers' spec, the allocated ones what the kubelet accepted, the actual ones what the
cgroups hold.

- desired == allocated: nothing to decide (PodResizePending is cleared);
- the pod's desired requests exceed the node's allocatable: PodResizePending / Infeasible;
- they fit the node but not beside the other pods' allocated requests: PodResizePending /
  Deferred, decided again on every pass (so it is accepted once room is made);
- otherwise allocated = desired (allocatedResources), PodResizeInProgress is set, and the new
  limits are written to the cgroups (or, for a resource whose resizePolicy is
  RestartContainer, the container restarts with them); once actual == allocated the condition
  goes. A memory limit below the current usage is not applied: PodResizeInProgress / Error.
"""

import podspec

KEYS = ("cpu", "memory")


def norm(resources):
    """{"requests": {kind: n}, "limits": {kind: n}} in millicores and bytes, cpu/memory only.
    ValueError on a malformed quantity."""
    out = {}
    for part in ("requests", "limits"):
        src = (resources or {}).get(part) or {}
        out[part] = {k: podspec.qty(k, src[k]) for k in KEYS if k in src}
    return out


def requests(resources):
    """The requests the scheduler and the kubelet count: the request, else the limit, else 0."""
    n = norm(resources)
    return {k: n["requests"].get(k, n["limits"].get(k)) or 0 for k in KEYS}


def pod_requests(by_container):
    """The sum of requests over {container name: resources}."""
    tot = {k: 0 for k in KEYS}
    for r in by_container.values():
        for k, v in requests(r).items():
            tot[k] += v
    return tot


def decide(desired, allocatable, others):
    """None when the pod's desired resources ({container: resources}) can be allocated, else
    (reason, message): Infeasible when they exceed the node's allocatable ({kind: n}) on their
    own, Deferred when they do only with others (the other pods' allocated requests summed)."""
    want = pod_requests(desired)
    for k in KEYS:
        if allocatable.get(k) and want[k] > allocatable[k]:
            return ("Infeasible", "Node didn't have enough capacity: %s, requested: %d, "
                    "capacity: %d" % (k, want[k], allocatable[k]))
    for k in KEYS:
        if allocatable.get(k) and want[k] + others.get(k, 0) > allocatable[k]:
            return ("Deferred", "Node didn't have enough resource: %s, requested: %d, used: "
                    "%d, capacity: %d" % (k, want[k], others.get(k, 0), allocatable[k]))
    return None


def restart_policy(container, kind):
    for p in container.get("resizePolicy") or []:
        if p.get("resourceName") == kind:
            return p.get("restartPolicy") or "NotRequired"
    return "NotRequired"


def needs_restart(container, old, new):
    """Whether going from resources old to new restarts the container: a changed resource
    whose resizePolicy is RestartContainer."""
    a, b = norm(old), norm(new)
    return any(restart_policy(container, k) == "RestartContainer" and
               (a["requests"].get(k), a["limits"].get(k)) !=
               (b["requests"].get(k), b["limits"].get(k)) for k in KEYS)


def limits(resources):
    """(cpu millis, memory bytes) limits for the cgroup; None where unlimited."""
    n = norm(resources)
    return n["limits"].get("cpu"), n["limits"].get("memory")


def shown(resources):
    """The requests and limits (cpu and memory) as containerStatuses[].resources shows them."""
    out = {}
    for part in ("requests", "limits"):
        src = (resources or {}).get(part) or {}
        v = {k: src[k] for k in KEYS if k in src}
        if v:
            out[part] = v
    return out
