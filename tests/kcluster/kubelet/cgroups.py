"""The containers' cgroups: the fake kubelet's Cgroups (v1 or v2, below the cgroup this process
runs in), with the base named after the node (`skc-kubelet-<node>`) instead of the process, so
that a kubelet started again for the same node finds and removes what a killed one left, and
`kcluster.sh down` finds every pod cgroup by the `skc-` prefix.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "fakeapi"))
import controllers  # noqa: E402

BASE_PREFIX = "skc-kubelet-"


class NodeCgroups(controllers.Cgroups):
    def __init__(self, node, log):
        controllers.Cgroups.__init__(self)
        self.log = log
        # The base class names its bases after this process; each is renamed (a cgroup
        # directory can be renamed within its parent) to the node's name, after the cgroups a
        # previous kubelet of this node left are stopped and removed.
        tag = BASE_PREFIX + node
        renamed = {}
        for ctrl, base in list(self.bases.items()):
            target = os.path.join(os.path.dirname(base), tag)
            if os.path.isdir(target):
                self._remove_tree(target)
                log("removed the cgroups of an earlier run: %s" % target)
            try:
                os.rename(base, target)
                renamed[ctrl] = target
            except OSError as e:
                log("cannot rename cgroup %s to %s, keeping its name: %s" % (base, target, e))
                renamed[ctrl] = base
        self.bases = renamed

    @staticmethod
    def _remove_tree(d):
        for sub in os.listdir(d):
            p = os.path.join(d, sub)
            if os.path.isdir(p):
                controllers._kill_cgroup(p)
                controllers._rmdir(p)
        controllers._kill_cgroup(d)
        controllers._rmdir(d)

    def pids(self, info):
        """The processes in the container's cgroup (every process it started)."""
        for key in ("memoryDir", "cpuDir"):
            d = info.get(key)
            if d:
                try:
                    with open(os.path.join(d, "cgroup.procs")) as f:
                        return [int(x) for x in f.read().split()]
                except (OSError, ValueError):
                    pass
        return []

    def remove_procs(self, info):
        """Kills what is left in the container's cgroups (the children of a process that
        exited), keeping the cgroups for the next start."""
        for d in info.get("dirs") or []:
            controllers._kill_cgroup(d)

    def set_limits(self, info, cpu_millis, mem_bytes):
        """Rewrites a running container's limits (what UpdateContainerResources does). Raises
        OSError when the kernel refuses (a memory limit below the usage it cannot reclaim)."""
        if not info.get("cpuDir"):
            return
        w = controllers._write
        if self.mode == "v1":
            w(os.path.join(info["cpuDir"], "cpu.cfs_quota_us"),
              str(max(1000, cpu_millis * 100)) if cpu_millis else "-1")
            mem = str(mem_bytes) if mem_bytes else "-1"
            cur = _read_int(os.path.join(info["memoryDir"], "memory.limit_in_bytes"))
            # memsw must stay >= the memory limit: it goes first when the limit grows, second
            # when the limit shrinks.
            order = ("memory.memsw.limit_in_bytes", "memory.limit_in_bytes")
            if mem_bytes and cur is not None and mem_bytes < cur:
                order = order[::-1]
            for f in order:
                try:
                    w(os.path.join(info["memoryDir"], f), mem)
                except OSError:
                    if f == "memory.limit_in_bytes":
                        raise
        else:
            w(os.path.join(info["cpuDir"], "cpu.max"),
              "%d 100000" % max(1000, cpu_millis * 100) if cpu_millis else "max 100000")
            w(os.path.join(info["memoryDir"], "memory.max"),
              str(mem_bytes) if mem_bytes else "max")
        info["cpuMillis"], info["memoryBytes"] = cpu_millis, mem_bytes

    def memory_usage(self, info):
        d = info.get("memoryDir")
        if not d:
            return None
        return _read_int(os.path.join(d, "memory.usage_in_bytes" if self.mode == "v1"
                                      else "memory.current"))


def _read_int(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None

