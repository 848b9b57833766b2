"""The pod status a kubelet writes through pods/status, composed in one place from a snapshot of
what runs (pure: the worker takes the snapshot, this module decides phase and conditions).

A snapshot is a dict:
  ip, host_ip, start_time       the pod's address, the node's, when the kubelet admitted it
  sandbox                       True once the network namespace exists
  deleting                      True once the pod is being stopped for deletion
  resize_pending                None or (reason, message): PodResizePending
  resize_in_progress            None, or "" / an error message: PodResizeInProgress
  containers                    [{name, image, image_id, container_id, ready, started,
                                  restart_count, state, last_state, done, exit_code,
                                  resources, allocated}] in the pod's order; state and
                                  last_state are the API's ContainerState dicts
"""

KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                      "PodResizePending", "PodResizeInProgress")


def phase(snap, restart_policy):
    """Pending, Running, Succeeded or Failed, by the kubelet's rules: a pod whose containers
    have all stopped for good is Succeeded when each exited 0 and Failed otherwise; a pod being
    deleted whose containers have stopped is terminal the same way; a pod with a container
    running (or restarting) is Running; anything else is Pending."""
    cs = snap["containers"]
    if cs and all(c["done"] for c in cs):
        return "Succeeded" if all(c.get("exit_code") == 0 for c in cs) else "Failed"
    stopped = all(c["state"].get("terminated") is not None for c in cs)
    if snap.get("deleting") and cs and stopped:
        return "Succeeded" if all(c.get("exit_code") == 0 for c in cs) and \
            restart_policy != "Always" else "Failed"
    if any("running" in c["state"] for c in cs) or \
            any(c["restart_count"] > 0 or c["last_state"] for c in cs):
        return "Running"
    return "Pending"


def _condition(old, ctype, status, now, generation, reason=None, message=None):
    prev = old.get(ctype)
    c = {"type": ctype, "status": status, "lastProbeTime": None,
         "lastTransitionTime": prev["lastTransitionTime"] if prev and
         prev.get("status") == status and prev.get("lastTransitionTime") else now,
         "observedGeneration": generation}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def container_status(c):
    cs = {"name": c["name"], "image": c["image"], "imageID": c.get("image_id") or "",
          "ready": bool(c["ready"]), "started": bool(c["started"]),
          "restartCount": int(c["restart_count"]), "state": c["state"],
          "lastState": c["last_state"] or {}}
    if c.get("container_id"):
        cs["containerID"] = c["container_id"]
    if c.get("resources"):
        cs["resources"] = c["resources"]
    if c.get("allocated"):
        cs["allocatedResources"] = c["allocated"]
    return cs


def compose(pod, snap, now):
    """The whole status for pod (the object as last seen) from snap, at time now (RFC 3339)."""
    old_status = pod.get("status") or {}
    old = {c.get("type"): c for c in old_status.get("conditions") or []}
    gen = (pod.get("metadata") or {}).get("generation") or 1
    spec = pod.get("spec") or {}
    ph = phase(snap, spec.get("restartPolicy", "Always"))
    cs = snap["containers"]
    all_ready = bool(cs) and all(c["ready"] for c in cs) and ph == "Running"
    unready = [c["name"] for c in cs if not c["ready"]]
    if ph in ("Succeeded", "Failed"):
        not_ready = ("PodCompleted", None)
    else:
        not_ready = ("ContainersNotReady",
                     "containers with unready status: [%s]" % " ".join(unready))
    conds = [
        _condition(old, "PodReadyToStartContainers",
                   "True" if snap.get("sandbox") and ph not in ("Succeeded", "Failed")
                   else "False", now, gen),
        _condition(old, "Initialized", "True", now, gen),
        _condition(old, "Ready", "True" if all_ready else "False", now, gen,
                   *(() if all_ready else not_ready)),
        _condition(old, "ContainersReady", "True" if all_ready else "False", now, gen,
                   *(() if all_ready else not_ready)),
    ]
    sched = old.get("PodScheduled")
    conds.append(sched if sched else _condition(old, "PodScheduled", "True", now, gen))
    if snap.get("resize_pending"):
        reason, message = snap["resize_pending"]
        conds.append(_condition(old, "PodResizePending", "True", now, gen, reason, message))
    if snap.get("resize_in_progress") is not None:
        err = snap["resize_in_progress"]
        conds.append(_condition(old, "PodResizeInProgress", "True", now, gen,
                                "Error" if err else None, err or None))
    # Conditions other components own (DisruptionTarget, readiness gates) are kept.
    owned = set(KUBELET_CONDITIONS) | {"PodScheduled"}
    conds += [c for c in old_status.get("conditions") or [] if c.get("type") not in owned]
    st = {"observedGeneration": gen, "phase": ph, "conditions": conds,
          "hostIP": snap["host_ip"], "hostIPs": [{"ip": snap["host_ip"]}],
          "startTime": snap["start_time"],
          "containerStatuses": [container_status(c) for c in cs]}
    if snap.get("ip"):
        st["podIP"] = snap["ip"]
        st["podIPs"] = [{"ip": snap["ip"]}]
    return st


def status_patch(pod, st):
    """The merge patch that makes the stored status st: lists are replaced whole, and the
    uid in metadata is the precondition that the pod is still the one the kubelet runs."""
    old = pod.get("status") or {}
    body = dict(st)
    for k in ("message", "reason"):
        if k in old and k not in st:
            body[k] = None
    return {"metadata": {"uid": pod["metadata"]["uid"]}, "status": body}


def same(old, new):
    """Whether writing new would change nothing a reader sees of old."""
    return all(old.get(k) == v for k, v in new.items())
