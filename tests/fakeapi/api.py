"""REST semantics on top of the store: create, get, list, update, patch, delete, defaults,
generation, conflicts, finalizers and ownerReference garbage collection."""

import base64
import copy
import datetime
import json
import re
import threading
import uuid

import admission
import patch as patchlib
import resize
from resources import BY_KEY
from store import (ApiError, fields_match, labels_match, parse_field_selector,
                   parse_label_selector)

NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _label_value_causes(labels, path):
    """The API server's checks on label values: at most 63 characters, alphanumeric at both
    ends, '-', '_' and '.' between."""
    causes = []
    for k, v in (labels or {}).items():
        if isinstance(v, str) and (len(v) > 63 or not LABEL_VALUE_RE.match(v)):
            causes.append((path, "Invalid value: %r: a valid label must be an empty string or "
                           "consist of alphanumeric characters, '-', '_' or '.', and must be "
                           "no more than 63 characters" % v))
    return causes


def now_ts():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_micro():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def jcopy(o):
    """A deep copy; JSON round trips are several times faster than copy.deepcopy."""
    return json.loads(json.dumps(o))


def strip_nulls(o):
    """A typed API server decodes `null` into a zero value that is then omitted: a template
    written with `creationTimestamp: null` (kubectl rollout undo does) equals one without."""
    if isinstance(o, dict):
        return {k: strip_nulls(v) for k, v in o.items() if v is not None}
    if isinstance(o, list):
        return [strip_nulls(v) for v in o]
    return o


def not_found(res, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (res.qualified, name),
                    _details(res, name))


def _details(res, name):
    d = {"name": name, "kind": res.plural}
    if res.group:
        d["group"] = res.group
    return d


def conflict(res, name, why="the object has been modified; please apply your changes to the "
                           "latest version and try again"):
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s'
                    % (res.qualified, name, why), _details(res, name))


def invalid(res, name, causes):
    d = _details(res, name)
    d["kind"] = res.kind
    d["causes"] = [{"reason": "FieldValueTooLong" if m.startswith("Too long")
                    else "FieldValueInvalid", "message": m, "field": f} for f, m in causes]
    msg = '%s "%s" is invalid: %s' % (res.kind, name,
                                       ", ".join("%s: %s" % (f, m) for f, m in causes))
    return ApiError(422, "Invalid", msg, d)


# --- events: one storage (core v1), two views ------------------------------------------------

_EV_MAP = {"involvedObject": "regarding", "message": "note", "source": "deprecatedSource",
           "firstTimestamp": "deprecatedFirstTimestamp",
           "lastTimestamp": "deprecatedLastTimestamp", "count": "deprecatedCount",
           "reportingComponent": "reportingController"}
_EV_BACK = {v: k for k, v in _EV_MAP.items()}


def to_view(res, obj):
    """The stored object as `res` presents it (only events.k8s.io/v1 differs)."""
    if res.group != "events.k8s.io" or obj is None:
        return obj
    return {_EV_MAP.get(k, k): v for k, v in obj.items()}


def from_view(res, obj):
    if res.group != "events.k8s.io" or obj is None:
        return obj
    return {_EV_BACK.get(k, k): v for k, v in obj.items()}


def full(res, obj):
    """The object with kind and apiVersion, as get and watch return it."""
    out = {"kind": res.kind, "apiVersion": res.gv}
    out.update(to_view(res, obj))
    return out


def canonical_full(key):
    res = BY_KEY[key]
    return lambda obj: full(res, obj)


# --- defaults ------------------------------------------------------------------------------------

def _default_container(c):
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    img = c.get("image", "")
    c.setdefault("imagePullPolicy",
                 "Always" if (":" not in img.rsplit("/", 1)[-1] or img.endswith(":latest"))
                 else "IfNotPresent")
    c.setdefault("resources", {})
    for p in c.get("ports") or []:
        p.setdefault("protocol", "TCP")


def default_pod_spec(spec):
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if isinstance(c, dict):
            _default_container(c)


def default_object(res, obj, api):
    spec = obj.get("spec")
    if res.plural in ("deployments", "replicasets") and isinstance(spec, dict):
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        if res.plural == "deployments":
            spec.setdefault("progressDeadlineSeconds", 600)
            st = spec.setdefault("strategy", {})
            st.setdefault("type", "RollingUpdate")
            if st["type"] == "RollingUpdate":
                ru = st.setdefault("rollingUpdate", {})
                ru.setdefault("maxSurge", "25%")
                ru.setdefault("maxUnavailable", "25%")
        tpl = spec.get("template")
        if isinstance(tpl, dict):
            tpl.setdefault("metadata", {})
            if isinstance(tpl.get("spec"), dict):
                default_pod_spec(tpl["spec"])
    elif res.plural == "pods" and isinstance(spec, dict):
        default_pod_spec(spec)
        for c in spec.get("containers") or []:
            # Pods (not templates) get requests defaulted from limits, as the real API does.
            res_ = c.get("resources") if isinstance(c, dict) else None
            if isinstance(res_, dict) and res_.get("limits"):
                req = res_.setdefault("requests", {})
                for k, v in res_["limits"].items():
                    req.setdefault(k, v)
        obj.setdefault("status", {}).setdefault("phase", "Pending")
        obj["status"].setdefault("qosClass", resize.qos_class(spec))
    elif res.plural == "services" and isinstance(spec, dict):
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for p in spec.get("ports") or []:
            p.setdefault("protocol", "TCP")
            p.setdefault("targetPort", p.get("port"))
        if spec.get("type") != "ExternalName" and not spec.get("clusterIP"):
            spec["clusterIP"] = api.alloc_cluster_ip()
        if spec.get("clusterIP") and "clusterIPs" not in spec:
            spec["clusterIPs"] = [spec["clusterIP"]]
        obj.setdefault("status", {"loadBalancer": {}})
    elif res.plural == "jobs" and isinstance(spec, dict):
        import jobs  # jobs imports this module: a late import breaks the cycle
        jobs.default_job(obj)
    elif res.plural == "namespaces":
        meta = obj["metadata"]
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj.setdefault("status", {})["phase"] = "Active"


def validate(res, obj, old=None):
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    causes = []
    if res.group != "rbac.authorization.k8s.io":
        if len(name) > 253 or not NAME_RE.match(name):
            causes.append(("metadata.name", "Invalid value: %r: a lowercase RFC 1123 subdomain "
                           "must consist of lower case alphanumeric characters, '-' or '.'"
                           % name))
        if res.plural in ("namespaces", "services") and not LABEL_RE.match(name):
            causes.append(("metadata.name", "Invalid value: %r: a DNS-1123 label" % name))
    for k, v in (meta.get("labels") or {}).items():
        if not isinstance(v, str):
            causes.append(("metadata.labels", "Invalid value: label %r must be a string" % k))
    causes += _label_value_causes(meta.get("labels"), "metadata.labels")
    for k, v in (meta.get("annotations") or {}).items():
        if not isinstance(v, str):
            causes.append(("metadata.annotations", "Invalid value: annotation %r must be a "
                           "string" % k))
    causes += _annotations_size(meta.get("annotations"), "metadata.annotations")
    if res.plural in ("deployments", "replicasets", "jobs"):
        tpl_meta = ((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}
        causes += _annotations_size(tpl_meta.get("annotations"), "spec.template.metadata.annotations")
    if res.plural in ("deployments", "replicasets"):
        spec = obj.get("spec") or {}
        sel = spec.get("selector")
        tpl_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        causes += _label_value_causes(tpl_labels, "spec.template.metadata.labels")
        if not sel:
            causes.append(("spec.selector", "Required value"))
        else:
            from store import selector_matches
            if not selector_matches(sel, tpl_labels):
                causes.append(("spec.template.metadata.labels", "Invalid value: `selector` does "
                               "not match template `labels`"))
        if not isinstance(spec.get("replicas", 0), int) or spec.get("replicas", 0) < 0:
            causes.append(("spec.replicas", "Invalid value: must be greater than or equal to 0"))
        causes += _validate_pod_spec((spec.get("template") or {}).get("spec"),
                                     "spec.template.spec")
    if res.plural == "pods":
        causes += _validate_pod_spec(obj.get("spec"), "spec")
    if res.plural == "jobs":
        import jobs
        spec = obj.get("spec") or {}
        causes += _label_value_causes(((spec.get("template") or {}).get("metadata") or {}).get(
            "labels"), "spec.template.metadata.labels")
        causes += _validate_pod_spec((spec.get("template") or {}).get("spec"),
                                     "spec.template.spec")
        causes += jobs.validate_job(obj, old)
    if res.plural == "configmaps":
        for k, v in (obj.get("data") or {}).items():
            if not isinstance(v, str):
                causes.append(("data[%s]" % k, "Invalid value: must be a string"))
        causes += _configmap_size(obj)
    if causes:
        raise invalid(res, name, causes)


CONFIGMAP_MAX_BYTES = 1 << 20  # core.MaxSecretSize: data and binaryData values together
ANNOTATIONS_MAX_BYTES = 256 << 10  # apimachinery's TotalAnnotationSizeLimitB


def _annotations_size(ann, path):
    """The API server's limit on one object's annotations: the bytes of every key and value
    together; over it, 422 with the annotations as field (the real server's message)."""
    if not isinstance(ann, dict):
        return []
    total = sum(len(str(k).encode()) + len(v.encode() if isinstance(v, str) else b"")
                for k, v in ann.items())
    if total > ANNOTATIONS_MAX_BYTES:
        return [(path, "Too long: must have at most %d bytes" % ANNOTATIONS_MAX_BYTES)]
    return []



def _configmap_size(obj):
    """The API server's limit on a ConfigMap: the bytes of every data value (UTF-8) plus every
    decoded binaryData value, keys not counted; over it, 422 with the whole object as field."""
    import base64
    import binascii
    total = sum(len(v.encode()) for v in (obj.get("data") or {}).values() if isinstance(v, str))
    for v in (obj.get("binaryData") or {}).values():
        try:
            total += len(base64.b64decode(v, validate=True)) if isinstance(v, str) else 0
        except (binascii.Error, ValueError):
            total += len(v)
    if total > CONFIGMAP_MAX_BYTES:
        return [("[]", "Too long: must have at most %d bytes" % CONFIGMAP_MAX_BYTES)]
    return []


def _validate_pod_spec(spec, path):
    if not isinstance(spec, dict):
        return [(path, "Required value")]
    causes = []
    cs = spec.get("containers")
    if not cs:
        return [(path + ".containers", "Required value")]
    seen = set()
    for i, c in enumerate(cs):
        if not isinstance(c, dict) or not c.get("name"):
            causes.append(("%s.containers[%d].name" % (path, i), "Required value"))
            continue
        if c["name"] in seen:
            causes.append(("%s.containers[%d].name" % (path, i), "Duplicate value: %r"
                           % c["name"]))
        seen.add(c["name"])
        if not c.get("image"):
            causes.append(("%s.containers[%d].image" % (path, i), "Required value"))
    return causes


def _strip_status_independent(obj):
    o = dict(obj)
    o.pop("status", None)
    o["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items()
                     if k not in ("resourceVersion", "managedFields", "generation")}
    return o


class Api:
    def __init__(self, store, service_net):
        self.store = store
        self.service_net = service_net  # "127.a.b" prefix
        self._svc_next = 1
        self.gc_event = threading.Event()
        self.kubelet = None  # set by the kubelet: decides graceful pod deletion

    def alloc_cluster_ip(self):
        with self.store.lock:
            used = {((o.get("spec") or {}).get("clusterIP"))
                    for o in (e.obj for e in self.store.objs[("", "services")].values())}
            for _ in range(253):
                self._svc_next = self._svc_next % 253 + 1
                ip = "%s.%d" % (self.service_net, self._svc_next)
                if ip not in used:
                    return ip
        raise ApiError(500, "InternalError", "service IP range exhausted")

    # --- reads ---------------------------------------------------------------------------------

    def get(self, res, ns, name):
        obj = self.store.get(res.key, ns, name)
        if obj is None:
            raise not_found(res, name)
        return obj

    def ensure_namespace(self, ns):
        if ns is None:
            return
        nsobj = self.store.get(("", "namespaces"), None, ns)
        if nsobj is None:
            raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns,
                           {"name": ns, "kind": "namespaces"})
        if (nsobj.get("metadata") or {}).get("deletionTimestamp"):
            raise ApiError(403, "Forbidden", 'unable to create new content in namespace %s '
                           'because it is being terminated' % ns,
                           {"name": ns, "kind": "namespaces"})

    def list(self, res, ns, query):
        """Returns (entries, rv, continue_token, remaining)."""
        lsel = parse_label_selector(query.get("labelSelector", ""))
        fsel = parse_field_selector(query.get("fieldSelector", ""))
        entries, rv = self.store.entries(res.key, ns)
        if lsel or fsel:
            view = res.group == "events.k8s.io"
            entries = [e for e in entries
                       if labels_match(lsel, (e.obj.get("metadata") or {}).get("labels") or {})
                       and fields_match(fsel, to_view(res, e.obj) if view else e.obj)]
        token = query.get("continue")
        if token:
            try:
                st = json.loads(base64.urlsafe_b64decode(token.encode()).decode())
                start = (st["ns"] or "", st["name"])
                rv = int(st["rv"])
            except (ValueError, KeyError, TypeError):
                raise ApiError(400, "BadRequest", "continue key is not valid")
            entries = [e for e in entries
                       if ((e.obj["metadata"].get("namespace") or ""),
                           e.obj["metadata"]["name"]) > start]
        limit = int(query.get("limit") or 0)
        cont, remaining = None, None
        if limit > 0 and len(entries) > limit:
            remaining = len(entries) - limit
            entries = entries[:limit]
            last = entries[-1].obj["metadata"]
            cont = base64.urlsafe_b64encode(json.dumps(
                {"rv": rv, "ns": last.get("namespace"), "name": last["name"]}).encode()).decode()
        return entries, rv, cont, remaining

    # --- writes --------------------------------------------------------------------------------

    def create(self, res, ns, obj, dry_run=False):
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "the body of the request was not a JSON object")
        obj = strip_nulls(from_view(res, jcopy(obj)))
        kind, apiv = obj.pop("kind", None), obj.pop("apiVersion", None)
        if kind and kind != res.kind:
            raise ApiError(400, "BadRequest", "the API version in the data (%s) does not match "
                           "the expected API version (%s)" % (apiv, res.gv))
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise ApiError(400, "BadRequest", "metadata must be an object")
        if res.namespaced:
            if meta.get("namespace") and meta["namespace"] != ns:
                raise ApiError(400, "BadRequest", "the namespace of the provided object does not "
                               "match the namespace sent on the request")
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if not meta.get("name"):
            if meta.get("generateName"):
                meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
            else:
                raise invalid(res, "", [("metadata.name", "Required value: name or "
                                         "generateName is required")])
        for k in ("resourceVersion", "uid", "creationTimestamp", "deletionTimestamp",
                  "managedFields", "selfLink"):
            meta.pop(k, None)
        with self.store.lock:
            if res.namespaced:
                self.ensure_namespace(ns)
            name = meta["name"]
            if self.store.get(res.key, ns if res.namespaced else None, name) is not None:
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists'
                               % (res.qualified, name), _details(res, name))
            meta["uid"] = str(uuid.uuid4())  # before the defaults: a Job's selector names it
            default_object(res, obj, self)
            validate(res, obj)
            if res.plural == "pods" and res.group == "":
                admission.admit_pod(self, ns, obj)
            meta["creationTimestamp"] = now_ts()
            if res.generation:
                meta["generation"] = 1
            if res.plural in ("deployments", "replicasets"):
                obj.setdefault("status", {})
            if dry_run:
                meta["resourceVersion"] = str(self.store.rv)
                return obj
            out = self.store.put(res.key, ns if res.namespaced else None, name, obj, "ADDED",
                                 canonical_full(res.key))
            if res.plural == "namespaces":
                self._default_service_account(name)
            refs = meta.get("ownerReferences") or []
            if any(not self.store.uid_exists(r.get("uid")) for r in refs):
                self.gc_event.set()  # created with an owner already gone: collect it
            return out

    def _default_service_account(self, ns):
        """What the serviceaccount controller does for every new namespace: a ServiceAccount
        `default`, the identity of pods that name none."""
        sa = BY_KEY[("", "serviceaccounts")]
        if self.store.get(sa.key, ns, "default") is None:
            self.create(sa, ns, {"metadata": {"name": "default"}})

    def update(self, res, ns, name, obj, subresource=None, dry_run=False, check_rv=True):
        """PUT semantics. `obj` is in res's view; returns the stored object."""
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "the body of the request was not a JSON object")
        new = strip_nulls(from_view(res, jcopy(obj)))
        new.pop("kind", None)
        new.pop("apiVersion", None)
        nmeta = new.setdefault("metadata", {})
        if nmeta.get("name") and nmeta["name"] != name:
            raise ApiError(400, "BadRequest", "the name of the object (%s) does not match the "
                           "name on the URL (%s)" % (nmeta["name"], name))
        if res.namespaced and nmeta.get("namespace") and nmeta["namespace"] != ns:
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not "
                           "match the namespace sent on the request")
        with self.store.lock:
            old = self.store.get(res.key, ns, name)
            if old is None:
                raise not_found(res, name)
            want_rv = nmeta.get("resourceVersion")
            if check_rv and want_rv and want_rv != old["metadata"]["resourceVersion"]:
                raise conflict(res, name)
            if subresource == "status":
                merged = jcopy(old)
                if "status" in new:
                    merged["status"] = new["status"]
                else:
                    merged.pop("status", None)
                new = merged
            else:
                if res.status:
                    if "status" in old:
                        new["status"] = old["status"]
                    else:
                        new.pop("status", None)
                ometa = old["metadata"]
                nmeta = new["metadata"]
                for k in ("uid", "creationTimestamp", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "generation"):
                    if k in ometa:
                        nmeta[k] = ometa[k]
                    else:
                        nmeta.pop(k, None)
                nmeta["name"] = name
                if res.namespaced:
                    nmeta["namespace"] = ns
                nmeta.pop("managedFields", None)
                if res.plural == "pods" and subresource is None:
                    resize.check_pod_update(old, new)
                default_object(res, new, self)
                validate(res, new, old)
                # A Deployment's generation also counts annotation changes (the API server's
                # deployment strategy: its annotations are copied to its ReplicaSets).
                bump = new.get("spec") != old.get("spec") or (
                    res.plural == "deployments" and
                    nmeta.get("annotations") != ometa.get("annotations"))
                if res.generation and bump:
                    nmeta["generation"] = ometa.get("generation", 1) + 1
            return self._commit(res, ns, name, old, new, dry_run)

    def write_status(self, res, ns, name, status):
        """The controllers' status write: no deep copy (stored objects are never mutated, so
        the new object may share everything but metadata and status with the old one)."""
        with self.store.lock:
            old = self.store.get(res.key, ns, name)
            if old is None:
                raise not_found(res, name)
            if old.get("status") == status:
                return old
            new = dict(old)
            new["metadata"] = dict(old["metadata"])
            new["status"] = status
            return self._commit(res, ns, name, old, new, False)

    def _commit(self, res, ns, name, old, new, dry_run):
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        if new == old:
            return old  # a no-op write changes nothing, not even the resourceVersion
        if dry_run:
            return new
        meta = new["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and \
                not self._awaits_kubelet(res, new):
            self.store.put(res.key, ns, name, new, "MODIFIED", canonical_full(res.key))
            out = self.store.remove(res.key, ns, name, canonical_full(res.key))
            self.gc_event.set()
            return out
        out = self.store.put(res.key, ns, name, new, "MODIFIED", canonical_full(res.key))
        if meta.get("deletionTimestamp"):
            self.gc_event.set()
        return out

    def _awaits_kubelet(self, res, obj):
        return (res.plural == "pods" and self.kubelet is not None
                and self.kubelet.owns(obj))

    def patched(self, res, ns, name, ptype, body):
        """(stored object, the object with the patch applied) under the store lock, which the
        caller holds; 409 when the patch names a stale resourceVersion."""
        try:
            p = json.loads(body or b"null")
        except ValueError as e:
            raise ApiError(400, "BadRequest", "the patch is not valid JSON: %s" % e)
        old = self.store.get(res.key, ns, name)
        if old is None:
            raise not_found(res, name)
        cur = full(res, old)
        try:
            if ptype == "application/json-patch+json":
                new = patchlib.json_patch(cur, p)
            elif ptype == "application/merge-patch+json":
                new = patchlib.merge_patch(cur, p)
            elif ptype == "application/strategic-merge-patch+json":
                new = patchlib.strategic_merge_patch(cur, p)
            else:
                raise ApiError(415, "UnsupportedMediaType", "the body of the request was in "
                               "an unknown format - accepted media types include: "
                               "application/json-patch+json, application/merge-patch+json, "
                               "application/strategic-merge-patch+json")
        except patchlib.PatchError as e:
            raise invalid(res, name, [("patch", str(e))])
        if not isinstance(new, dict):
            raise ApiError(400, "BadRequest", "the patch did not produce an object")
        want_rv = (p.get("metadata") or {}).get("resourceVersion") \
            if isinstance(p, dict) else None
        if want_rv and want_rv != old["metadata"]["resourceVersion"]:
            raise conflict(res, name)
        return old, new

    def patch(self, res, ns, name, ptype, body, subresource=None, dry_run=False):
        with self.store.lock:
            old, new = self.patched(res, ns, name, ptype, body)
            new.setdefault("metadata", {})["resourceVersion"] = old["metadata"]["resourceVersion"]
            return self.update(res, ns, name, new, subresource, dry_run, check_rv=False)

    # --- deletion and garbage collection -------------------------------------------------------

    def delete(self, res, ns, name, opts=None, dry_run=False):
        opts = opts or {}
        with self.store.lock:
            old = self.store.get(res.key, ns, name)
            if old is None:
                raise not_found(res, name)
            pre = opts.get("preconditions") or {}
            if pre.get("uid") and pre["uid"] != old["metadata"].get("uid"):
                raise conflict(res, name, "Precondition failed: UID in precondition: %s, UID in "
                               "object meta: %s" % (pre["uid"], old["metadata"].get("uid")))
            if pre.get("resourceVersion") and pre["resourceVersion"] != \
                    old["metadata"]["resourceVersion"]:
                raise conflict(res, name, "Precondition failed: ResourceVersion in "
                               "precondition: %s, ResourceVersion in object meta: %s"
                               % (pre["resourceVersion"], old["metadata"]["resourceVersion"]))
            if res.plural == "namespaces" and name in ("default", "kube-system", "kube-public"):
                raise ApiError(403, "Forbidden", 'namespaces "%s" is forbidden: this namespace '
                               'may not be deleted' % name, {"name": name, "kind": "namespaces"})
            if dry_run:
                return old
            policy = opts.get("propagationPolicy")
            if not policy and res.group == "batch" and res.plural == "jobs":
                # batch/v1 Jobs keep their old default: deleting one without a policy orphans
                # its pods (kubectl asks for Background).
                policy = "Orphan"
            if opts.get("orphanDependents") is True:
                policy = "Orphan"
            if opts.get("orphanDependents") is False and not policy:
                policy = "Background"
            meta = old["metadata"]
            finalizers = list(meta.get("finalizers") or [])
            grace = opts.get("gracePeriodSeconds")
            if policy == "Foreground" and "foregroundDeletion" not in finalizers and \
                    self.store.dependents(meta.get("uid")):
                finalizers.append("foregroundDeletion")
            if policy == "Orphan" and "orphan" not in finalizers and \
                    self.store.dependents(meta.get("uid")):
                finalizers.append("orphan")
            graceful = (res.plural == "pods" and grace != 0 and self._awaits_kubelet(res, old))
            terminating_ns = res.plural == "namespaces"
            if finalizers or graceful or terminating_ns:
                if meta.get("deletionTimestamp"):
                    return old
                new = jcopy(old)
                nm = new["metadata"]
                nm.setdefault("deletionTimestamp", now_ts())
                if res.plural == "pods":
                    g = grace if grace is not None else \
                        (old.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
                    nm["deletionGracePeriodSeconds"] = g
                else:
                    nm["deletionGracePeriodSeconds"] = 0
                if finalizers:
                    nm["finalizers"] = finalizers
                if terminating_ns:
                    new.setdefault("status", {})["phase"] = "Terminating"
                if res.generation:
                    nm["generation"] = nm.get("generation", 1) + 1
                out = self.store.put(res.key, ns, name, new, "MODIFIED",
                                     canonical_full(res.key))
                self.gc_event.set()
                if self.kubelet is not None and res.plural == "pods":
                    self.kubelet.kick()
                return out
            out = self.store.remove(res.key, ns, name, canonical_full(res.key))
            self.gc_event.set()
            return out

    def force_remove(self, res, ns, name):
        """Final removal once the kubelet has stopped a pod (or a finalizer list emptied)."""
        with self.store.lock:
            out = self.store.remove(res.key, ns, name, canonical_full(res.key))
            self.gc_event.set()
            return out

    def gc_pass(self):
        """One pass of the garbage collector; returns True when it changed something."""
        changed = False
        with self.store.lock:
            # Dependents whose every owner is gone are deleted (background propagation).
            for uid in list(self.store.by_owner.keys()):
                if self.store.uid_exists(uid):
                    continue
                for key, ns, name in list(self.store.by_owner.get(uid, ())):
                    obj = self.store.get(key, ns, name)
                    if obj is None or obj["metadata"].get("deletionTimestamp"):
                        continue
                    refs = obj["metadata"].get("ownerReferences") or []
                    if all(not self.store.uid_exists(r.get("uid")) for r in refs):
                        try:
                            self.delete(BY_KEY[key], ns, name,
                                        {"propagationPolicy": "Background"})
                            changed = True
                        except ApiError:
                            pass
            # Owners being deleted in the foreground or orphaning their dependents.
            for key, objs in list(self.store.objs.items()):
                for (ns, name), e in list(objs.items()):
                    meta = e.obj["metadata"]
                    if not meta.get("deletionTimestamp"):
                        continue
                    fins = meta.get("finalizers") or []
                    uid = meta.get("uid")
                    deps = self.store.dependents(uid)
                    if "orphan" in fins:
                        for dk, dns, dname in deps:
                            d = self.store.get(dk, dns, dname)
                            if d is None:
                                continue
                            nd = jcopy(d)
                            nd["metadata"]["ownerReferences"] = [
                                r for r in nd["metadata"].get("ownerReferences") or []
                                if r.get("uid") != uid]
                            if not nd["metadata"]["ownerReferences"]:
                                del nd["metadata"]["ownerReferences"]
                            self.store.put(dk, dns, dname, nd, "MODIFIED", canonical_full(dk))
                        self._drop_finalizer(key, ns, name, "orphan")
                        changed = True
                    elif "foregroundDeletion" in fins:
                        live = []
                        for dk, dns, dname in deps:
                            d = self.store.get(dk, dns, dname)
                            if d is None:
                                continue
                            live.append(d)
                            if not d["metadata"].get("deletionTimestamp"):
                                try:
                                    self.delete(BY_KEY[dk], dns, dname,
                                                {"propagationPolicy": "Foreground"})
                                    changed = True
                                except ApiError:
                                    pass
                        if not live:
                            self._drop_finalizer(key, ns, name, "foregroundDeletion")
                            changed = True
                    elif key == ("", "namespaces") and "kubernetes" in \
                            ((e.obj.get("spec") or {}).get("finalizers") or []):
                        if self._empty_namespace(name):
                            nn = jcopy(e.obj)
                            nn["spec"]["finalizers"] = []
                            self.store.put(key, ns, name, nn, "MODIFIED", canonical_full(key))
                            self.store.remove(key, ns, name, canonical_full(key))
                        changed = True
        return changed

    def _empty_namespace(self, ns):
        empty = True
        for key, objs in list(self.store.objs.items()):
            if not BY_KEY[key].namespaced:
                continue
            for (ons, name), e in list(objs.items()):
                if ons != ns:
                    continue
                empty = False
                if not e.obj["metadata"].get("deletionTimestamp"):
                    try:
                        self.delete(BY_KEY[key], ons, name, {"propagationPolicy": "Background"})
                    except ApiError:
                        pass
        return empty

    def _drop_finalizer(self, key, ns, name, fin):
        obj = self.store.get(key, ns, name)
        if obj is None:
            return
        new = jcopy(obj)
        new["metadata"]["finalizers"] = [f for f in new["metadata"].get("finalizers") or []
                                         if f != fin]
        if not new["metadata"]["finalizers"]:
            del new["metadata"]["finalizers"]
        self._commit(BY_KEY[key], ns, name, obj, new, False)

    def gc_loop(self, stop):
        # A pass runs when something was deleted or created with owners (gc_event), and every
        # 30 s as a safety net; an idle fake with 10,000 objects then costs no CPU.
        while not stop.is_set():
            self.gc_event.wait(30.0)
            self.gc_event.clear()
            if stop.is_set():
                return
            try:
                while self.gc_pass() and not stop.is_set():
                    pass
            except Exception as e:  # keep collecting; a bug here must not stop the server
                import sys
                print("fakeapi: gc error: %r" % e, file=sys.stderr)

    # --- scale subresource ---------------------------------------------------------------------

    def scale_of(self, res, obj):
        meta = obj["metadata"]
        sel = (obj.get("spec") or {}).get("selector") or {}
        selstr = ",".join("%s=%s" % kv for kv in sorted((sel.get("matchLabels") or {}).items()))
        return {"kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {"name": meta["name"], "namespace": meta.get("namespace"),
                             "uid": meta.get("uid"), "resourceVersion": meta["resourceVersion"],
                             "creationTimestamp": meta.get("creationTimestamp")},
                # spec.replicas is omitted when 0 (omitempty in the API's Go type).
                "spec": {k: v for k, v in
                         {"replicas": (obj.get("spec") or {}).get("replicas", 0)}.items() if v},
                "status": {"replicas": (obj.get("status") or {}).get("replicas", 0),
                           "selector": selstr}}

    def update_scale(self, res, ns, name, scale, ptype=None, body=None):
        with self.store.lock:
            obj = self.get(res, ns, name)
            cur = self.scale_of(res, obj)
            if ptype:
                try:
                    p = json.loads(body or b"null")
                    if ptype == "application/json-patch+json":
                        scale = patchlib.json_patch(cur, p)
                    elif ptype == "application/merge-patch+json":
                        scale = patchlib.merge_patch(cur, p)
                    else:
                        scale = patchlib.strategic_merge_patch(cur, p)
                except (ValueError, patchlib.PatchError) as e:
                    raise ApiError(422, "Invalid", "bad scale patch: %s" % e)
            want_rv = (scale.get("metadata") or {}).get("resourceVersion")
            if not ptype and want_rv and want_rv != obj["metadata"]["resourceVersion"]:
                raise conflict(res, name)
            replicas = (scale.get("spec") or {}).get("replicas")
            if not isinstance(replicas, int) or replicas < 0:
                raise ApiError(422, "Invalid", "spec.replicas must be a non-negative integer")
            new = copy.deepcopy(obj)
            new["spec"]["replicas"] = replicas
            out = self.update(res, ns, name, full(res, new), check_rv=False)
            return self.scale_of(res, out)
