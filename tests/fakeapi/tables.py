"""Server-side printing: the meta.k8s.io/v1 Table that `kubectl get` asks for."""

import datetime


def _age(ts, now):
    if not ts:
        return "<unknown>"
    try:
        t = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc)
    except ValueError:
        return "<unknown>"
    s = int((now - t).total_seconds())
    if s < 0:
        s = 0
    if s < 120:
        return "%ds" % s
    if s < 3600:
        return "%dm%ds" % (s // 60, s % 60) if s < 600 else "%dm" % (s // 60)
    if s < 86400:
        return "%dh%dm" % (s // 3600, (s % 3600) // 60) if s < 28800 else "%dh" % (s // 3600)
    return "%dd" % (s // 86400)


def _col(name, typ="string", fmt="", prio=0):
    return {"name": name, "type": typ, "format": fmt, "description": name, "priority": prio}


def _pod_status(p):
    st = p.get("status") or {}
    if (p.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    reason = st.get("phase") or "Pending"
    for cs in st.get("containerStatuses") or []:
        state = cs.get("state") or {}
        if "waiting" in state and state["waiting"].get("reason"):
            reason = state["waiting"]["reason"]
        elif "terminated" in state and state["terminated"].get("reason"):
            reason = state["terminated"]["reason"]
    return reason


def _pod(p):
    st = p.get("status") or {}
    css = st.get("containerStatuses") or []
    total = len((p.get("spec") or {}).get("containers") or [])
    ready = sum(1 for c in css if c.get("ready"))
    restarts = sum(c.get("restartCount", 0) for c in css)
    return (["%d/%d" % (ready, total), _pod_status(p), restarts],
            [st.get("podIP") or "<none>", (p.get("spec") or {}).get("nodeName") or "<none>"])


def _deploy(d):
    spec, st = d.get("spec") or {}, d.get("status") or {}
    return (["%d/%d" % (st.get("readyReplicas", 0), spec.get("replicas", 0)),
             st.get("updatedReplicas", 0), st.get("availableReplicas", 0)], [])


def _rs(r):
    spec, st = r.get("spec") or {}, r.get("status") or {}
    return ([spec.get("replicas", 0), st.get("replicas", 0), st.get("readyReplicas", 0)], [])


def _svc(s):
    spec = s.get("spec") or {}
    ports = ",".join("%s/%s" % (p.get("port"), p.get("protocol", "TCP"))
                     for p in spec.get("ports") or [])
    return ([spec.get("type", "ClusterIP"), spec.get("clusterIP") or "<none>", "<none>",
             ports or "<none>"], [])


def _cm(c):
    return ([len(c.get("data") or {}) + len(c.get("binaryData") or {})], [])


def _ns(n):
    return ([(n.get("status") or {}).get("phase", "Active")], [])


def _lease(l):
    return ([(l.get("spec") or {}).get("holderIdentity") or ""], [])


def _event(e):
    return ([e.get("type", ""), e.get("reason", ""),
             "%s/%s" % ((e.get("involvedObject") or {}).get("kind", "").lower(),
                        (e.get("involvedObject") or {}).get("name", "")),
             e.get("message", "")], [])


def _dur(a, b):
    import calendar
    import time
    try:
        t0 = calendar.timegm(time.strptime(a, "%Y-%m-%dT%H:%M:%SZ"))
        t1 = calendar.timegm(time.strptime(b, "%Y-%m-%dT%H:%M:%SZ")) if b else time.time()
    except (TypeError, ValueError):
        return ""
    s = max(0, int(t1 - t0))
    return "%ds" % s if s < 120 else "%dm%ds" % (s // 60, s % 60) if s < 600 else \
        "%dm" % (s // 60)


def _job(j):
    spec, st = j.get("spec") or {}, j.get("status") or {}
    conds = {c.get("type"): c.get("status") for c in st.get("conditions") or []}
    status = "Complete" if conds.get("Complete") == "True" else "Failed" if \
        conds.get("Failed") == "True" else "Suspended" if spec.get("suspend") else "Running"
    comp = "%d/%s" % (st.get("succeeded", 0), spec.get("completions")
                      if spec.get("completions") is not None else "1 of %d"
                      % spec.get("parallelism", 1))
    cs = (((spec.get("template") or {}).get("spec") or {}).get("containers") or [])
    return ([status, comp, _dur(st.get("startTime"), st.get("completionTime"))
             if st.get("startTime") else ""],
            [",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)])


def _node(n):
    labels = (n.get("metadata") or {}).get("labels") or {}
    alloc = (n.get("status") or {}).get("allocatable") or {}
    return (["Ready", ",".join(k.rsplit("/", 1)[1] for k in sorted(labels)
                               if k.startswith("node-role.kubernetes.io/")) or "<none>"],
            [labels.get("node.kubernetes.io/instance-type", ""),
             "%s/%s" % (alloc.get("cpu", ""), alloc.get("memory", ""))])


def _ds(d):
    st = d.get("status") or {}
    return ([st.get("desiredNumberScheduled", 0), st.get("currentNumberScheduled", 0),
             st.get("numberReady", 0)], [])


COLUMNS = {
    "nodes": ([_col("Status"), _col("Roles")],
              [_col("Instance-Type", prio=1), _col("Allocatable", prio=1)], _node),
    "daemonsets": ([_col("Desired", "integer"), _col("Current", "integer"),
                    _col("Ready", "integer")], [], _ds),
    "jobs": ([_col("Status"), _col("Completions"), _col("Duration")],
             [_col("Containers", prio=1), _col("Images", prio=1)], _job),
    "pods": ([_col("Ready"), _col("Status"), _col("Restarts", "integer")],
             [_col("IP", prio=1), _col("Node", prio=1)], _pod),
    "deployments": ([_col("Ready"), _col("Up-to-date", "integer"),
                     _col("Available", "integer")], [], _deploy),
    "replicasets": ([_col("Desired", "integer"), _col("Current", "integer"),
                     _col("Ready", "integer")], [], _rs),
    "services": ([_col("Type"), _col("Cluster-IP"), _col("External-IP"), _col("Port(s)")], [],
                 _svc),
    "configmaps": ([_col("Data", "integer")], [], _cm),
    "namespaces": ([_col("Status")], [], _ns),
    "leases": ([_col("Holder")], [], _lease),
    "events": ([_col("Type"), _col("Reason"), _col("Object"), _col("Message")], [], _event),
}


def table(plural, objs, rv, kind, api_version, include_object="Metadata"):
    """Build a Table for `objs` (dicts without kind/apiVersion)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    pre, post, fn = COLUMNS.get(plural, ([], [], None))
    cols = [_col("Name", fmt="name")] + pre + [_col("Age")] + post
    rows = []
    for o in objs:
        meta = o.get("metadata") or {}
        a, b = fn(o) if fn else ([], [])
        cells = [meta.get("name", "")] + a + [_age(meta.get("creationTimestamp"), now)] + b
        row = {"cells": cells}
        if include_object == "Object":
            row["object"] = dict(o, kind=kind, apiVersion=api_version)
        elif include_object != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": meta}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
            "metadata": {"resourceVersion": str(rv)}, "columnDefinitions": cols, "rows": rows}
