#!/usr/bin/env python3
"""Policy check over rendered Kubernetes objects (helm template, kubectl kustomize).

Usage: check_policy.py [--chart-labels] FILE... ('-' reads stdin)

Prints one line per violation, "RULE kind/namespace/name: detail", and exits 1 when there is any,
0 when there is none, 2 on bad input. The rules are what sizeup promises its users in
docs/safety.md: least-privilege RBAC without wildcards, the restricted Pod Security Standard, and
no container without limits or probes.
"""

import sys

try:
    import yaml
except ImportError:  # pragma: no cover - the test scripts pick an interpreter that has it
    sys.stderr.write("check_policy: PyYAML is missing (Debian: python3-yaml)\n")
    sys.exit(2)

WORKLOAD_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod"}
RBAC_RULE_KINDS = {"Role", "ClusterRole"}
# Verbs that let a subject grant itself more than it holds; sizeup never needs them.
ESCALATING_VERBS = {"escalate", "bind", "impersonate"}
# Resources sizeup never reads or writes: credentials and the RBAC objects themselves.
FORBIDDEN_RESOURCES = {"secrets", "serviceaccounts/token", "roles", "clusterroles", "rolebindings",
                       "clusterrolebindings", "nodes/proxy", "pods/exec", "pods/attach"}
CHART_LABELS = ("app.kubernetes.io/name", "app.kubernetes.io/instance",
                "app.kubernetes.io/version", "app.kubernetes.io/managed-by", "helm.sh/chart")
# Capabilities the restricted standard allows a container to add back.
ALLOWED_ADD_CAPS = {"NET_BIND_SERVICE"}


def ident(obj):
    meta = obj.get("metadata") or {}
    return "%s/%s/%s" % (obj.get("kind", "?"), meta.get("namespace", "-"), meta.get("name", "?"))


def pod_spec_of(obj):
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        return (((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get(
            "spec") or {}
    return (spec.get("template") or {}).get("spec") or {}


def check_rbac(obj, out):
    for n, rule in enumerate(obj.get("rules") or []):
        where = "%s rule %d" % (ident(obj), n)
        for field in ("verbs", "resources", "apiGroups", "resourceNames", "nonResourceURLs"):
            values = rule.get(field) or []
            if any("*" in str(v) for v in values):
                out.append("rbac-wildcard %s: %s contains a wildcard %r" % (where, field, values))
        for v in rule.get("verbs") or []:
            if v in ESCALATING_VERBS:
                out.append("rbac-escalation %s: verb %r" % (where, v))
        for r in rule.get("resources") or []:
            if r in FORBIDDEN_RESOURCES:
                out.append("rbac-forbidden-resource %s: %r" % (where, r))
        if not rule.get("verbs"):
            out.append("rbac-empty %s: no verbs" % where)
        if rule.get("nonResourceURLs") is None and not rule.get("resources"):
            out.append("rbac-empty %s: no resources" % where)


def effective(pod_sc, c_sc, key):
    """The container's setting wins over the pod's, as the kubelet applies them."""
    if key in c_sc:
        return c_sc[key]
    return pod_sc.get(key)


def check_workload(obj, out):
    spec = pod_spec_of(obj)
    who = ident(obj)
    pod_sc = spec.get("securityContext") or {}
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(flag):
            out.append("pss-host-namespaces %s: %s is true" % (who, flag))
    for vol in spec.get("volumes") or []:
        if "hostPath" in vol:
            out.append("pss-hostpath %s: volume %s is a hostPath" % (who, vol.get("name")))
    containers = [("container", c) for c in spec.get("containers") or []]
    containers += [("initContainer", c) for c in spec.get("initContainers") or []]
    if not spec.get("containers"):
        out.append("workload-empty %s: no containers" % who)
    for role, c in containers:
        cw = "%s %s %s" % (who, role, c.get("name", "?"))
        sc = c.get("securityContext") or {}
        if effective(pod_sc, sc, "runAsNonRoot") is not True:
            out.append("pss-runAsNonRoot %s: runAsNonRoot is not true" % cw)
        for key in ("runAsUser", "runAsGroup"):
            v = effective(pod_sc, sc, key)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                out.append("pss-%s %s: %s must be a numeric non-zero id, got %r" % (key, cw, key, v))
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append("pss-allowPrivilegeEscalation %s: allowPrivilegeEscalation is not false" % cw)
        if sc.get("privileged"):
            out.append("pss-privileged %s: privileged is true" % cw)
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            out.append("pss-capabilities %s: capabilities.drop does not contain ALL" % cw)
        extra = set(caps.get("add") or []) - ALLOWED_ADD_CAPS
        if extra:
            out.append("pss-capabilities %s: adds capabilities %s" % (cw, sorted(extra)))
        seccomp = effective(pod_sc, sc, "seccompProfile") or {}
        if seccomp.get("type") not in ("RuntimeDefault", "Localhost"):
            out.append("pss-seccompProfile %s: seccompProfile.type is %r, not RuntimeDefault"
                       % (cw, seccomp.get("type")))
        if sc.get("readOnlyRootFilesystem") is not True:
            out.append("pss-readOnlyRootFilesystem %s: readOnlyRootFilesystem is not true" % cw)
        limits = (c.get("resources") or {}).get("limits") or {}
        for res in ("cpu", "memory"):
            if res not in limits:
                out.append("resources-limits %s: no %s limit" % (cw, res))
        if role == "container":
            for probe in ("livenessProbe", "readinessProbe"):
                if not c.get(probe):
                    out.append("probes %s: no %s" % (cw, probe))


def check_labels(obj, out):
    if obj.get("kind") == "Namespace":
        return
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for key in CHART_LABELS:
        if not labels.get(key):
            out.append("labels %s: missing label %s" % (ident(obj), key))


def check(objs, chart_labels=False):
    """Returns the list of violations over every object, in input order."""
    out = []
    for obj in objs:
        kind = obj.get("kind")
        if kind in RBAC_RULE_KINDS:
            check_rbac(obj, out)
        if kind in WORKLOAD_KINDS:
            check_workload(obj, out)
        if chart_labels:
            check_labels(obj, out)
    return out


def load(paths):
    objs = []
    for path in paths:
        stream = sys.stdin if path == "-" else open(path, encoding="utf-8")
        try:
            for doc in yaml.safe_load_all(stream):
                if doc is None:
                    continue
                if not isinstance(doc, dict) or "kind" not in doc:
                    raise ValueError("%s: a document is not a Kubernetes object" % path)
                if doc["kind"] == "List":
                    objs.extend(doc.get("items") or [])
                else:
                    objs.append(doc)
        finally:
            if stream is not sys.stdin:
                stream.close()
    return objs


def main(argv):
    chart_labels = False
    paths = []
    for a in argv:
        if a == "--chart-labels":
            chart_labels = True
        elif a.startswith("--"):
            sys.stderr.write("check_policy: unknown flag %s\n" % a)
            return 2
        else:
            paths.append(a)
    if not paths:
        sys.stderr.write(__doc__)
        return 2
    try:
        objs = load(paths)
    except (OSError, ValueError, yaml.YAMLError) as e:
        sys.stderr.write("check_policy: %s\n" % e)
        return 2
    if not objs:
        sys.stderr.write("check_policy: no objects in %s\n" % " ".join(paths))
        return 2
    problems = check(objs, chart_labels)
    for p in problems:
        print(p)
    kinds = {}
    for o in objs:
        kinds[o.get("kind")] = kinds.get(o.get("kind"), 0) + 1
    summary = ", ".join("%d %s" % (n, k) for k, n in sorted(kinds.items()))
    sys.stderr.write("check_policy: %d objects (%s), %d violations\n"
                     % (len(objs), summary, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
