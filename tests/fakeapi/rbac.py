"""RBAC authorisation from the Role/ClusterRole/RoleBinding/ClusterRoleBinding objects stored in
the fake, with the matching rules of the real authorizer (apiGroups, resources with
subresources, verbs, resourceNames, nonResourceURLs; '*' wildcards)."""

# Paths every authenticated user may read, as the system:discovery and
# system:public-info-viewer ClusterRoles grant on a real cluster.
PUBLIC_PATHS = ("/version", "/api", "/apis", "/openapi", "/healthz", "/livez", "/readyz")


def subjects_match(subjects, user, groups, binding_ns):
    for s in subjects or []:
        kind = s.get("kind")
        if kind == "User" and s.get("name") == user:
            return True
        if kind == "Group" and s.get("name") in groups:
            return True
        if kind == "ServiceAccount":
            ns = s.get("namespace") or binding_ns
            if user == "system:serviceaccount:%s:%s" % (ns, s.get("name")):
                return True
    return False


def _res_match(rule_res, resource, sub):
    full = resource + ("/" + sub if sub else "")
    for r in rule_res:
        if r == "*" or r == full:
            return True
        if sub and r == "*/" + sub:
            return True
        if not sub and r == resource:
            return True
    return False


def rule_allows(rule, attrs):
    verbs = rule.get("verbs") or []
    if "*" not in verbs and attrs["verb"] not in verbs:
        return False
    if attrs.get("nonResource"):
        for u in rule.get("nonResourceURLs") or []:
            if u == "*" or u == attrs["path"] or (u.endswith("*") and
                                                  attrs["path"].startswith(u[:-1])):
                return True
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and attrs["group"] not in groups:
        return False
    if not _res_match(rule.get("resources") or [], attrs["resource"], attrs.get("sub")):
        return False
    names = rule.get("resourceNames") or []
    if names and attrs.get("name") not in names:
        return False
    return True


def _role_rules(store, kind, ns, name):
    if kind == "ClusterRole":
        obj = store.get(("rbac.authorization.k8s.io", "clusterroles"), None, name)
    else:
        obj = store.get(("rbac.authorization.k8s.io", "roles"), ns, name)
    return (obj or {}).get("rules") or []


def authorize(store, user, groups, attrs):
    """True when some binding grants the request. attrs: verb, group, resource, sub, name, ns,
    path, nonResource."""
    if "system:masters" in groups:
        return True
    if attrs.get("nonResource") and attrs["path"].split("?")[0].startswith(PUBLIC_PATHS) \
            and attrs["verb"] == "get":
        return True
    with store.lock:
        for e in store.objs[("rbac.authorization.k8s.io", "clusterrolebindings")].values():
            b = e.obj
            if not subjects_match(b.get("subjects"), user, groups, None):
                continue
            ref = b.get("roleRef") or {}
            for rule in _role_rules(store, "ClusterRole", None, ref.get("name")):
                if rule_allows(rule, attrs):
                    return True
        ns = attrs.get("ns")
        if ns and not attrs.get("nonResource"):
            for (bns, _), e in store.objs[("rbac.authorization.k8s.io",
                                           "rolebindings")].items():
                if bns != ns:
                    continue
                b = e.obj
                if not subjects_match(b.get("subjects"), user, groups, bns):
                    continue
                ref = b.get("roleRef") or {}
                for rule in _role_rules(store, ref.get("kind"), bns, ref.get("name")):
                    if rule_allows(rule, attrs):
                        return True
    return False


def forbidden_message(user, attrs):
    if attrs.get("nonResource"):
        return 'forbidden: User "%s" cannot %s path "%s"' % (user, attrs["verb"], attrs["path"])
    res = attrs["resource"] + ("/" + attrs["sub"] if attrs.get("sub") else "")
    qual = attrs["resource"] + ("." + attrs["group"] if attrs["group"] else "")
    head = '%s "%s" is forbidden' % (qual, attrs["name"]) if attrs.get("name") else \
        "%s is forbidden" % qual
    where = ' in the namespace "%s"' % attrs["ns"] if attrs.get("ns") else \
        " at the cluster scope"
    return '%s: User "%s" cannot %s resource "%s" in API group "%s"%s' % (
        head, user, attrs["verb"], res, attrs["group"], where)
