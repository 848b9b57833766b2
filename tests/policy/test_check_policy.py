#!/usr/bin/env python3
"""Proves check_policy.py catches what it claims to catch.

Usage: test_check_policy.py RENDERED.yaml

RENDERED.yaml is a compliant render of the chart (it must pass). Each case below breaks exactly one
thing in a copy of its Deployment or of one of its Roles and requires the checker to report that
rule, and only that rule. Exits 0 when every case behaves, 1 otherwise.
"""

import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_policy  # noqa: E402


def container(d):
    return d["spec"]["template"]["spec"]["containers"][0]


def pod(d):
    return d["spec"]["template"]["spec"]


def csc(d):
    return container(d).setdefault("securityContext", {})


def psc(d):
    return pod(d).setdefault("securityContext", {})


def drop_both(key):
    def f(d):
        psc(d).pop(key, None)
        csc(d).pop(key, None)
    return f


def setc(key, value):
    def f(d):
        csc(d)[key] = value
    return f


def rule0(field, value):
    def f(r):
        r["rules"][0][field] = value
    return f


# (name, target kind: "deploy" or "role", mutation, the one rule it must trigger)
CASES = [
    ("wildcard verb", "role", rule0("verbs", ["*"]), "rbac-wildcard"),
    ("wildcard resource", "role", rule0("resources", ["*"]), "rbac-wildcard"),
    ("wildcard apiGroup", "role", rule0("apiGroups", ["*"]), "rbac-wildcard"),
    ("wildcard subresource", "role", rule0("resources", ["deployments/*"]), "rbac-wildcard"),
    ("escalating verb", "role", rule0("verbs", ["get", "bind"]), "rbac-escalation"),
    ("secrets", "role", rule0("resources", ["secrets"]), "rbac-forbidden-resource"),
    ("runAsNonRoot missing", "deploy", drop_both("runAsNonRoot"), "pss-runAsNonRoot"),
    ("runAsNonRoot false", "deploy", setc("runAsNonRoot", False), "pss-runAsNonRoot"),
    ("runAsUser 0", "deploy", setc("runAsUser", 0), "pss-runAsUser"),
    ("runAsUser missing", "deploy", drop_both("runAsUser"), "pss-runAsUser"),
    ("runAsUser a name", "deploy", setc("runAsUser", "nobody"), "pss-runAsUser"),
    ("runAsGroup 0", "deploy", setc("runAsGroup", 0), "pss-runAsGroup"),
    ("allowPrivilegeEscalation true", "deploy", setc("allowPrivilegeEscalation", True),
     "pss-allowPrivilegeEscalation"),
    ("allowPrivilegeEscalation missing", "deploy",
     lambda d: csc(d).pop("allowPrivilegeEscalation"), "pss-allowPrivilegeEscalation"),
    ("capabilities not dropped", "deploy", lambda d: csc(d).pop("capabilities"),
     "pss-capabilities"),
    ("capability added", "deploy",
     lambda d: csc(d)["capabilities"].__setitem__("add", ["SYS_ADMIN"]), "pss-capabilities"),
    ("seccomp missing", "deploy", drop_both("seccompProfile"), "pss-seccompProfile"),
    ("seccomp unconfined", "deploy", setc("seccompProfile", {"type": "Unconfined"}),
     "pss-seccompProfile"),
    ("writable root fs", "deploy", setc("readOnlyRootFilesystem", False),
     "pss-readOnlyRootFilesystem"),
    ("privileged", "deploy", setc("privileged", True), "pss-privileged"),
    ("hostNetwork", "deploy", lambda d: pod(d).__setitem__("hostNetwork", True),
     "pss-host-namespaces"),
    ("hostPath", "deploy",
     lambda d: pod(d).setdefault("volumes", []).append({"name": "h", "hostPath": {"path": "/"}}),
     "pss-hostpath"),
    ("no limits", "deploy", lambda d: container(d)["resources"].pop("limits"), "resources-limits"),
    ("no memory limit", "deploy", lambda d: container(d)["resources"]["limits"].pop("memory"),
     "resources-limits"),
    ("no liveness probe", "deploy", lambda d: container(d).pop("livenessProbe"), "probes"),
    ("no readiness probe", "deploy", lambda d: container(d).pop("readinessProbe"), "probes"),
    ("chart label missing", "deploy", lambda d: d["metadata"]["labels"].pop("helm.sh/chart"),
     "labels"),
]


def main(argv):
    if len(argv) != 1:
        sys.stderr.write(__doc__)
        return 2
    objs = check_policy.load(argv)
    base = check_policy.check(objs, chart_labels=True)
    if base:
        print("FAIL the unbroken render is not compliant:\n  " + "\n  ".join(base))
        return 1
    deploy = next((o for o in objs if o["kind"] == "Deployment"), None)
    role = next((o for o in objs if o["kind"] in ("Role", "ClusterRole")), None)
    if deploy is None or role is None:
        print("FAIL the render has no Deployment or no Role to break")
        return 1
    failed = 0
    for name, target, mutate, want in CASES:
        obj = copy.deepcopy(deploy if target == "deploy" else role)
        mutate(obj)
        got = check_policy.check([obj], chart_labels=True)
        rules = sorted({g.split(" ", 1)[0] for g in got})
        if rules == [want]:
            print("ok   %-34s -> %s" % (name, got[0]))
        else:
            failed += 1
            print("FAIL %-34s want only %s, got %s" % (name, want, got))
    print("%d passed, %d failed" % (len(CASES) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
