"""The resource types the fake API server serves: one table drives discovery, routing and
storage."""

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


class Res:
    """One REST resource (a plural under a group-version)."""

    def __init__(self, group, version, plural, kind, namespaced, short=(), singular=None,
                 subresources=(), status=False, generation=False, categories=(), verbs=None):
        self.group = group
        self.version = version
        self.plural = plural
        self.kind = kind
        self.namespaced = namespaced
        self.short = list(short)
        self.singular = singular or kind.lower()
        self.subresources = list(subresources)
        self.status = status  # has a status subresource: main-resource writes keep status
        self.generation = generation  # metadata.generation bumped on spec changes
        self.categories = list(categories)
        self.verbs = list(verbs or ALL_VERBS)
        # Two views may share one storage (core v1 events and events.k8s.io/v1 events).
        self.storage = (group, plural)

    @property
    def gv(self):
        return self.group + "/" + self.version if self.group else self.version

    @property
    def key(self):
        """Storage key shared by every view of the same objects."""
        return self.storage

    @property
    def qualified(self):
        """The name real API errors use: `deployments.apps`, `configmaps`."""
        return self.plural + "." + self.group if self.group else self.plural

    def discovery(self):
        out = [{
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(self.verbs),
        }]
        if self.short:
            out[0]["shortNames"] = list(self.short)
        if self.categories:
            out[0]["categories"] = list(self.categories)
        for sub in self.subresources:
            if sub == "scale":
                out.append({"name": self.plural + "/scale", "singularName": "",
                            "namespaced": self.namespaced, "group": "autoscaling",
                            "version": "v1", "kind": "Scale",
                            "verbs": ["get", "patch", "update"]})
            elif sub == "status":
                out.append({"name": self.plural + "/status", "singularName": "",
                            "namespaced": self.namespaced, "kind": self.kind,
                            "verbs": ["get", "patch", "update"]})
            elif sub == "log":
                out.append({"name": self.plural + "/log", "singularName": "",
                            "namespaced": self.namespaced, "kind": "Pod", "verbs": ["get"]})
            elif sub == "resize":
                out.append({"name": self.plural + "/resize", "singularName": "",
                            "namespaced": self.namespaced, "kind": "Pod",
                            "verbs": ["get", "patch", "update"]})
        return out


def _table():
    t = [
        Res("", "v1", "namespaces", "Namespace", False, ["ns"], subresources=["status"],
            status=True),
        Res("", "v1", "pods", "Pod", True, ["po"], subresources=["status", "log", "resize"],
            status=True, categories=["all"]),
        Res("", "v1", "services", "Service", True, ["svc"], subresources=["status"], status=True,
            categories=["all"]),
        Res("", "v1", "endpoints", "Endpoints", True, ["ep"]),
        Res("", "v1", "configmaps", "ConfigMap", True, ["cm"]),
        Res("", "v1", "secrets", "Secret", True),
        Res("", "v1", "serviceaccounts", "ServiceAccount", True, ["sa"]),
        Res("", "v1", "events", "Event", True, ["ev"]),
        Res("", "v1", "resourcequotas", "ResourceQuota", True, ["quota"],
            subresources=["status"], status=True),
        Res("", "v1", "limitranges", "LimitRange", True, ["limits"]),
        # Nodes are seeded (kubectl apply): the kubelet runs only the pods bound to fake-node or
        # to no node, so pods on the seeded nodes (a DaemonSet's) are data, never processes.
        Res("", "v1", "nodes", "Node", False, ["no"], subresources=["status"], status=True),
        Res("apps", "v1", "deployments", "Deployment", True, ["deploy"],
            subresources=["status", "scale"], status=True, generation=True, categories=["all"]),
        Res("apps", "v1", "replicasets", "ReplicaSet", True, ["rs"],
            subresources=["status", "scale"], status=True, generation=True, categories=["all"]),
        Res("apps", "v1", "daemonsets", "DaemonSet", True, ["ds"], subresources=["status"],
            status=True, generation=True, categories=["all"]),
        Res("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True,
            ["hpa"], subresources=["status"], status=True, categories=["all"]),
        Res("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ["pdb"],
            subresources=["status"], status=True),
        Res("batch", "v1", "jobs", "Job", True, subresources=["status"], status=True,
            generation=True, categories=["all"]),
        Res("events.k8s.io", "v1", "events", "Event", True, ["ev"]),
        Res("coordination.k8s.io", "v1", "leases", "Lease", True),
        Res("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
        Res("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
        Res("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
        Res("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding",
            False),
        Res("metrics.k8s.io", "v1beta1", "pods", "PodMetrics", True, verbs=["get", "list"]),
        Res("authorization.k8s.io", "v1", "selfsubjectaccessreviews",
            "SelfSubjectAccessReview", False, verbs=["create"]),
        # Reviews are create-only and store nothing: the answer comes back in status.
        Res("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False,
            verbs=["create"]),
        Res("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False,
            verbs=["create"]),
    ]
    for r in t:
        if r.group == "events.k8s.io":
            r.storage = ("", "events")  # one store, two views, as in a real cluster
    return t


RESOURCES = _table()
# (group, version, plural) -> Res
BY_PATH = {(r.group, r.version, r.plural): r for r in RESOURCES}
# storage key -> the canonical (first) Res
BY_KEY = {}
for _r in RESOURCES:
    BY_KEY.setdefault(_r.key, _r)


def group_versions():
    """Ordered list of (group, version) for the /apis discovery (core excluded)."""
    seen = []
    for r in RESOURCES:
        if r.group and (r.group, r.version) not in seen:
            seen.append((r.group, r.version))
    return seen


def find_kind(api_version, kind):
    group, _, version = api_version.rpartition("/")
    for r in RESOURCES:
        if r.group == group and r.version == version and r.kind == kind:
            return r
    return None


def disable_group(group):
    """Serve a group not at all (e.g. metrics.k8s.io when no pods run): not in discovery, 404."""
    RESOURCES[:] = [r for r in RESOURCES if r.group != group]
    for k in [k for k in BY_PATH if k[0] == group]:
        del BY_PATH[k]


def disable_subresource(plural, sub):
    """Serve a subresource not at all (e.g. pods/resize, as a server older than 1.33 with the
    feature off): not in discovery, 404."""
    for r in RESOURCES:
        if r.plural == plural and sub in r.subresources:
            r.subresources.remove(sub)
