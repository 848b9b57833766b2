#!/usr/bin/env python3
"""Splits the RBAC that `kubectl kustomize manifests/` renders, for tests/reliability/p_rbac.sh.

    rbac_rules.py RENDERED.yaml list            one line per rule: INDEX<TAB>KIND/NAME<TAB>rule
    rbac_rules.py RENDERED.yaml preload N OUT   writes OUT: the Namespace, ServiceAccount, Roles,
                                                ClusterRoles and bindings, with rule N removed
                                                (N = -1: none removed)
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


def main():
    docs = load(sys.argv[1])
    rs = rules(docs)
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
