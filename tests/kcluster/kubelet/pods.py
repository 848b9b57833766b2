"""One pod on the node, from admission to the final delete: a thread per pod (as the kubelet's
pod workers), which owns everything about its pod (processes, probes, cgroups, network
namespace, ServiceAccount volume, resize state), so that nothing here is shared but what the
Kubelet object hands out under its lock (addresses, the node's allocation).

A pass (every PASS seconds, or at once when the pod object changes): decide a resize, start or
restart containers whose time has come, reap exited ones, run due probes, refresh the token,
and write the status when it changed. The thread ends when the pod is finished (Succeeded or
Failed), deleted, or the kubelet stops; each pass is bounded by the probes' timeouts.
"""

import json
import os
import signal
import subprocess
import threading
import time

import kapi
import netns
import podresize
import podspec
import podstatus
import probes
from sandbox import SA_MOUNT

# Runs after the sandbox's wrapper, in the container's private mount namespace: the pod's own
# /etc/hosts (its name on its address, so a reverse lookup of the pod IP answers at once) and
# /etc/resolv.conf (no name server: there is no cluster DNS, and a lookup must fail at once
# rather than wait for a server the pod network cannot reach), as a kubelet mounts them.
ETC_WRAPPER = r'''
mount --bind "$SKC_HOSTS" /etc/hosts || exit 126
mount --bind "$SKC_RESOLV" /etc/resolv.conf || exit 126
unset SKC_HOSTS SKC_RESOLV
exec "$@"
'''

PASS = 0.25  # seconds between passes of an idle worker
SANDBOX_RETRY = 3.0  # seconds between attempts to build a pod's network
TOKEN_RETRY = 10.0  # seconds before a failed TokenRequest is tried again


def now_ts(t=None):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t if t is not None else time.time()))


class Container:
    def __init__(self, spec):
        self.spec = spec
        self.name = spec["name"]
        self.proc = None
        self.started_at = None  # RFC 3339, and start_epoch, of the running attempt
        self.start_epoch = None
        self.restarts = 0
        self.last_term = None
        self.term = None  # the terminated state while not running
        self.done = False  # stopped for good (restartPolicy)
        self.exit_code = None
        self.waiting = "ContainerCreating"
        self.waiting_msg = None
        self.next_start = 0.0
        self.ready = False
        self.started = False
        self.probes = {}
        self.cg_procs = None
        self.cg_info = {}
        self.oom_before = 0
        self.log_path = None
        self.container_id = None
        self.killed_by = None  # "liveness", "startup", "resize": why the kubelet killed it
        self.allocated = spec.get("resources") or {}
        self.actual = self.allocated

    def snapshot(self):
        if self.proc is not None:
            state = {"running": {"startedAt": self.started_at}}
        elif self.term is not None and (self.done or self.waiting is None):
            state = {"terminated": self.term}
        else:
            w = {"reason": self.waiting or "ContainerCreating"}
            if self.waiting_msg:
                w["message"] = self.waiting_msg
            state = {"waiting": w}
        return {"name": self.name, "image": self.spec.get("image", ""),
                "image_id": "skc://" + self.spec.get("image", ""),
                "container_id": self.container_id, "ready": self.ready and self.proc is not None,
                "started": self.started and self.proc is not None,
                "restart_count": self.restarts, "state": state,
                "last_state": {"terminated": self.last_term} if self.last_term else {},
                "done": self.done, "exit_code": self.exit_code,
                "resources": podresize.shown(self.actual),
                "allocated": dict((self.allocated or {}).get("requests") or {})}


class PodWorker(threading.Thread):
    def __init__(self, kl, pod):
        threading.Thread.__init__(self, daemon=True,
                                  name="pod-%s" % pod["metadata"]["name"])
        self.kl = kl
        self.pod = pod
        m = pod["metadata"]
        self.uid = m["uid"]
        self.ns = m["namespace"]
        self.name = m["name"]
        self.wake = threading.Event()
        self.gone = False  # the pod no longer exists in the API
        self.finished = False  # the thread is done with the pod
        self.ip = None
        self.netns = None
        self.next_sandbox = 0.0
        self.start_time = now_ts()
        self.containers = [Container(c) for c in (pod.get("spec") or {}).get("containers") or []]
        self._resume((pod.get("status") or {}))
        self.sa_dir = None
        self.etc_dir = None
        self.sa_sources = None
        self.token_refresh_at = 0.0
        self.resize_pending = None
        self.resize_error = None
        self.written = None  # the last status written
        self.deleting = False
        self.log_dir = os.path.join(kl.state, "logs", "%s_%s_%s" % (self.ns, self.name,
                                                                     self.uid))

    def _resume(self, status):
        """A pod that an earlier run of this kubelet started: its processes were stopped when
        that run ended, so each container that ran counts one restart more, with its last state
        what the status said, and the pod keeps its start time."""
        if status.get("startTime"):
            self.start_time = status["startTime"]
        by_name = {cs.get("name"): cs for cs in status.get("containerStatuses") or []}
        for c in self.containers:
            cs = by_name.get(c.name)
            if not cs:
                continue
            c.restarts = int(cs.get("restartCount") or 0)
            st = cs.get("state") or {}
            if "running" in st:
                c.restarts += 1
                c.last_term = {"exitCode": 137, "reason": "ContainerStatusUnknown",
                               "message": "The kubelet that ran the container stopped",
                               "startedAt": st["running"].get("startedAt"),
                               "finishedAt": now_ts(), "containerID": cs.get("containerID")}
            elif (cs.get("lastState") or {}).get("terminated"):
                c.last_term = cs["lastState"]["terminated"]
            alloc = cs.get("allocatedResources")
            if alloc and cs.get("resources"):
                # What the earlier run allocated and applied stays the container's until a
                # resize is decided again.
                c.allocated = c.actual = cs["resources"]

    # --- the loop -----------------------------------------------------------------------------

    def update(self, pod):
        self.pod = pod
        self.wake.set()

    def delete_seen(self):
        self.gone = True
        self.wake.set()

    def run(self):
        try:
            self._loop()
        except Exception:  # a bug here must not leave processes or namespaces behind
            import traceback
            self.kl.log("pod %s/%s: worker failed: %s" % (self.ns, self.name,
                                                          traceback.format_exc()))
            self._stop_containers(0)
        finally:
            self._cleanup()
            self.finished = True
            self.kl.worker_done(self)

    def _loop(self):
        while True:
            pod = self.pod
            if self.kl.stopping.is_set():
                self._stop_containers(self.kl.shutdown_grace)
                return
            if self.gone:
                self._stop_containers(0)
                return
            if (pod.get("metadata") or {}).get("deletionTimestamp"):
                self._terminate(pod)
                return
            if not self.netns:
                self._sandbox(pod)
            if self.netns:
                self._resize(pod)
                self._step(pod)
                self._token(pod)
            self._report(pod)
            if self.containers and all(c.done for c in self.containers) and \
                    (self.written or {}).get("phase") in ("Succeeded", "Failed"):
                return  # the status says Succeeded or Failed, and nothing runs any more
            self.wake.wait(PASS)
            self.wake.clear()

    # --- the sandbox: address, network namespace, ServiceAccount volume -------------------------

    def _sandbox(self, pod):
        if time.time() < self.next_sandbox:
            return
        self.next_sandbox = time.time() + SANDBOX_RETRY
        if self.ip is None:
            self.ip = self.kl.pool.allocate(self.uid)
            if self.ip is None:
                self._event("Warning", "FailedCreatePodSandBox",
                            "no free address in %s" % self.kl.args.pod_cidr)
                return
        try:
            self.netns = netns.setup(self.uid, self.ip, self.kl.pool.gateway,
                                     self.kl.args.router_netns, self.kl.args.bridge)
        except OSError as e:
            self._event("Warning", "FailedCreatePodSandBox",
                        "Failed to create pod sandbox: %s" % e)
            return
        self._etc_files(pod)
        self._sa_volume(pod)

    def _etc_files(self, pod):
        spec = pod.get("spec") or {}
        d = os.path.join(self.kl.sandbox.volumes, self.uid, "etc")
        host = spec.get("hostname") or self.name
        fqdn = host + ("." + spec["subdomain"] + "." + self.ns + ".svc.cluster.local"
                       if spec.get("subdomain") else "")
        try:
            os.makedirs(d, exist_ok=True)
            _write(os.path.join(d, "hosts"),
                   "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n"
                   "::1\tlocalhost ip6-localhost ip6-loopback\n%s\t%s%s\n"
                   % (self.ip, fqdn, "\t" + host if fqdn != host else ""), 0o644)
            _write(os.path.join(d, "resolv.conf"),
                   "search %s.svc.cluster.local svc.cluster.local cluster.local\n"
                   "options ndots:5 timeout:1 attempts:1\n" % self.ns, 0o644)
            self.etc_dir = d
        except OSError as e:
            self.kl.log("pod %s/%s: no /etc/hosts of its own: %s" % (self.ns, self.name, e))

    def _sa_volume(self, pod):
        """The projected volume mounted at the ServiceAccount path (kube-api-access-*, which
        the ServiceAccount admission plugin adds unless automountServiceAccountToken is
        false): its token, ConfigMap and downward API files, written to a directory that each
        container's private mount namespace binds read-only at that path."""
        spec = pod.get("spec") or {}
        mounted = {vm.get("name") for c in spec.get("containers") or []
                   for vm in c.get("volumeMounts") or [] if vm.get("mountPath") == SA_MOUNT}
        vols = [v for v in spec.get("volumes") or [] if v.get("name") in mounted and
                v.get("projected")]
        if not vols or self.kl.sandbox.mount_reason:
            return
        vol = vols[0]
        self.sa_sources = (vol["projected"].get("sources") or [], vol["projected"].get(
            "defaultMode", 0o644))
        d = os.path.join(self.kl.sandbox.volumes, self.uid, vol["name"])
        os.makedirs(d, exist_ok=True)
        self.sa_dir = d
        self._write_projected(pod)

    def _write_projected(self, pod):
        sources, mode = self.sa_sources
        mode = mode if isinstance(mode, int) else 0o644
        for src in sources:
            try:
                if "serviceAccountToken" in src:
                    self._write_token(pod, src["serviceAccountToken"], mode)
                elif "configMap" in src:
                    cm = self.kl.lookup("configmap", self.ns, src["configMap"].get("name", ""))
                    data = (cm or {}).get("data") or {}
                    if cm is None and src["configMap"].get("name") == "kube-root-ca.crt":
                        with open(self.kl.client.ca_file) as f:
                            data = {"ca.crt": f.read()}
                    items = src["configMap"].get("items") or [{"key": k, "path": k}
                                                              for k in data]
                    for it in items:
                        if it.get("key") in data:
                            _write(os.path.join(self.sa_dir, it["path"]), data[it["key"]],
                                   it.get("mode", mode))
                elif "downwardAPI" in src:
                    for it in src["downwardAPI"].get("items") or []:
                        fp = (it.get("fieldRef") or {}).get("fieldPath", "")
                        _write(os.path.join(self.sa_dir, it["path"]),
                               podspec._field(pod, fp, self._ctx()), it.get("mode", mode))
            except (OSError, kapi.ApiError, podspec.ConfigError) as e:
                self.kl.log("pod %s/%s: projected volume: %s" % (self.ns, self.name, e))

    def _write_token(self, pod, src, mode):
        sa = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        exp = int(src.get("expirationSeconds") or 3600)
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"expirationSeconds": exp,
                         "boundObjectRef": {"apiVersion": "v1", "kind": "Pod",
                                            "name": self.name, "uid": self.uid}}}
        if src.get("audience"):
            body["spec"]["audiences"] = [src["audience"]]
        try:
            tr = self.kl.client.post("/api/v1/namespaces/%s/serviceaccounts/%s/token"
                                     % (self.ns, sa), body)
        except kapi.ApiError as e:
            self.token_refresh_at = time.time() + TOKEN_RETRY
            self._event("Warning", "FailedMount", "MountVolume.SetUp failed: failed to fetch "
                        "token: %s" % e.message)
            return
        _write(os.path.join(self.sa_dir, src.get("path") or "token"),
               tr["status"]["token"], mode)
        # Refreshed at 80% of the requested lifetime, as a kubelet does; the server may
        # issue a longer one, but the pod must not depend on that.
        self.token_refresh_at = time.time() + 0.8 * exp

    def _token(self, pod):
        if self.sa_dir and self.token_refresh_at and time.time() >= self.token_refresh_at:
            for src in self.sa_sources[0]:
                if "serviceAccountToken" in src:
                    self._write_token(pod, src["serviceAccountToken"], 0o644)

    # --- containers ---------------------------------------------------------------------------

    def _ctx(self):
        a = self.kl.args
        return {"node": a.node, "pod_ip": self.ip or "", "host_ip": a.node_ip,
                "api_host": a.api_host, "api_port": a.api_port,
                "node_cpu_millis": self.kl.allocatable["cpu"],
                "node_memory_bytes": self.kl.allocatable["memory"]}

    def _step(self, pod):
        policy = (pod.get("spec") or {}).get("restartPolicy", "Always")
        now = time.time()
        for c in self.containers:
            if c.done:
                continue
            if c.proc is None:
                if now >= c.next_start:
                    self._start(pod, c)
                continue
            rc = c.proc.poll()
            if rc is not None:
                self._exited(pod, c, rc, policy)
                continue
            self._probes(pod, c, now)

    def _start(self, pod, c):
        spec = c.spec
        ctx = self._ctx()
        ctx["base"] = {k: os.environ[k] for k in podspec.INHERITED if k in os.environ}
        # A container runtime sets HOME from the user's passwd entry: root's, or / for others.
        ctx["base"]["HOME"] = "/root" if _security(pod, spec) is None else "/"
        ctx["defaults"] = podspec.app_defaults(pod, spec, self.ip)
        try:
            env = podspec.container_env(pod, spec, ctx, self.kl.lookup)
        except (podspec.ConfigError, kapi.ApiError) as e:
            return self._cannot_start(c, "CreateContainerConfigError", str(e), 5)
        cmd = podspec.command_line(self.kl.images, spec, env)
        if cmd is None:
            return self._cannot_start(
                c, "ErrImagePull", 'image "%s" is not in the image map (%s)'
                % (spec.get("image"), self.kl.args.images), 10)
        argv, env = cmd
        if not argv:
            return self._cannot_start(c, "CreateContainerError",
                                      "no command specified for image %s" % spec.get("image"),
                                      10)
        try:
            cpu, mem = podresize.limits(c.actual)
        except ValueError as e:
            return self._cannot_start(c, "CreateContainerConfigError", str(e), 10)
        if c.cg_procs is None and not c.cg_info:
            c.cg_procs, c.cg_info = self.kl.cg.create(
                "%s_%s" % (self.uid.replace("-", "")[:8], c.name), cpu, mem)
        c.oom_before = self.kl.cg.oom_kills(c.cg_info)
        self.kl.cg.reset_peak(c.cg_info)
        user = _security(pod, spec)
        if user is not None:
            argv = ["setpriv", "--reuid", str(user[0]), "--regid", str(user[1]),
                    "--clear-groups", "--"] + argv
        if self.etc_dir:
            env["SKC_HOSTS"] = os.path.join(self.etc_dir, "hosts")
            env["SKC_RESOLV"] = os.path.join(self.etc_dir, "resolv.conf")
            argv = ["/bin/sh", "-c", ETC_WRAPPER, "etc"] + argv
        inner = self.kl.sandbox.command(argv, env, c.cg_procs, self.sa_dir, self.ip)
        if inner[0] != "unshare":
            inner = ["unshare", "--mount", "--propagation", "private"] + inner
        full = ["nsenter", "--net=/run/netns/" + self.netns, "--"] + inner
        os.makedirs(os.path.join(self.log_dir, c.name), exist_ok=True)
        c.log_path = os.path.join(self.log_dir, c.name, "%d.log" % c.restarts)
        try:
            with open(c.log_path, "ab") as logf:
                c.proc = subprocess.Popen(full, env=env, stdin=subprocess.DEVNULL, stdout=logf,
                                          stderr=subprocess.STDOUT, start_new_session=True,
                                          cwd=spec.get("workingDir") or "/")
        except OSError as e:
            return self._cannot_start(c, "RunContainerError", str(e), 10)
        c.start_epoch = time.time()
        c.started_at = now_ts(c.start_epoch)
        c.container_id = "skc://%s-%s-%d" % (self.uid.replace("-", "")[:8], c.name,
                                             c.restarts)
        c.waiting = c.waiting_msg = None
        c.term = None
        c.ready = False
        c.started = False
        c.killed_by = None
        c.probes = {k: probes.Probe(spec.get(k + "Probe")) for k in ("startup", "liveness",
                                                              "readiness")}
        for p in c.probes.values():
            p.next_at = c.start_epoch + float(p.get("initialDelaySeconds", 0))

    def _cannot_start(self, c, reason, message, retry):
        if c.waiting != reason or c.waiting_msg != message:
            self._event("Warning", "Failed", "Error: %s: %s" % (reason, message))
        c.waiting, c.waiting_msg = reason, message
        c.next_start = time.time() + retry

    def _exited(self, pod, c, rc, policy):
        code = 128 - rc if rc < 0 else rc
        if self.kl.cg.oom_kills(c.cg_info) > c.oom_before or \
                (rc == -signal.SIGKILL and c.killed_by is None and
                 self.kl.cg.near_limit(c.cg_info)):
            reason, code = "OOMKilled", 137
        elif rc == 126 and c.cg_procs:
            reason = "StartError"
        else:
            reason = "Completed" if code == 0 else "Error"
        # Whatever the container started (a shell's children) goes with it.
        self.kl.cg.remove_procs(c.cg_info)
        term = {"exitCode": code, "reason": reason, "startedAt": c.started_at,
                "finishedAt": now_ts(), "containerID": c.container_id}
        c.proc = None
        c.ready = c.started = False
        c.exit_code = code
        if c.killed_by == "resize":
            c.last_term, c.term = term, None
            c.restarts += 1
            c.next_start = 0.0
            c.waiting = "ContainerCreating"
        elif policy == "Always" or (policy == "OnFailure" and code != 0):
            c.last_term = term
            c.term = None
            delay = min(self.kl.args.restart_backoff * (2 ** c.restarts),
                        self.kl.args.restart_backoff_max)
            if time.time() - (c.start_epoch or 0) > 600:
                delay = self.kl.args.restart_backoff  # ran for 10 minutes: backoff resets
            c.restarts += 1
            c.next_start = time.time() + delay
            c.waiting = "CrashLoopBackOff"
            c.waiting_msg = "back-off %ds restarting failed container=%s pod=%s_%s(%s)" % (
                delay, c.name, self.name, self.ns, self.uid)
            self._event("Warning", "BackOff", "Back-off restarting failed container %s in "
                        "pod %s_%s(%s)" % (c.name, self.name, self.ns, self.uid))
        else:
            c.done = True
            c.term = term

    def _kill(self, c, grace, why):
        """Stops container c: SIGTERM to its processes, grace seconds, then SIGKILL."""
        if c.proc is None:
            return
        c.killed_by = why
        _signal(c, signal.SIGTERM, self.kl.cg)
        deadline = time.time() + grace
        while time.time() < deadline and c.proc.poll() is None:
            time.sleep(0.05)
        _signal(c, signal.SIGKILL, self.kl.cg)
        try:
            c.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    # --- probes -------------------------------------------------------------------------------

    def _probes(self, pod, c, now):
        sp = c.probes.get("startup")
        if not c.started:
            if not sp or not sp.spec:
                c.started = True
            elif now >= sp.next_at:
                if self._run_probe(c, sp, now):
                    c.started = True
                elif sp.bad >= int(sp.get("failureThreshold", 3)):
                    self._probe_kill(pod, c, "startup")
                    return
        if not c.started:
            return
        lp = c.probes.get("liveness")
        if lp and lp.spec and now >= lp.next_at:
            if not self._run_probe(c, lp, now) and lp.bad >= int(lp.get("failureThreshold", 3)):
                self._probe_kill(pod, c, "liveness")
                return
        rp = c.probes.get("readiness")
        if not rp or not rp.spec:
            c.ready = True
        elif now >= rp.next_at:
            if self._run_probe(c, rp, now):
                if rp.ok >= int(rp.get("successThreshold", 1)):
                    c.ready = True
            elif rp.bad >= int(rp.get("failureThreshold", 3)):
                c.ready = False

    def _run_probe(self, c, p, now):
        ok, why = probes.probe_once(p.spec, c.spec, self.ip, self.netns)
        p.next_at = now + float(p.get("periodSeconds", 10))
        if ok:
            p.ok, p.bad = p.ok + 1, 0
        else:
            p.ok, p.bad = 0, p.bad + 1
            kind = [k for k, v in c.probes.items() if v is p][0]
            self._event("Warning", "Unhealthy", "%s probe failed: %s"
                        % (kind.capitalize(), why))
        return ok

    def _probe_kill(self, pod, c, kind):
        self._event("Normal", "Killing", "Container %s failed %s probe, will be restarted"
                    % (c.name, kind))
        grace = float((pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30))
        self._kill(c, min(grace, self.kl.args.max_grace), kind)

    # --- resize -------------------------------------------------------------------------------

    def _resize(self, pod):
        by_name = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or []}
        desired = {c.name: (by_name.get(c.name) or {}).get("resources") or {}
                   for c in self.containers}
        try:
            changed = [c for c in self.containers
                       if podresize.norm(desired[c.name]) != podresize.norm(c.allocated)]
        except ValueError:
            changed = []
        if changed:
            verdict = podresize.decide(desired, self.kl.allocatable,
                                       self.kl.allocated_requests(exclude=self))
            if verdict:
                if verdict != self.resize_pending:
                    self._event("Warning", "Resize" + verdict[0], verdict[1])
                self.resize_pending = verdict
            else:
                for c in changed:
                    c.allocated = desired[c.name]
                self.resize_pending = None
                self.resize_error = None
                self._event("Normal", "ResizeStarted", "Pod resize started: generation %s"
                            % (pod.get("metadata") or {}).get("generation"))
                return  # the next pass actuates, once the status shows the resize started
        else:
            self.resize_pending = None
        todo = [c for c in self.containers
                if podresize.norm(c.allocated) != podresize.norm(c.actual)]
        shown = self.written and any(x.get("type") == "PodResizeInProgress"
                                     for x in self.written.get("conditions") or [])
        if not todo or not shown:
            return
        errors = [e for e in (self._actuate(pod, c) for c in todo) if e]
        self.resize_error = "; ".join(errors) if errors else None

    def _actuate(self, pod, c):
        """Applies c.allocated to the container; an error message, or None when applied."""
        cpu, mem = podresize.limits(c.allocated)
        restart = podresize.needs_restart(c.spec, c.actual, c.allocated)
        _, old_mem = podresize.limits(c.actual)
        if not restart and c.proc is not None and mem is not None and \
                (old_mem is None or mem < old_mem):
            usage = self.kl.cg.memory_usage(c.cg_info)
            if usage is not None and usage > mem:
                return ("attempting to set container %s memory limit (%d) below its current "
                        "usage (%d)" % (c.name, mem, usage))
        try:
            self.kl.cg.set_limits(c.cg_info, cpu, mem)
        except OSError as e:
            return "failed to update the cgroup of container %s: %s" % (c.name, e)
        c.actual = c.allocated
        c.spec = dict(c.spec, resources=c.allocated)
        if restart and c.proc is not None:
            self._kill(c, 0, "resize")
            rc = c.proc.poll()
            self._exited(pod, c, rc if rc is not None else -9, "Always")
        return None

    # --- status ---------------------------------------------------------------------------------

    def snapshot(self):
        todo = any(podresize.norm(c.allocated) != podresize.norm(c.actual)
                   for c in self.containers)
        return {"ip": self.ip, "host_ip": self.kl.args.node_ip, "start_time": self.start_time,
                "sandbox": bool(self.netns), "deleting": self.deleting,
                "resize_pending": self.resize_pending,
                "resize_in_progress": (self.resize_error or "") if todo else None,
                "containers": [c.snapshot() for c in self.containers]}

    def _report(self, pod):
        st = podstatus.compose(pod, self.snapshot(), now_ts())
        if self.written is not None and _comparable(self.written) == _comparable(st):
            return
        try:
            self.kl.client.merge_patch(kapi.pod_path(self.ns, self.name, "status"),
                                       podstatus.status_patch(pod, st))
            self.written = st
        except kapi.ApiError as e:
            if e.code in (404, 409):
                self.gone = e.code == 404 or "UID" in e.message or "uid" in e.message
            self.kl.log("pod %s/%s: status not written: %s" % (self.ns, self.name, e))

    def _event(self, etype, reason, message):
        self.kl.event(self.pod, etype, reason, message)

    # --- stopping -------------------------------------------------------------------------------

    def _stop_containers(self, grace):
        running = [c for c in self.containers if c.proc is not None]
        for c in running:
            c.killed_by = "stop"
            _signal(c, signal.SIGTERM, self.kl.cg)
        deadline = time.time() + grace
        while time.time() < deadline and any(c.proc.poll() is None for c in running):
            time.sleep(0.05)
        for c in running:
            _signal(c, signal.SIGKILL, self.kl.cg)
            try:
                c.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            rc = c.proc.returncode
            code = 128 - rc if rc is not None and rc < 0 else (rc or 0)
            c.term = {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                      "startedAt": c.started_at, "finishedAt": now_ts(),
                      "containerID": c.container_id}
            c.exit_code = code
            c.proc = None
            c.ready = c.started = False
            c.waiting = None

    def _terminate(self, pod):
        """Graceful deletion: SIGTERM, the pod's grace period, SIGKILL, the terminal status,
        then the final delete (grace 0, on the condition that the uid is still this pod's)."""
        self.deleting = True
        m = pod["metadata"]
        grace = m.get("deletionGracePeriodSeconds")
        if grace is None:
            grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        self._stop_containers(min(float(grace), self.kl.args.max_grace))
        for c in self.containers:
            if c.term is None and not c.done:
                c.waiting = None
                c.term = {"exitCode": 137, "reason": "ContainerStatusUnknown",
                          "message": "The container could not be located when the pod was "
                          "terminated", "startedAt": None, "finishedAt": now_ts()} \
                    if c.last_term is None else dict(c.last_term)
                c.exit_code = c.term["exitCode"]
        self._report(self.pod)
        # The pod's resources are reclaimed before the API object goes, as a kubelet's status
        # manager waits for that: whoever sees the pod gone may reuse its name and address.
        self._cleanup()
        self.kl.final_delete(self.pod)
        self.gone = True

    def _cleanup(self):
        """Removes the pod's cgroups, network and volumes (again: nothing to do is fine)."""
        for c in self.containers:
            self.kl.cg.remove(c.cg_info)
            c.cg_info = {}
        if self.netns or netns.exists(self.uid):
            netns.teardown(self.uid, self.kl.args.router_netns)
        self.netns = None
        self.kl.sandbox.remove(self.uid)
        if not self.kl.stopping.is_set():
            # The address stays the pod's across a kubelet restart; it is given back once the
            # pod is finished or deleted.
            self.kl.pool.release(self.uid)

    # --- what the node server reads -------------------------------------------------------------

    def usage(self):
        """[{namespace, pod, container, cpu, memory, start}] of the running containers."""
        out = []
        for c in list(self.containers):
            info = c.cg_info
            if c.proc is None or not info:
                continue
            out.append({"namespace": self.ns, "pod": self.name, "container": c.name,
                        "cpu": self.kl.cg.cpu_seconds(info),
                        "memory": self.kl.cg.working_set(info), "start": c.start_epoch})
        return out


def _comparable(st):
    """A status without the parts that change on their own (none today: times are kept)."""
    return json.dumps(st, sort_keys=True)


def _write(path, text, mode):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def _security(pod, c):
    """(uid, gid) the container runs as, from its securityContext or the pod's; None for
    root (no change)."""
    psc = (pod.get("spec") or {}).get("securityContext") or {}
    csc = c.get("securityContext") or {}
    uid = csc.get("runAsUser", psc.get("runAsUser"))
    gid = csc.get("runAsGroup", psc.get("runAsGroup"))
    if uid is None and gid is None:
        return None
    return int(uid or 0), int(gid if gid is not None else 0)


def _signal(c, sig, cg):
    """Signals the container's process group and every process in its cgroups."""
    if c.proc is not None:
        try:
            os.killpg(c.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in cg.pids(c.cg_info):
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
