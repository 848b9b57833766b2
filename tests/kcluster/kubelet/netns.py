"""Each pod's network: a network namespace `skc-p-<uid8>` whose eth0 is one end of a veth pair,
the other end (`skv<uid8>`) attached to the node's bridge in the router namespace; the pod's
address comes from the node's /24 (2..254, .1 is the bridge).

Addresses are kept in a file under the kubelet's state directory (uid -> address), so that a
restarted kubelet gives a pod the address its status already names and never hands out one
that a pod of the earlier run still holds; the file also lists what to remove on the next start.
"""

import ipaddress
import json
import os
import subprocess
import threading

NETNS_PREFIX = "skc-p-"
VETH_PREFIX = "skv"


def names(uid):
    """(netns name, router-side veth name) of the pod with this uid."""
    short = uid.replace("-", "")[:8]
    return NETNS_PREFIX + short, VETH_PREFIX + short


class AddressPool:
    """Pod addresses of one node's /24, persisted in `path` as {"uid": "address"}."""

    def __init__(self, path, cidr):
        net = ipaddress.ip_network(cidr, strict=False)
        if net.prefixlen != 24 or net.version != 4:
            raise ValueError("the pod CIDR must be an IPv4 /24, not %s" % cidr)
        self.net = net
        self.gateway = str(net.network_address + 1)
        self.path = path
        self.lock = threading.Lock()
        self.used = {}
        try:
            with open(path) as f:
                data = json.load(f)
            self.used = {str(k): str(v) for k, v in data.items()
                         if ipaddress.ip_address(v) in net}
        except (OSError, ValueError, AttributeError):
            self.used = {}

    def _save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.used, f, sort_keys=True)
        os.replace(tmp, self.path)

    def allocate(self, uid):
        """The pod's address: the one it had, else the lowest free of .2 .. .254. None when
        the /24 is full."""
        with self.lock:
            if uid in self.used:
                return self.used[uid]
            taken = set(self.used.values())
            for k in range(2, 255):
                ip = str(self.net.network_address + k)
                if ip not in taken:
                    self.used[uid] = ip
                    self._save()
                    return ip
            return None

    def release(self, uid):
        with self.lock:
            if self.used.pop(uid, None) is not None:
                self._save()

    def uids(self):
        with self.lock:
            return list(self.used)


def _ip(args, check=True):
    r = subprocess.run(["ip"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=20)
    if check and r.returncode != 0:
        raise OSError("ip %s: %s" % (" ".join(args), r.stderr.decode(errors="replace").strip()))
    return r


def setup(uid, ip, gateway, router_ns, bridge):
    """Creates the pod's namespace and its link to the bridge; returns the namespace's name.
    A half-made network is removed before the error is raised."""
    ns, veth = names(uid)
    teardown(uid, router_ns)
    try:
        _ip(["netns", "add", ns])
        _ip(["link", "add", veth, "netns", router_ns, "type", "veth",
             "peer", "name", "eth0", "netns", ns])
        _ip(["-n", router_ns, "link", "set", veth, "master", bridge, "up"])
        _ip(["-n", ns, "addr", "add", ip + "/24", "dev", "eth0"])
        _ip(["-n", ns, "link", "set", "eth0", "up"])
        _ip(["-n", ns, "link", "set", "lo", "up"])
        _ip(["-n", ns, "route", "add", "default", "via", gateway])
    except (OSError, subprocess.TimeoutExpired) as e:
        teardown(uid, router_ns)
        raise OSError(str(e))
    return ns


def teardown(uid, router_ns):
    """Removes the pod's namespace (its eth0 and so the veth pair go with it) and the router's
    end if it outlived it. Nothing to remove is not an error."""
    ns, veth = names(uid)
    if os.path.exists("/run/netns/" + ns):
        _ip(["netns", "del", ns], check=False)
    _ip(["-n", router_ns, "link", "del", veth], check=False)


def exists(uid):
    return os.path.exists("/run/netns/" + names(uid)[0])
