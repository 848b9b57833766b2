#!/usr/bin/env python3
"""The fake API server's pod admission (admission.py) answers as a real one does: LimitRange
defaults and max/min per container, the restricted Pod Security level on a namespace labelled
for it, ResourceQuota (exceeded quota, must specify), each a 403 Forbidden with the real
message; and the ReplicaSet and Job controllers, refused, write FailedCreate as the real ones do
(ReplicaFailure conditions on the ReplicaSet and its Deployment, Warning Events); a pods/resize
request meets the LimitRange and the quota (on its growth) too. Run by
tests/integration/fakeapi_admission.sh."""

import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from client import Fake, PodChecks  # noqa: E402

RESTRICTED_SC = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                 "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}


def pod(name, cpu=None, mem=None, limits=True, sc=None):
    c = {"name": "app", "image": "example/web:1"}
    r = {}
    if cpu or mem:
        q = {k: v for k, v in (("cpu", cpu), ("memory", mem)) if v}
        r = {"limits": dict(q)} if limits else {"requests": dict(q)}
    c["resources"] = r
    if sc is not None:
        c["securityContext"] = sc
    return {"metadata": {"name": name}, "spec": {"containers": [c]}}


class Admission(unittest.TestCase, PodChecks):
    @classmethod
    def setUpClass(cls):
        cls.f = Fake("--no-kubelet")

    @classmethod
    def tearDownClass(cls):
        cls.f.stop()

    def ns(self, name, labels=None):
        code, _, obj = self.req("POST", "/api/v1/namespaces",
                                {"metadata": {"name": name, "labels": labels or {}}})
        self.assertEqual(code, 201, obj)
        return "/api/v1/namespaces/" + name

    def assertForbidden(self, code, st, name, why):
        self.assertEqual((code, st.get("reason")), (403, "Forbidden"), st)
        self.assertEqual(st["message"], 'pods "%s" is forbidden: %s' % (name, why))
        self.assertEqual(st["details"], {"name": name, "kind": "pods"})

    def test_limitrange_defaults_and_max(self):
        ns = self.ns("lr")
        code, _, obj = self.req("POST", ns + "/limitranges", {
            "metadata": {"name": "lim"}, "spec": {"limits": [{
                "type": "Container", "max": {"cpu": "1", "memory": "1Gi"},
                "default": {"cpu": "500m", "memory": "256Mi"},
                "defaultRequest": {"cpu": "250m", "memory": "128Mi"}}]}})
        self.assertEqual(code, 201, obj)
        code, _, st = self.req("POST", ns + "/pods", pod("big", cpu="2"))
        self.assertForbidden(code, st, "big",
                             "maximum cpu usage per Container is 1, but limit is 2")
        code, _, st = self.req("POST", ns + "/pods", pod("both", cpu="2", mem="2Gi"))
        self.assertForbidden(code, st, "both",
                             "[maximum cpu usage per Container is 1, but limit is 2, "
                             "maximum memory usage per Container is 1Gi, but limit is 2Gi]")
        code, _, p = self.req("POST", ns + "/pods", pod("plain"))
        self.assertEqual(code, 201, p)
        self.assertEqual(p["spec"]["containers"][0]["resources"],
                         {"limits": {"cpu": "500m", "memory": "256Mi"},
                          "requests": {"cpu": "250m", "memory": "128Mi"}})
        # A container that sets only a limit gets its request from the limit, not the default.
        code, _, p = self.req("POST", ns + "/pods", pod("lim-only", cpu="800m"))
        self.assertEqual(code, 201, p)
        self.assertEqual(p["spec"]["containers"][0]["resources"]["requests"]["cpu"], "800m")

    def test_quota_exceeded_and_status(self):
        ns = self.ns("quota")
        code, _, obj = self.req("POST", ns + "/resourcequotas", {
            "metadata": {"name": "compute"},
            "spec": {"hard": {"requests.cpu": "1", "limits.memory": "512Mi", "pods": "3"}}})
        self.assertEqual(code, 201, obj)
        code, _, st = self.req("POST", ns + "/pods", pod("nolim", cpu="100m", limits=False))
        self.assertForbidden(code, st, "nolim",
                             "failed quota: compute: must specify limits.memory for: app")
        code, _, p = self.req("POST", ns + "/pods", pod("a", cpu="600m", mem="128Mi"))
        self.assertEqual(code, 201, p)
        code, _, st = self.req("POST", ns + "/pods", pod("b", cpu="600m", mem="128Mi"))
        self.assertForbidden(code, st, "b", "exceeded quota: compute, requested: "
                             "requests.cpu=600m, used: requests.cpu=600m, limited: "
                             "requests.cpu=1")
        q = self.wait("quota status", lambda: (lambda o: o if (o.get("status") or {}).get(
            "used", {}).get("requests.cpu") == "600m" else None)(
                self.req("GET", ns + "/resourcequotas/compute")[2]))
        self.assertEqual(q["status"]["used"],
                         {"requests.cpu": "600m", "limits.memory": "128Mi", "pods": "1"})
        self.assertEqual(q["status"]["hard"], q["spec"]["hard"])
        # Deleting the pod frees its share: the second create now fits.
        self.assertEqual(self.req("DELETE", ns + "/pods/a?gracePeriodSeconds=0")[0], 200)
        self.wait("pod a gone", lambda: self.req("GET", ns + "/pods/a")[0] == 404)
        code, _, p = self.req("POST", ns + "/pods", pod("b", cpu="600m", mem="128Mi"))
        self.assertEqual(code, 201, p)

    def test_pod_security_restricted(self):
        ns = self.ns("psa", {"pod-security.kubernetes.io/enforce": "restricted"})
        code, _, st = self.req("POST", ns + "/pods", pod("loose"))
        self.assertForbidden(code, st, "loose", 'violates PodSecurity "restricted:latest": '
                             'allowPrivilegeEscalation != false (container "app" must set '
                             'securityContext.allowPrivilegeEscalation=false), unrestricted '
                             'capabilities (container "app" must set securityContext.'
                             'capabilities.drop=["ALL"]), runAsNonRoot != true (pod or '
                             'container "app" must set securityContext.runAsNonRoot=true), '
                             'seccompProfile (pod or container "app" must set securityContext.'
                             'seccompProfile.type to "RuntimeDefault" or "Localhost")')
        bad = pod("root", sc=dict(RESTRICTED_SC, runAsUser=0))
        code, _, st = self.req("POST", ns + "/pods", bad)
        self.assertForbidden(code, st, "root", 'violates PodSecurity "restricted:latest": '
                             'runAsUser=0 (container "app" must not set runAsUser=0)')
        priv = pod("priv", sc=dict(RESTRICTED_SC, privileged=True))
        priv["spec"]["hostNetwork"] = True
        code, _, st = self.req("POST", ns + "/pods", priv)
        self.assertEqual(code, 403, st)
        self.assertIn("host namespaces (hostNetwork=true), privileged (container \"app\" must "
                      "not set securityContext.privileged=true)", st["message"])
        code, _, p = self.req("POST", ns + "/pods", pod("tight", sc=RESTRICTED_SC))
        self.assertEqual(code, 201, p)
        # Pod-level runAsNonRoot and seccompProfile cover every container.
        ok = pod("podlevel", sc={"allowPrivilegeEscalation": False,
                                 "capabilities": {"drop": ["ALL"]}})
        ok["spec"]["securityContext"] = {"runAsNonRoot": True,
                                         "seccompProfile": {"type": "RuntimeDefault"}}
        code, _, p = self.req("POST", ns + "/pods", ok)
        self.assertEqual(code, 201, p)
        # Another namespace, unlabelled: nothing enforced.
        code, _, p = self.req("POST", "/api/v1/namespaces/default/pods", pod("loose-ok"))
        self.assertEqual(code, 201, p)

    def test_resize_admitted_too(self):
        ns = self.ns("rsz")
        self.assertEqual(self.req("POST", ns + "/limitranges", {
            "metadata": {"name": "lim"}, "spec": {"limits": [{
                "type": "Container", "max": {"cpu": "1"}}]}})[0], 201)
        self.assertEqual(self.req("POST", ns + "/resourcequotas", {
            "metadata": {"name": "mem"}, "spec": {"hard": {"limits.memory": "300Mi"}}})[0], 201)
        code, _, p = self.req("POST", ns + "/pods", pod("r", cpu="500m", mem="128Mi"))
        self.assertEqual(code, 201, p)

        def resize(cpu, mem):
            r = {"limits": {"cpu": cpu, "memory": mem}, "requests": {"cpu": cpu, "memory": mem}}
            return self.req("PATCH", ns + "/pods/r/resize",
                            {"spec": {"containers": [{"name": "app", "resources": r}]}},
                            ctype="application/strategic-merge-patch+json")
        code, _, st = resize("2", "128Mi")
        self.assertForbidden(code, st, "r", "maximum cpu usage per Container is 1, but limit is 2")
        # The quota charges only the growth: 128Mi used, 256Mi more asked, 300Mi allowed.
        code, _, st = resize("500m", "384Mi")
        self.assertForbidden(code, st, "r", "exceeded quota: mem, requested: limits.memory="
                             "256Mi, used: limits.memory=128Mi, limited: limits.memory=300Mi")
        code, _, p = resize("800m", "256Mi")
        self.assertEqual(code, 200, p)
        self.assertEqual(p["spec"]["containers"][0]["resources"]["limits"],
                         {"cpu": "800m", "memory": "256Mi"})

    def events(self, ns, kind, name):
        _, _, lst = self.req("GET", ns + "/events")
        return [e for e in lst["items"] if e["involvedObject"]["kind"] == kind and
                e["involvedObject"]["name"] == name and e["reason"] == "FailedCreate"]

    def test_replicaset_failed_create(self):
        ns = self.ns("rsq")
        apps = "/apis/apps/v1/namespaces/rsq"
        self.assertEqual(self.req("POST", ns + "/resourcequotas", {
            "metadata": {"name": "q"}, "spec": {"hard": {"limits.cpu": "1"}}})[0], 201)
        d = {"metadata": {"name": "web"}, "spec": {
            "replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{
                "name": "app", "image": "example/web:1",
                "resources": {"limits": {"cpu": "2"}}}]}}}}
        code, _, obj = self.req("POST", apps + "/deployments", d)
        self.assertEqual(code, 201, obj)

        def failure(path):
            o = self.req("GET", path)[2]
            return next((c for c in (o.get("status") or {}).get("conditions") or []
                         if c["type"] == "ReplicaFailure"), None)
        dc = self.wait("Deployment ReplicaFailure",
                       lambda: failure(apps + "/deployments/web"), timeout=10)
        self.assertEqual((dc["status"], dc["reason"]), ("True", "FailedCreate"))
        self.assertRegex(dc["message"], r'^pods "web-[a-z0-9]+-[a-z0-9]{5}" is forbidden: '
                         r"exceeded quota: q, requested: limits.cpu=2, used: limits.cpu=0, "
                         r"limited: limits.cpu=1$")
        rs = self.req("GET", apps + "/replicasets")[2]["items"][0]
        rc = failure(apps + "/replicasets/" + rs["metadata"]["name"])
        self.assertEqual((rc["status"], rc["reason"]), ("True", "FailedCreate"))
        ev = self.wait("FailedCreate Event", lambda: self.events(ns, "ReplicaSet",
                                                                 rs["metadata"]["name"]))
        self.assertEqual(ev[0]["type"], "Warning")
        self.assertTrue(ev[0]["message"].startswith("Error creating: pods \"web-"), ev[0])
        self.assertEqual(ev[0]["source"]["component"], "replicaset-controller")
        # The quota raised: the pod is created and both conditions go.
        q = self.req("GET", ns + "/resourcequotas/q")[2]
        q["spec"]["hard"]["limits.cpu"] = "4"
        self.assertEqual(self.req("PUT", ns + "/resourcequotas/q", q)[0], 200)
        self.wait("ReplicaFailure cleared",
                  lambda: failure(apps + "/deployments/web") is None, timeout=10)
        self.assertIsNone(failure(apps + "/replicasets/" + rs["metadata"]["name"]))
        _, _, pods = self.req("GET", ns + "/pods")
        self.assertEqual(len(pods["items"]), 1)

    def test_job_failed_create(self):
        ns = self.ns("jobpsa", {"pod-security.kubernetes.io/enforce": "restricted"})
        job = {"metadata": {"name": "gen"}, "spec": {"template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "load", "image": "example/web:1"}]}}}}
        code, _, obj = self.req("POST", "/apis/batch/v1/namespaces/jobpsa/jobs", job)
        self.assertEqual(code, 201, obj)
        ev = self.wait("Job FailedCreate Event", lambda: self.events(ns, "Job", "gen"),
                       timeout=10)
        self.assertEqual(ev[0]["source"]["component"], "job-controller")
        self.assertIn('is forbidden: violates PodSecurity "restricted:latest": '
                      "allowPrivilegeEscalation != false", ev[0]["message"])
        time.sleep(1)
        self.assertEqual(self.req("GET", ns + "/pods")[2]["items"], [])


if __name__ == "__main__":
    unittest.main()
