"""What a container runtime and the kubelet's volume manager do around a pod's process, for the
fake kubelet (controllers.Kubelet):

- the command line: an image map entry with `entrypoint` / `cmd` (the image's ENTRYPOINT and
  CMD) takes the container's `command` and `args` the way Kubernetes does; an entry with
  `command` runs as it is, whatever the container says;
- the ServiceAccount volume: `token`, `ca.crt` and `namespace` written to a per-pod directory
  and bind-mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount inside a private
  mount namespace of the pod's process (unshare), as a kubelet projects `kube-api-access-*`;
- the network: a pod that listens on every address listens on its own pod address only
  (podnet.c, preloaded), as it would in its own network namespace.

Each part that this machine cannot do (no mount namespaces when not root, no C compiler) is
reported once with the reason, and pods then run without it.
"""

import os
import re
import shutil
import subprocess

SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
HERE = os.path.dirname(os.path.abspath(__file__))

# Runs as the pod's process: joins the container's cgroups, mounts the ServiceAccount volume
# (in the private mount namespace unshare made), then becomes the container's command. Exit code
# 126 is a container that could not be started (the kubelet reports StartError).
WRAPPER = r'''
for f in $FAKEAPI_CGROUP_PROCS; do echo $$ > "$f" || exit 126; done
if [ -n "${FAKEAPI_SA_DIR:-}" ]; then
    if [ -n "${FAKEAPI_SA_TMPFS:-}" ]; then
        mount -t tmpfs -o mode=0755,size=64k fakeapi-pod "$FAKEAPI_SA_TMPFS" || exit 126
    fi
    mkdir -p "$FAKEAPI_SA_MOUNT" || exit 126
    mount --bind -o ro "$FAKEAPI_SA_DIR" "$FAKEAPI_SA_MOUNT" || exit 126
fi
unset FAKEAPI_CGROUP_PROCS FAKEAPI_SA_DIR FAKEAPI_SA_TMPFS FAKEAPI_SA_MOUNT
exec "$@"
'''


def expand_k8s(s, env):
    """Kubernetes' expansion of a container's command and args: $(VAR) from the container's
    environment, left as it is when VAR is not defined, and $$ for a literal $."""
    def sub(m):
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", sub, s)


def container_argv(entry, c, env):
    """The argv of container c for image map entry (a normalised dict, see image_entry).
    `argv`: the entry's own command, `${VAR}` / `$(VAR)` expanded from env. `entrypoint` /
    `cmd`: the container's `command` replaces the entrypoint (and drops cmd), its `args`
    replace cmd, as in a pod spec."""
    if entry.get("argv") is not None:
        return [expand_env(str(a), env) for a in entry["argv"]]
    ep = [expand_env(str(a), env) for a in entry.get("entrypoint") or []]
    cmd = [expand_env(str(a), env) for a in entry.get("cmd") or []]
    if c.get("command"):
        ep, cmd = [expand_k8s(str(a), env) for a in c["command"]], []
    if c.get("args") is not None:
        cmd = [expand_k8s(str(a), env) for a in c["args"]]
    return ep + cmd


def image_entry(images, image):
    """The image map's entry for image (exact name first, then the first matching pattern) as
    {argv | entrypoint + cmd, env}, or None when the image is not in the map."""
    import fnmatch
    ent = images.get(image)
    if ent is None:
        for pat, v in images.items():
            if fnmatch.fnmatchcase(image, pat):
                ent = v
                break
    if ent is None:
        return None
    if isinstance(ent, list):
        return {"argv": ent, "env": {}}
    if "entrypoint" in ent or "cmd" in ent:
        return {"entrypoint": ent.get("entrypoint") or [], "cmd": ent.get("cmd") or [],
                "env": ent.get("env") or {}}
    return {"argv": ent.get("command") or ent.get("argv"), "env": ent.get("env") or {}}


def expand_env(s, env):
    """The image map's expansion: ${VAR} and $(VAR) from env, left as they are when unset."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                  lambda m: env.get(m.group(1) or m.group(2), m.group(0)), s)


def _write(path, text, mode):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


class Sandbox:
    def __init__(self, state_dir, log):
        self.volumes = os.path.join(state_dir, "volumes")
        os.makedirs(self.volumes, exist_ok=True)
        self.mount_reason = self._probe_mounts()
        self.podnet, self.podnet_reason = self._build_podnet(state_dir)
        if self.mount_reason:
            log("pods get no ServiceAccount volume at %s: %s" % (SA_MOUNT, self.mount_reason))
        if self.podnet_reason:
            log("pods listening on every address take that port on every address: %s"
                % self.podnet_reason)

    @staticmethod
    def _probe_mounts():
        if not shutil.which("unshare") or not shutil.which("mount"):
            return "unshare(1) or mount(8) is not installed (Debian: util-linux, mount)"
        try:
            r = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=10)
        except (OSError, subprocess.TimeoutExpired) as e:
            return "unshare --mount failed: %s" % e
        if r.returncode != 0:
            return "cannot make a mount namespace (not root?): %s" % \
                r.stderr.decode(errors="replace").strip()
        return None

    @staticmethod
    def _build_podnet(state_dir):
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            return None, "no C compiler to build tests/fakeapi/podnet.c"
        out = os.path.join(state_dir, "podnet.so")
        try:
            r = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", out,
                                os.path.join(HERE, "podnet.c"), "-ldl"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, "building podnet.c failed: %s" % e
        if r.returncode != 0:
            return None, "building podnet.c failed: %s" % r.stderr.decode(errors="replace")
        return out, None

    # --- the ServiceAccount volume ----------------------------------------------------------------

    def project_sa(self, uid, token, ca_pem, namespace):
        """Writes the pod's kube-api-access files (mode 0644, the projected volume's default)
        and returns their directory, or None when pods get no such volume here."""
        if self.mount_reason:
            return None
        d = os.path.join(self.volumes, uid, "kube-api-access")
        os.makedirs(d, exist_ok=True)
        _write(os.path.join(d, "token"), token, 0o644)
        _write(os.path.join(d, "ca.crt"), ca_pem, 0o644)
        _write(os.path.join(d, "namespace"), namespace, 0o644)
        return d

    def remove(self, uid):
        shutil.rmtree(os.path.join(self.volumes, uid), ignore_errors=True)

    @staticmethod
    def _tmpfs_for(path):
        """The directory to cover with a tmpfs inside the pod's mount namespace so that the
        mount point can be made without touching the host: the deepest existing ancestor of
        path when path is missing (a container's root would have its own, empty /run), "" when
        path exists, None when that ancestor would be / itself."""
        if os.path.isdir(path):
            return ""
        p = path
        while not os.path.exists(p):
            p = os.path.dirname(p)
        p = os.path.realpath(p)
        return None if p == "/" else p

    # --- the process ------------------------------------------------------------------------------

    def command(self, argv, env, cgroup_procs, sa_dir, pod_ip):
        """The command line that runs argv as the pod's process, and the additions to its
        environment (env is updated in place)."""
        env["FAKEAPI_CGROUP_PROCS"] = " ".join(cgroup_procs or [])
        if self.podnet:
            env["FAKEAPI_POD_IP"] = pod_ip
            env["LD_PRELOAD"] = " ".join(x for x in (self.podnet, env.get("LD_PRELOAD")) if x)
            # A sanitizer runtime insists on being the first preloaded library; podnet.so only
            # wraps bind(), which the sanitizers do not intercept.
            env["ASAN_OPTIONS"] = ":".join(x for x in (env.get("ASAN_OPTIONS"),
                                                       "verify_asan_link_order=0") if x)
        prefix = []
        tmpfs = self._tmpfs_for(SA_MOUNT) if sa_dir else None
        if tmpfs is not None:
            env["FAKEAPI_SA_DIR"] = sa_dir
            env["FAKEAPI_SA_MOUNT"] = SA_MOUNT
            env["FAKEAPI_SA_TMPFS"] = tmpfs
            prefix = ["unshare", "--mount", "--propagation", "private"]
        return prefix + ["/bin/sh", "-c", WRAPPER, "pod"] + list(argv)
