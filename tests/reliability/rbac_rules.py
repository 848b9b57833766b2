#!/usr/bin/env python3
"""Splits the RBAC that `kubectl kustomize manifests/` renders, for tests/reliability/p_rbac.sh.

    rbac_rules.py RENDERED.yaml list            one line per rule: INDEX<TAB>KIND/NAME<TAB>rule
    rbac_rules.py RENDERED.yaml preload N OUT   writes OUT: the Namespace, ServiceAccount, Roles,
                                                ClusterRoles and bindings, with rule N removed
                                                (N = -1: none removed)
    rbac_rules.py RENDERED.yaml covered N SA    prints the rule that grants SA everything rule N
                                                grants it, where rule N grants it (a superset,
                                                bound as widely), or nothing: rule N is then
                                                redundant in this render and its removal cannot
                                                fail a test
    rbac_rules.py RENDERED.yaml find OTHER.yaml N   prints the index in OTHER.yaml of the rule
                                                that is rule N here (same role, same rule), or -1
"""
import json
import sys

import yaml

KINDS = ("Namespace", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d and d.get("kind") in KINDS]


def rules(docs):
    out = []
    for d in docs:
        if d["kind"] in ("Role", "ClusterRole"):
            for i, r in enumerate(d.get("rules", [])):
                out.append((d, i, r))
    return out


def describe(r):
    groups = ",".join(g or "core" for g in r.get("apiGroups", []))
    s = "%s %s: %s" % (groups, ",".join(r.get("resources", [])), ",".join(r.get("verbs", [])))
    if r.get("resourceNames"):
        s += " (names %s)" % ",".join(r["resourceNames"])
    return s


def scopes(docs, role, sa):
    """Where the bindings grant SA the rules of role: a set of namespaces, "*" for all."""
    ns, name = sa.split(":")[2:4]
    out = set()
    for d in docs:
        if d["kind"] not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        ref = d.get("roleRef") or {}
        if ref.get("kind") != role["kind"] or ref.get("name") != role["metadata"]["name"]:
            continue
        if not any(s.get("kind") == "ServiceAccount" and s.get("name") == name and
                   s.get("namespace") == ns for s in d.get("subjects") or []):
            continue
        if d["kind"] == "ClusterRoleBinding":
            out.add("*")
        elif role["kind"] == "ClusterRole" or \
                role["metadata"].get("namespace") == d["metadata"].get("namespace"):
            out.add(d["metadata"].get("namespace"))
    return out


def covers(big, small):
    def sup(k):
        b, s = set(big.get(k) or []), set(small.get(k) or [])
        return "*" in b or s <= b
    if not (sup("apiGroups") and sup("resources") and sup("verbs")):
        return False
    if big.get("resourceNames"):
        return bool(small.get("resourceNames")) and \
            set(small["resourceNames"]) <= set(big["resourceNames"])
    return True


def main():
    docs = load(sys.argv[1])
    rs = rules(docs)
    if sys.argv[2] == "covered":
        n, sa = int(sys.argv[3]), sys.argv[4]
        d, i, r = rs[n]
        where = scopes(docs, d, sa)
        for m, (d2, i2, r2) in enumerate(rs):
            if m == n or not covers(r2, r):
                continue
            w2 = scopes(docs, d2, sa)
            if where and ("*" in w2 or where <= w2):
                print("%s/%s [%s]" % (d2["kind"], d2["metadata"]["name"], describe(r2)))
                return 0
        return 0
    if sys.argv[2] == "find":
        n = int(sys.argv[4])
        d, i, r = rs[n]
        for m, (d2, i2, r2) in enumerate(rules(load(sys.argv[3]))):
            if d2["metadata"]["name"] == d["metadata"]["name"] and r2 == r:
                print(m)
                return 0
        print(-1)
        return 0
    if sys.argv[2] == "list":
        for n, (d, i, r) in enumerate(rs):
            print("%d\t%s/%s\t%s\t%s" % (n, d["kind"], d["metadata"]["name"], describe(r),
                                         json.dumps(r)))
        return 0
    n = int(sys.argv[3])
    if n >= 0:
        d, i, _ = rs[n]
        del d["rules"][i]
    with open(sys.argv[4], "w") as f:
        yaml.safe_dump_all(docs, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
