"""The kubelet's /metrics/resource page: Prometheus text, the series metrics-server reads
(node_cpu_usage_seconds_total, node_memory_working_set_bytes,
container_cpu_usage_seconds_total, container_memory_working_set_bytes,
container_start_time_seconds, and the pod_ sums), each sample with its time in milliseconds.

metrics-server drops a node whose CPU or memory is 0 and a pod any of whose containers has a
CPU or memory of 0, so a sample that is not known yet is left out rather than written as 0.
"""

SERIES = (
    ("container_cpu_usage_seconds_total", "counter",
     "[STABLE] Cumulative cpu time consumed by the container in core-seconds"),
    ("container_memory_working_set_bytes", "gauge",
     "[STABLE] Current working set of the container in bytes"),
    ("container_start_time_seconds", "gauge",
     "[STABLE] Start time of the container since unix epoch in seconds"),
    ("node_cpu_usage_seconds_total", "counter",
     "[STABLE] Cumulative cpu time consumed by the node in core-seconds"),
    ("node_memory_working_set_bytes", "gauge",
     "[STABLE] Current working set of the node in bytes"),
    ("pod_cpu_usage_seconds_total", "counter",
     "[STABLE] Cumulative cpu time consumed by the pod in core-seconds"),
    ("pod_memory_working_set_bytes", "gauge",
     "[STABLE] Current working set of the pod in bytes"),
    ("resource_scrape_error", "gauge",
     "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise"),
)


def _esc(v):
    return str(v).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


def _labels(d):
    return "{" + ",".join('%s="%s"' % (k, _esc(d[k])) for k in sorted(d)) + "}"


def _num(v):
    return repr(float(v)) if isinstance(v, float) else str(int(v))


def render(node, containers, ts_ms):
    """node: {"cpu": seconds, "memory": bytes}; containers: [{namespace, pod, container, cpu,
    memory, start}] (cpu seconds, working set bytes, start epoch seconds; None = unknown);
    ts_ms: the samples' time. Returns the page as text."""
    rows = {name: [] for name, _, _ in SERIES}
    pods = {}
    for c in containers:
        lab = {"container": c["container"], "namespace": c["namespace"], "pod": c["pod"]}
        if c.get("cpu"):
            rows["container_cpu_usage_seconds_total"].append((lab, c["cpu"]))
        if c.get("memory"):
            rows["container_memory_working_set_bytes"].append((lab, c["memory"]))
        if c.get("start"):
            rows["container_start_time_seconds"].append((lab, float(c["start"])))
        p = pods.setdefault((c["namespace"], c["pod"]), {"cpu": 0.0, "memory": 0})
        p["cpu"] += c.get("cpu") or 0.0
        p["memory"] += c.get("memory") or 0
    for (ns, pod), v in sorted(pods.items()):
        lab = {"namespace": ns, "pod": pod}
        if v["cpu"]:
            rows["pod_cpu_usage_seconds_total"].append((lab, v["cpu"]))
        if v["memory"]:
            rows["pod_memory_working_set_bytes"].append((lab, v["memory"]))
    if node.get("cpu"):
        rows["node_cpu_usage_seconds_total"].append(({}, node["cpu"]))
    if node.get("memory"):
        rows["node_memory_working_set_bytes"].append(({}, node["memory"]))
    out = []
    for name, typ, help_ in SERIES:
        out.append("# HELP %s %s" % (name, help_))
        out.append("# TYPE %s %s" % (name, typ))
        if name == "resource_scrape_error":
            out.append("resource_scrape_error 0")
            continue
        for lab, v in rows[name]:
            out.append("%s%s %s %d" % (name, _labels(lab) if lab else "", _num(v), ts_ms))
    return "\n".join(out) + "\n"
