"""Admission for pod creation, in the order a real API server runs its plugins: LimitRanger
(defaults, then min/max per container), PodSecurity (the `restricted` level on a namespace
labelled pod-security.kubernetes.io/enforce=restricted) and ResourceQuota (requests, limits and
pod count against every quota of the namespace). A refusal is the server's 403 Forbidden with
its message shape, `pods "NAME" is forbidden: ...`, which the ReplicaSet and Job controllers
copy into their FailedCreate condition and Events."""

import re
import time

from controller import Controller
from resources import BY_KEY
from store import ApiError

QUOTA = ("", "resourcequotas")
LIMITS = ("", "limitranges")
NAMESPACES = ("", "namespaces")
PODS = ("", "pods")
ENFORCE = "pod-security.kubernetes.io/enforce"
ENFORCE_VERSION = "pod-security.kubernetes.io/enforce-version"

_SUFFIX = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50,
           "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "": 1}
_QTY = re.compile(r"^([+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)(m|Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$")


def milli(q):
    """A quantity in thousandths: '500m' -> 500, '1' -> 1000, '128Mi' -> 134217728000."""
    m = _QTY.match(str(q).strip())
    if not m:
        raise ValueError("quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    num, suf = float(m.group(1)), m.group(2) or ""
    if suf == "m":
        return int(round(num))
    return int(round(num * _SUFFIX[suf] * 1000))


def fmt(resource, mv):
    """A quantity printed as resource.Quantity does: cpu as '1500m' or '2', memory in the
    largest binary unit that divides it ('128Mi'), counts as integers."""
    if mv % 1000:
        return "%dm" % mv
    v = mv // 1000
    if resource.endswith("cpu") or v == 0:
        return str(v)
    for suf in ("Pi", "Ti", "Gi", "Mi", "Ki"):
        if v % _SUFFIX[suf] == 0:
            return "%d%s" % (v // _SUFFIX[suf], suf)
    return str(v)


def _forbidden(name, why):
    return ApiError(403, "Forbidden", 'pods "%s" is forbidden: %s' % (name, why),
                    {"name": name, "kind": "pods"})


def _containers(spec):
    return [c for c in (spec.get("containers") or []) if isinstance(c, dict)]


def _all_containers(spec):
    return [c for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])
            if isinstance(c, dict)]


# --- LimitRanger ---------------------------------------------------------------------------------

def _limit_items(store, ns):
    items, _ = store.entries(LIMITS, ns)
    out = []
    for e in items:
        for it in ((e.obj.get("spec") or {}).get("limits") or []):
            if isinstance(it, dict) and it.get("type", "Container") == "Container":
                out.append(it)
    return out


def limit_ranger(store, ns, pod, defaults=True):
    """Defaults first (default -> limits, defaultRequest -> requests, a missing request taken
    from the limit; not on a resize), then min and max per container; all violations in one
    message."""
    items = _limit_items(store, ns)
    if not items:
        return
    spec = pod.get("spec") or {}
    for it in items if defaults else ():
        for c in _all_containers(spec):
            r = c.setdefault("resources", {})
            for k, v in (it.get("default") or {}).items():
                r.setdefault("limits", {}).setdefault(k, v)
            for k, v in (it.get("defaultRequest") or {}).items():
                r.setdefault("requests", {}).setdefault(k, v)
            for k, v in list((r.get("limits") or {}).items()):
                if k in (it.get("default") or {}) or k in (it.get("defaultRequest") or {}):
                    r.setdefault("requests", {}).setdefault(k, v)
    errs = []
    for it in items:
        for c in _all_containers(spec):
            r = c.get("resources") or {}
            req, lim = r.get("requests") or {}, r.get("limits") or {}
            for k, v in sorted((it.get("min") or {}).items()):
                if k not in req:
                    errs.append("minimum %s usage per Container is %s.  No request is specified"
                                % (k, v))
                elif milli(req[k]) < milli(v):
                    errs.append("minimum %s usage per Container is %s, but request is %s"
                                % (k, v, req[k]))
                elif k in lim and milli(lim[k]) < milli(v):
                    errs.append("minimum %s usage per Container is %s, but limit is %s"
                                % (k, v, lim[k]))
            for k, v in sorted((it.get("max") or {}).items()):
                if k not in lim:
                    errs.append("maximum %s usage per Container is %s.  No limit is specified"
                                % (k, v))
                elif milli(lim[k]) > milli(v):
                    errs.append("maximum %s usage per Container is %s, but limit is %s"
                                % (k, v, lim[k]))
                elif k in req and milli(req[k]) > milli(v):
                    errs.append("maximum %s usage per Container is %s, but request is %s"
                                % (k, v, req[k]))
    if errs:
        # utilerrors.NewAggregate: one error bare, several in brackets.
        raise _forbidden(pod["metadata"]["name"],
                         errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")


# --- PodSecurity (restricted) --------------------------------------------------------------------

_ALLOWED_VOLUMES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                    "persistentVolumeClaim", "projected", "secret")


def _quote_list(names, word):
    q = ", ".join('"%s"' % n for n in names)
    return "%s %s" % (word if len(names) == 1 else word + "s", q)


def pod_security_violations(spec):
    """The restricted level's checks (baseline included), each as (title, detail) in the
    wording of the real PodSecurity admission."""
    out = []
    psc = spec.get("securityContext") or {}
    cs = _all_containers(spec)

    def csc(c):
        return c.get("securityContext") or {}

    host = [k + "=true" for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k)]
    if host:
        out.append(("host namespaces", ", ".join(host)))
    priv = [c["name"] for c in cs if csc(c).get("privileged")]
    if priv:
        out.append(("privileged", "%s must not set securityContext.privileged=true"
                    % _quote_list(priv, "container")))
    hostports = []
    for c in cs:
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                hostports.append((c.get("name", ""), p["hostPort"]))
    if hostports:
        out.append(("hostPort", ", ".join('container "%s" uses hostPort %s' % hp
                                          for hp in hostports)))
    bad_vols = []
    for v in spec.get("volumes") or []:
        kinds = [k for k in v if k != "name"]
        if kinds and not any(k in _ALLOWED_VOLUMES for k in kinds):
            bad_vols.append((v.get("name", ""), kinds[0]))
    if bad_vols:
        out.append(("restricted volume types", ", ".join(
            'volume "%s" uses restricted volume type "%s"' % bv for bv in bad_vols)))
    ape = [c["name"] for c in cs if csc(c).get("allowPrivilegeEscalation") is not False]
    if ape:
        out.append(("allowPrivilegeEscalation != false", "%s must set "
                    "securityContext.allowPrivilegeEscalation=false"
                    % _quote_list(ape, "container")))
    nodrop, badadd = [], []
    for c in cs:
        caps = csc(c).get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            nodrop.append(c["name"])
        for a in caps.get("add") or []:
            if a != "NET_BIND_SERVICE":
                badadd.append((c["name"], a))
    if nodrop or badadd:
        parts = []
        if nodrop:
            parts.append('%s must set securityContext.capabilities.drop=["ALL"]'
                         % _quote_list(nodrop, "container"))
        if badadd:
            parts.append("; ".join('container "%s" must not include "%s" in '
                                   "securityContext.capabilities.add" % ba for ba in badadd))
        out.append(("unrestricted capabilities", "; ".join(parts)))
    pod_nonroot = psc.get("runAsNonRoot") is True
    nonroot = [c["name"] for c in cs if csc(c).get("runAsNonRoot") is False or
               (csc(c).get("runAsNonRoot") is not True and not pod_nonroot)]
    if psc.get("runAsNonRoot") is False:
        out.append(("runAsNonRoot != true", "pod must not set securityContext.runAsNonRoot=false"))
    elif nonroot:
        out.append(("runAsNonRoot != true", "pod or %s must set securityContext.runAsNonRoot=true"
                    % _quote_list(nonroot, "container")))
    root = [c["name"] for c in cs if csc(c).get("runAsUser") == 0]
    if psc.get("runAsUser") == 0 or root:
        who = ["pod"] if psc.get("runAsUser") == 0 else []
        if root:
            who.append(_quote_list(root, "container"))
        out.append(("runAsUser=0", "%s must not set runAsUser=0" % " and ".join(who)))
    pod_sc = (psc.get("seccompProfile") or {}).get("type")
    ok_sc = ("RuntimeDefault", "Localhost")
    unset = []
    bad = []
    for c in cs:
        t = (csc(c).get("seccompProfile") or {}).get("type")
        if t is None:
            if pod_sc not in ok_sc:
                unset.append(c["name"])
        elif t not in ok_sc:
            bad.append((c["name"], t))
    if pod_sc is not None and pod_sc not in ok_sc:
        out.append(("seccompProfile", 'pod must not set securityContext.seccompProfile.type to '
                    '"%s"' % pod_sc))
    elif bad:
        out.append(("seccompProfile", "; ".join(
            'container "%s" must not set securityContext.seccompProfile.type to "%s"' % b
            for b in bad)))
    elif unset:
        out.append(("seccompProfile", 'pod or %s must set securityContext.seccompProfile.type '
                    'to "RuntimeDefault" or "Localhost"' % _quote_list(unset, "container")))
    return out


def pod_security(store, ns, pod):
    nso = store.get(NAMESPACES, None, ns) or {}
    labels = (nso.get("metadata") or {}).get("labels") or {}
    if labels.get(ENFORCE) != "restricted":
        return
    v = pod_security_violations(pod.get("spec") or {})
    if v:
        ver = labels.get(ENFORCE_VERSION) or "latest"
        raise _forbidden(pod["metadata"]["name"], 'violates PodSecurity "restricted:%s": %s'
                         % (ver, ", ".join("%s (%s)" % tv for tv in v)))


# --- ResourceQuota -------------------------------------------------------------------------------

_TRACKED = ("pods", "count/pods", "cpu", "memory", "requests.cpu", "requests.memory",
            "limits.cpu", "limits.memory")


def _pod_counts(pod, now):
    """Whether the quota system still charges the pod: not Succeeded or Failed, and not past
    the end of its deletion grace period."""
    if ((pod.get("status") or {}).get("phase")) in ("Succeeded", "Failed"):
        return False
    m = pod.get("metadata") or {}
    if m.get("deletionTimestamp") and m.get("deletionGracePeriodSeconds") is not None:
        try:
            t = time.mktime(time.strptime(m["deletionTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
            t -= time.timezone
        except (TypeError, ValueError):
            return True
        return now <= t + int(m["deletionGracePeriodSeconds"])
    return True


def pod_usage(pod):
    """The quota resources one pod uses, in thousandths: max(sum of containers, largest init
    container) for requests and limits, as the real evaluator does."""
    spec = pod.get("spec") or {}
    u = {"pods": 1000, "count/pods": 1000}
    for kind in ("requests", "limits"):
        for r in ("cpu", "memory"):
            total = 0
            for c in _containers(spec):
                q = ((c.get("resources") or {}).get(kind) or {}).get(r)
                if q is not None:
                    total += milli(q)
            for c in spec.get("initContainers") or []:
                q = ((c.get("resources") or {}).get(kind) or {}).get(r)
                if q is not None:
                    total = max(total, milli(q))
            u["%s.%s" % (kind, r)] = total
    u["cpu"], u["memory"] = u["requests.cpu"], u["requests.memory"]
    return u


def _missing(pod, hard):
    """`must specify` for a quota that tracks requests or limits a container leaves out."""
    out = []
    for key in sorted(hard):
        if key not in ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu",
                       "limits.memory"):
            continue
        kind, r = ("requests", key) if "." not in key else key.split(".", 1)
        miss = [c.get("name", "") for c in _containers(pod.get("spec") or {})
                if r not in ((c.get("resources") or {}).get(kind) or {})]
        if miss:
            out.append("%s for: %s" % (key, ",".join(miss)))
    return out


def namespace_usage(store, ns, hard, skip=None):
    items, _ = store.entries(PODS, ns)
    now = time.time()
    used = {k: 0 for k in hard}
    for e in items:
        p = e.obj
        if p["metadata"].get("name") == skip or not _pod_counts(p, now):
            continue
        u = pod_usage(p)
        for k in used:
            used[k] += u.get(k, 0)
    return used


def resource_quota(api, ns, pod, old=None):
    """Charges a new pod (or a resize of `old`: only the growth, which is what the message
    names as requested) against each quota of the namespace."""
    store = api.store
    items, _ = store.entries(QUOTA, ns)
    if not items:
        return
    name = pod["metadata"]["name"]
    want = pod_usage(pod)
    if old is not None:
        was = pod_usage(old)
        want = {k: max(0, v - was.get(k, 0)) for k, v in want.items()}
    charged = []
    for e in items:
        q = e.obj
        qn = q["metadata"]["name"]
        hard = {k: milli(v) for k, v in ((q.get("spec") or {}).get("hard") or {}).items()
                if k in _TRACKED}
        if not hard:
            continue
        if old is not None and not any(want.get(k, 0) for k in hard):
            continue  # a resize that grows nothing this quota counts
        miss = _missing(pod, hard) if old is None else []
        if miss:
            raise _forbidden(name, "failed quota: %s: must specify %s" % (qn, "; ".join(miss)))
        used = namespace_usage(store, ns, hard)
        over = sorted(k for k in hard if want.get(k, 0) and used[k] + want[k] > hard[k])
        if over:
            raise _forbidden(name, "exceeded quota: %s, requested: %s, used: %s, limited: %s" % (
                qn, ",".join("%s=%s" % (k, fmt(k, want.get(k, 0))) for k in over),
                ",".join("%s=%s" % (k, fmt(k, used[k])) for k in over),
                ",".join("%s=%s" % (k, fmt(k, hard[k])) for k in over)))
        charged.append((q, hard, used))
    for q, hard, used in charged:
        _write_used(api, q, hard, {k: used[k] + want.get(k, 0) for k in hard})


def _write_used(api, q, hard, used):
    st = {"hard": dict((q.get("spec") or {}).get("hard") or {}),
          "used": {k: fmt(k, used[k]) for k in hard}}
    if (q.get("status") or {}) != st:
        try:
            api.write_status(BY_KEY[QUOTA], q["metadata"]["namespace"],
                             q["metadata"]["name"], st)
        except ApiError:
            pass


def refresh_quota(api, q):
    """The quota controller's status for one quota: hard from spec, used from live pods."""
    hard = {k: milli(v) for k, v in ((q.get("spec") or {}).get("hard") or {}).items()
            if k in _TRACKED}
    _write_used(api, q, hard, namespace_usage(api.store, q["metadata"]["namespace"], hard))


def refresh_all(api):
    items, _ = api.store.entries(QUOTA)
    for e in items:
        refresh_quota(api, e.obj)


def admit_pod(api, ns, pod):
    """Runs the plugins on a pod being created; mutates it (LimitRange defaults) or raises
    the 403 a real server answers."""
    limit_ranger(api.store, ns, pod)
    pod_security(api.store, ns, pod)
    resource_quota(api, ns, pod)


def admit_resize(api, ns, old, new):
    """A pods/resize request through the same plugins, as a real server runs them on it:
    LimitRange min/max (no defaults) and ResourceQuota on the growth; Pod Security is not
    asked again (a resize changes no security field)."""
    limit_ranger(api.store, ns, new, defaults=False)
    resource_quota(api, ns, new, old)


class QuotaController(Controller):
    """The quota controller: status.hard and status.used of every ResourceQuota, recomputed
    when pods or quotas change (at most every half second) and every 5 s."""
    name = "resourcequota-controller"
    watches = (PODS, QUOTA)
    period = 5.0

    def sync(self):
        refresh_all(self.api)
        time.sleep(0.5)


# --- the controllers' side: FailedCreate ---------------------------------------------------------

_LAST_EVENT = {}  # owner uid -> (message, time): repeated refusals make one Event per 10 s
_EVENT_EVERY = 10.0


def failed_create(api, owner, kind, api_version, err, component):
    """What the ReplicaSet and Job controllers do when a pod create is refused: a Warning Event
    `FailedCreate` "Error creating: <the server's message>" on the owner (one per 10 s while the
    message stays the same). Returns the message for the owner's condition."""
    import controllers  # controllers imports this module: a late import breaks the cycle

    uid = owner["metadata"].get("uid")
    last = _LAST_EVENT.get(uid)
    now = time.time()
    if last is None or last[0] != err.message or now - last[1] >= _EVENT_EVERY:
        _LAST_EVENT[uid] = (err.message, now)
        controllers.emit_event(api, owner, kind, api_version, "Warning", "FailedCreate",
                               "Error creating: %s" % err.message, component)
    return err.message


def rs_failure_status(rs, failed, now):
    """The ReplicaSet status' conditions: ReplicaFailure True, reason FailedCreate, while its
    pods are refused; no condition once a pass creates what it needs."""
    if not failed:
        return {}
    cur = next((c for c in ((rs.get("status") or {}).get("conditions") or [])
                if c.get("type") == "ReplicaFailure"), None)
    since = cur.get("lastTransitionTime") if cur and cur.get("status") == "True" else now
    return {"conditions": [{"type": "ReplicaFailure", "status": "True",
                            "lastTransitionTime": since, "reason": "FailedCreate",
                            "message": failed}]}


def deploy_failure_condition(st, rss, now, store):
    """The Deployment controller copies a ReplicaSet's ReplicaFailure condition into the
    Deployment's conditions (after Available and Progressing) and drops it once no ReplicaSet
    has one. The ReplicaSets are read as stored now (their status written in the same pass)."""
    conds = [c for c in st.get("conditions") or [] if c.get("type") != "ReplicaFailure"]
    for r in rss:
        m = r["metadata"]
        cur = store.get(("apps", "replicasets"), m.get("namespace"), m.get("name")) or r
        fail = next((c for c in (cur.get("status") or {}).get("conditions") or []
                     if c.get("type") == "ReplicaFailure" and c.get("status") == "True"), None)
        if fail:
            conds.append({"type": "ReplicaFailure", "status": "True",
                          "lastUpdateTime": fail.get("lastTransitionTime", now),
                          "lastTransitionTime": fail.get("lastTransitionTime", now),
                          "reason": fail.get("reason", "FailedCreate"),
                          "message": fail.get("message", "")})
            break
    st["conditions"] = conds
