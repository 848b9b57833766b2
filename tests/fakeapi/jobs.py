"""batch/v1 Jobs in the fake cluster: defaults and validation as the API server applies them, and
the Job controller and TTL-after-finished controller of kube-controller-manager.

The controller keeps the pods of each Job (`completionMode` NonIndexed or Indexed,
`completions`, `parallelism`), counts pods that succeed and fail, replaces a failed pod until
`backoffLimit` is passed (then the Job is Failed with BackoffLimitExceeded and its running pods
are deleted), ends a Job that passes `activeDeadlineSeconds` (DeadlineExceeded), writes the
status and its conditions (SuccessCriteriaMet and Complete; FailureTarget and Failed) as
Kubernetes 1.32 does, and deletes a finished Job `ttlSecondsAfterFinished` later. The pods run
as local processes through the fake's kubelet, like a Deployment's. A pod that vanishes while
it runs (deleted, evicted) counts as failed, as the real controller's tracking finalizer makes
it count.
"""

import calendar
import random
import sys
import time

import admission
from api import jcopy, now_ts
from controller import Controller
from resources import BY_PATH
from store import ApiError

JOB = BY_PATH[("batch", "v1", "jobs")]
POD = BY_PATH[("", "v1", "pods")]

INDEX_KEY = "batch.kubernetes.io/job-completion-index"
UID_LABEL = "batch.kubernetes.io/controller-uid"
NAME_LABEL = "batch.kubernetes.io/job-name"
SAFE = "bcdfghjklmnpqrstvwxz2456789"


def log(msg):
    print("fakeapi: " + msg, file=sys.stderr, flush=True)


def _epoch(ts):
    try:
        return calendar.timegm(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ"))
    except (TypeError, ValueError):
        return time.time()


# --- what the API server does on create and update ------------------------------------------

def default_job(obj):
    """The defaults of a batch/v1 Job. The generated selector and template labels need the uid,
    which the caller assigns before calling this."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if "parallelism" not in spec and "completions" not in spec:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    tpl = spec.setdefault("template", {})
    if not isinstance(tpl, dict):
        return
    tmeta = tpl.setdefault("metadata", {})
    if not spec.get("manualSelector") and meta.get("uid"):
        labels = tmeta.setdefault("labels", {})
        for k, v in ((UID_LABEL, meta["uid"]), (NAME_LABEL, meta.get("name", "")),
                     ("controller-uid", meta["uid"]), ("job-name", meta.get("name", ""))):
            labels.setdefault(k, v)
        spec.setdefault("selector", {"matchLabels": {UID_LABEL: meta["uid"]}})
    if isinstance(tpl.get("spec"), dict):
        from api import default_pod_spec
        # restartPolicy defaults to Always here as in any pod template, which a Job then
        # refuses: the template must say Never or OnFailure, as with a real API server.
        default_pod_spec(tpl["spec"])


def validate_job(obj, old=None):
    """The API server's checks on a Job; returns (field, message) causes."""
    spec = obj.get("spec") or {}
    causes = []
    tpl = spec.get("template") or {}
    pspec = tpl.get("spec") or {}
    if pspec.get("restartPolicy") not in ("OnFailure", "Never"):
        causes.append(("spec.template.spec.restartPolicy", 'Unsupported value: "%s": '
                       'supported values: "OnFailure", "Never"' % (pspec.get("restartPolicy"),)))
    for f in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds",
              "ttlSecondsAfterFinished"):
        v = spec.get(f)
        if v is not None and (not isinstance(v, int) or v < 0):
            causes.append(("spec." + f, "Invalid value: %r: must be greater than or equal to 0"
                           % (v,)))
    mode = spec.get("completionMode")
    if mode not in ("NonIndexed", "Indexed"):
        causes.append(("spec.completionMode", 'Unsupported value: "%s": supported values: '
                       '"NonIndexed", "Indexed"' % (mode,)))
    if mode == "Indexed" and spec.get("completions") is None:
        causes.append(("spec.completions", "Required value: when completion mode is Indexed"))
    sel = spec.get("selector")
    if sel:
        from store import selector_matches
        if not selector_matches(sel, (tpl.get("metadata") or {}).get("labels") or {}):
            causes.append(("spec.template.metadata.labels", "Invalid value: `selector` does not "
                           "match template `labels`"))
    if old is not None:
        ospec = old.get("spec") or {}
        for f in ("completionMode", "selector", "template"):
            if ospec.get(f) != spec.get(f):
                causes.append(("spec." + f, "Invalid value: field is immutable"))
    return causes


def _ranges(idx):
    """Sorted indexes as the API writes completedIndexes: "0-2,4"."""
    out = []
    for i in sorted(idx):
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return ",".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in out)


def _cond(conds, ctype, reason, message, now):
    if any(c.get("type") == ctype for c in conds):
        return conds
    return conds + [{"type": ctype, "status": "True", "lastProbeTime": now,
                     "lastTransitionTime": now, "reason": reason, "message": message}]


class _Track:
    """What the controller remembers of one Job between passes: the pods it created and how
    each ended, so a pod deleted while it ran still counts as failed."""

    def __init__(self):
        self.pods = {}  # pod uid -> index (None for NonIndexed)
        self.failed = 0
        self.succeeded = set()  # indexes (Indexed) or pod uids (NonIndexed)
        self.counted = set()  # pod uids whose end is counted
        self.next_create = 0.0


class JobController(Controller):
    name = "job-controller"
    watches = (JOB.key, POD.key)
    period = 0.5

    def __init__(self, api, stop, args):
        Controller.__init__(self, api, stop)
        self.backoff = max(0.05, float(getattr(args, "restart_backoff", 1.0)))
        self.tracks = {}  # job uid -> _Track

    def sync(self):
        entries, _ = self.store.entries(JOB.key)
        live = set()
        for e in entries:
            uid = e.obj["metadata"].get("uid")
            live.add(uid)
            try:
                with self.store.lock:
                    cur = self.store.get(JOB.key, e.obj["metadata"]["namespace"],
                                         e.obj["metadata"]["name"])
                    if cur is not None and cur["metadata"].get("uid") == uid:
                        self._reconcile(cur)
            except ApiError as err:
                if err.code != 409:
                    log("job %s: %s" % (e.obj["metadata"]["name"], err.message))
        for uid in [u for u in self.tracks if u not in live]:
            del self.tracks[uid]

    # --- one Job --------------------------------------------------------------------------------

    def _pods(self, job):
        uid = job["metadata"]["uid"]
        out = []
        for k, ns, name in self.store.dependents(uid):
            if k != POD.key:
                continue
            p = self.store.get(k, ns, name)
            if p is not None:
                out.append(p)
        return out

    def _reconcile(self, job):
        meta, spec = job["metadata"], job.get("spec") or {}
        st = job.get("status") or {}
        conds = st.get("conditions") or []
        finished = any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                       for c in conds)
        if meta.get("deletionTimestamp"):
            return
        if finished:
            self._ttl(job, st)
            return
        tr = self.tracks.setdefault(meta["uid"], _Track())
        indexed = spec.get("completionMode") == "Indexed"
        completions = spec.get("completions")
        parallelism = spec.get("parallelism", 1)
        pods = self._pods(job)
        present = {p["metadata"]["uid"]: p for p in pods}
        active = []
        for puid, p in present.items():
            phase = (p.get("status") or {}).get("phase")
            idx = _index_of(p) if indexed else None
            tr.pods.setdefault(puid, idx)
            if puid in tr.counted:
                continue
            if phase == "Succeeded":
                tr.counted.add(puid)
                tr.succeeded.add(idx if indexed else puid)
            elif phase == "Failed" or p["metadata"].get("deletionTimestamp"):
                tr.counted.add(puid)
                tr.failed += 1
                tr.next_create = time.time() + self.backoff * (2 ** min(tr.failed - 1, 5))
            else:
                active.append(p)
        # A pod gone from the store before it ended was deleted or evicted while running.
        for puid in list(tr.pods):
            if puid not in present and puid not in tr.counted:
                tr.counted.add(puid)
                tr.failed += 1
                tr.next_create = time.time() + self.backoff * (2 ** min(tr.failed - 1, 5))
        now = now_ts()
        start = st.get("startTime") or now
        new = {"startTime": start, "active": len(active), "ready": sum(
            1 for p in active if _pod_ready(p)), "terminating": 0,
            "uncountedTerminatedPods": {}}
        if tr.succeeded:
            new["succeeded"] = len(tr.succeeded)
        if tr.failed:
            new["failed"] = tr.failed
        if indexed and tr.succeeded:
            new["completedIndexes"] = _ranges(tr.succeeded)
        conds = list(conds)
        deadline = spec.get("activeDeadlineSeconds")
        done = (completions is not None and len(tr.succeeded) >= completions) or \
            (completions is None and tr.succeeded and not active)
        failed_reason = None
        if tr.failed > spec.get("backoffLimit", 6):
            failed_reason = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
        elif deadline is not None and time.time() - _epoch(start) > deadline:
            failed_reason = ("DeadlineExceeded", "Job was active longer than specified deadline")
        if done:
            for p in active:
                self._delete_pod(p)
            new["active"] = new["ready"] = 0
            conds = _cond(conds, "SuccessCriteriaMet", "CompletionsReached",
                          "Reached expected number of succeeded pods", now)
            conds = _cond(conds, "Complete", "CompletionsReached",
                          "Reached expected number of succeeded pods", now)
            new["completionTime"] = now
        elif failed_reason:
            for p in active:
                self._delete_pod(p)
            new["active"] = new["ready"] = 0
            conds = _cond(conds, "FailureTarget", failed_reason[0], failed_reason[1], now)
            conds = _cond(conds, "Failed", failed_reason[0], failed_reason[1], now)
        elif not spec.get("suspend"):
            self._create_pods(job, tr, active, indexed, completions, parallelism)
            new["active"] = len([p for p in self._pods(job)
                                 if p["metadata"]["uid"] not in tr.counted and
                                 (p.get("status") or {}).get("phase") not in
                                 ("Succeeded", "Failed")])
        if conds:
            new["conditions"] = conds
        new = {k: v for k, v in new.items() if v or k in ("startTime",
                                                          "uncountedTerminatedPods")}
        if new.get("active") is None and "ready" in new:
            new.pop("ready")
        if new.get("ready") is None:
            new["ready"] = 0
        new.setdefault("terminating", 0)
        if new != st:
            self.api.write_status(JOB, meta["namespace"], meta["name"], new)

    def _create_pods(self, job, tr, active, indexed, completions, parallelism):
        if time.time() < tr.next_create:
            return  # back-off after a failure; the loop comes back within half a second
        if indexed:
            busy = {_index_of(p) for p in active}
            todo = [i for i in range(completions) if i not in tr.succeeded and i not in busy]
        else:
            left = (completions - len(tr.succeeded)) if completions is not None else \
                (parallelism if not tr.succeeded else 0)
            todo = [None] * max(0, left - len(active))
        room = max(0, parallelism - len(active))
        for idx in todo[:room]:
            self._create_pod(job, idx)

    def _create_pod(self, job, idx):
        meta = job["metadata"]
        tpl = (job.get("spec") or {}).get("template") or {}
        pm = jcopy(tpl.get("metadata") or {})
        suffix = "".join(random.choice(SAFE) for _ in range(5))
        pm["name"] = "%s-%s%s" % (meta["name"], "%d-" % idx if idx is not None else "", suffix)
        pm["namespace"] = meta["namespace"]
        pm["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": meta["name"],
                                  "uid": meta["uid"], "controller": True,
                                  "blockOwnerDeletion": True}]
        spec = jcopy(tpl.get("spec") or {})
        if idx is not None:
            pm.setdefault("annotations", {})[INDEX_KEY] = str(idx)
            pm.setdefault("labels", {})[INDEX_KEY] = str(idx)
            spec.setdefault("hostname", "%s-%d" % (meta["name"], idx))
            ref = {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                "apiVersion": "v1", "fieldPath": "metadata.annotations['%s']" % INDEX_KEY}}}
            for c in spec.get("containers") or []:
                env = c.setdefault("env", [])
                if not any(e.get("name") == "JOB_COMPLETION_INDEX" for e in env):
                    env.append(jcopy(ref))
        try:
            self.api.create(POD, meta["namespace"], {"metadata": pm, "spec": spec})
        except ApiError as e:
            if e.code != 403:
                raise
            # Refused at admission: the Job controller's Warning Event; the next pass retries.
            admission.failed_create(self.api, job, "Job", "batch/v1", e, "job-controller")

    def _delete_pod(self, p):
        try:
            self.api.delete(POD, p["metadata"]["namespace"], p["metadata"]["name"])
        except ApiError:
            pass

    def _ttl(self, job, st):
        """The TTL-after-finished controller: a finished Job goes ttlSecondsAfterFinished after
        it finished, its pods with it (background propagation)."""
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None:
            return
        end = max([_epoch(c.get("lastTransitionTime")) for c in st.get("conditions") or []
                   if c.get("type") in ("Complete", "Failed")] or [time.time()])
        if time.time() >= end + ttl:
            m = job["metadata"]
            try:
                self.api.delete(JOB, m["namespace"], m["name"],
                                {"propagationPolicy": "Background"})
            except ApiError:
                pass


def _index_of(p):
    v = ((p.get("metadata") or {}).get("annotations") or {}).get(INDEX_KEY)
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _pod_ready(p):
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False
