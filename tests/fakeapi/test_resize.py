#!/usr/bin/env python3
"""The fake cluster's in-place pod resize (pods/resize, Kubernetes 1.35 rules): the cgroup
limits of the running process follow, the pod keeps its uid and restart count; QoS class
changes, removed limits and other resources are refused; changes outside resources are
dropped; Infeasible and Deferred; a memory limit below usage stays in progress with reason
Error; the older-server switch refuses a memory-limit decrease with 422; RestartContainer
restarts the container; a plain pod update cannot change resources; `kubectl patch
--subresource resize` works. Run by tests/integration/fakeapi_resize.sh."""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from client import Fake, PodChecks, deployment, http_get  # noqa: E402

NS = "/api/v1/namespaces/default"
APPS = "/apis/apps/v1/namespaces/default"
SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"


def res(cpu, mem, req_cpu=None, req_mem=None):
    return {"limits": {"cpu": cpu, "memory": mem},
            "requests": {"cpu": req_cpu or cpu, "memory": req_mem or mem}}


def resize_patch(cpu, mem, name="app", **kw):
    return {"spec": {"containers": [{"name": name, "resources": res(cpu, mem, **kw)}]}}


class Resize(PodChecks, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fake("--node-cpu", "2", "--node-memory", "4Gi", "--max-grace", "1")
        _, _, pods = cls.f.control("GET", "/fake/pods")
        cls.cgroups = pods["cgroups"]

    @classmethod
    def tearDownClass(cls):
        cls.f.stop()

    def app(self, name, resources, policy=None):
        """Creates a one-pod Deployment (deleted when the test ends, so that its requests do
        not crowd the node for the next test) and returns its ready pod."""
        d = deployment(name, replicas=1)
        c = d["spec"]["template"]["spec"]["containers"][0]
        c["resources"] = resources
        if policy:
            c["resizePolicy"] = policy
        code, _, out = self.req("POST", APPS + "/deployments", d)
        self.assertEqual(code, 201, out)
        self.addCleanup(self.req, "DELETE", APPS + "/deployments/" + name)
        return self.ready_pod(name)

    def resize(self, pod, body, ctype=SMP):
        return self.req("PATCH", NS + "/pods/%s/resize" % pod["metadata"]["name"], body,
                        ctype=ctype)

    def get(self, pod):
        return self.req("GET", NS + "/pods/" + pod["metadata"]["name"])[2]

    def cond(self, pod, ctype):
        return next((c for c in pod.get("status", {}).get("conditions", [])
                     if c["type"] == ctype), None)

    def settled(self, pod, cpu):
        """Waits until the pod reports limits.cpu == cpu in its container status and no
        resize condition; returns the pod."""
        def f():
            p = self.get(pod)
            cs = p["status"]["containerStatuses"][0]
            if cs.get("resources", {}).get("limits", {}).get("cpu") == cpu and \
                    not self.cond(p, "PodResizeInProgress") and \
                    not self.cond(p, "PodResizePending"):
                return p
            return None
        return self.wait("resize to %s" % cpu, f, 15)

    def cgroup(self, pod):
        _, _, d = self.f.control("GET", "/fake/pods")
        return next(p["containers"][0]["cgroup"] for p in d["pods"]
                    if p["name"] == pod["metadata"]["name"])

    def test_discovery(self):
        _, _, d = self.req("GET", "/api/v1")
        r = next(r for r in d["resources"] if r["name"] == "pods/resize")
        self.assertEqual((r["kind"], sorted(r["verbs"])), ("Pod", ["get", "patch", "update"]))

    def test_cpu_resize_live(self):
        p = self.app("live", res("250m", "128Mi"))
        self.assertEqual(p["status"]["qosClass"], "Guaranteed")
        pid = self.cgroup(p)
        code, _, out = self.resize(p, resize_patch("750m", "128Mi"))
        self.assertEqual(code, 200, out)
        self.assertEqual(out["spec"]["containers"][0]["resources"]["limits"]["cpu"], "750m")
        # Accepted and shown in progress before it is applied.
        seen = self.wait("PodResizeInProgress", lambda: self.cond(self.get(p),
                                                                  "PodResizeInProgress"), 5)
        self.assertNotIn("reason", seen)
        q = self.settled(p, "750m")
        self.assertEqual(q["metadata"]["uid"], p["metadata"]["uid"])
        cs = q["status"]["containerStatuses"][0]
        self.assertEqual((cs["restartCount"], cs["ready"]), (0, True))
        self.assertEqual(cs["allocatedResources"], {"cpu": "750m", "memory": "128Mi"})
        self.assertEqual(cs["resources"]["requests"]["cpu"], "750m")
        cg = self.cgroup(q)
        self.assertEqual(cg["cpuMillis"], 750)
        if self.cgroups != "none":
            f = "cpu.max" if self.cgroups == "v2" else "cpu.cfs_quota_us"
            with open(os.path.join(cg["cpuDir"], f)) as fh:
                self.assertEqual(fh.read().split()[0], "75000")
        self.assertEqual(pid.get("cpuDir"), cg.get("cpuDir"))
        # The same process serves, with its new limit.
        self.assertEqual(http_get("http://%s:8080/" % q["status"]["podIP"])[0], 200)

    def test_refused(self):
        p = self.app("refuse", res("500m", "128Mi"))
        cases = [
            (resize_patch("500m", "128Mi", req_cpu="250m"), "Pod QOS Class may not change"),
            ({"spec": {"containers": [{"name": "app", "resources": {
                "limits": {"cpu": "500m", "memory": "128Mi", "ephemeral-storage": "1Gi"}}}]}},
             "only cpu and memory resources are mutable"),
            ({"spec": {"containers": [{"name": "app", "resources": {
                "limits": {"memory": None}, "requests": {"memory": None}}}]}},
             "cannot be removed"),
            ({"spec": {"containers": [{"name": "app", "resources": {
                "requests": {"cpu": "1"}}}]}}, "must be less than or equal to cpu limit"),
        ]
        for body, want in cases:
            code, _, out = self.resize(p, body)
            self.assertEqual(code, 422, out)
            self.assertEqual(out["reason"], "Invalid")
            self.assertIn(want, out["message"])
        # Outside resources, a resize changes nothing (the change is dropped, not refused).
        code, _, out = self.resize(p, {"metadata": {"labels": {"x": "y"}}, "spec": {
            "containers": [{"name": "app", "image": "example/other:2"}]}})
        self.assertEqual(code, 200, out)
        q = self.get(p)
        self.assertEqual(q["spec"]["containers"][0]["image"], "example/web:1")
        self.assertNotIn("x", q["metadata"].get("labels", {}))
        # A plain update cannot change resources at all.
        q["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "1"
        code, _, out = self.req("PUT", NS + "/pods/" + q["metadata"]["name"], q)
        self.assertEqual(code, 422, out)
        self.assertIn("resize subresource", out["message"])

    def test_burstable_stays_burstable(self):
        p = self.app("burst", res("500m", "128Mi", req_cpu="100m", req_mem="64Mi"))
        self.assertEqual(p["status"]["qosClass"], "Burstable")
        code, _, out = self.resize(p, resize_patch("800m", "128Mi", req_cpu="200m",
                                                   req_mem="64Mi"))
        self.assertEqual(code, 200, out)
        self.settled(p, "800m")
        # requests = limits for both would make it Guaranteed.
        code, _, out = self.resize(p, resize_patch("800m", "128Mi"))
        self.assertEqual(code, 422, out)

    def test_infeasible_and_deferred(self):
        p = self.app("big", res("500m", "128Mi"))
        code, _, out = self.resize(p, resize_patch("3", "128Mi"))
        self.assertEqual(code, 200, out)
        c = self.wait("PodResizePending", lambda: self.cond(self.get(p), "PodResizePending"), 5)
        self.assertEqual(c["reason"], "Infeasible")
        self.assertIn("cpu, requested: 3000, capacity: 2000", c["message"])
        time.sleep(1)
        q = self.get(p)
        self.assertEqual(q["status"]["containerStatuses"][0]["resources"]["limits"]["cpu"],
                         "500m")
        self.assertIsNone(self.cond(q, "PodResizeInProgress"))
        # Back to something that fits: the pending resize goes.
        self.assertEqual(self.resize(p, resize_patch("500m", "128Mi"))[0], 200)
        self.wait("no PodResizePending",
                  lambda: not self.cond(self.get(p), "PodResizePending"), 5)
        # Another pod holds 1 CPU: 1.5 more does not fit now, but could later.
        self.app("holder", res("1", "64Mi"))
        self.assertEqual(self.resize(p, resize_patch("1500m", "128Mi"))[0], 200)
        c = self.wait("Deferred", lambda: self.cond(self.get(p), "PodResizePending"), 5)
        self.assertEqual(c["reason"], "Deferred")
        self.assertEqual(self.req("DELETE", APPS + "/deployments/holder")[0], 200)
        self.wait("holder gone", lambda: not self.pods("holder"), 15)
        self.settled(p, "1500m")

    def test_memory_below_usage(self):
        if self.cgroups == "none":
            self.skipTest("no writable cgroup: usage is not measured")
        p = self.app("hungry", res("500m", "256Mi"))
        ip = p["status"]["podIP"]
        self.assertEqual(http_get("http://%s:8080/alloc?mb=80" % ip)[0], 200)
        code, _, out = self.resize(p, resize_patch("500m", "64Mi"))
        self.assertEqual(code, 200, out)

        def error():
            c = self.cond(self.get(p), "PodResizeInProgress")
            return c if c and c.get("reason") == "Error" else None
        c = self.wait("PodResizeInProgress/Error", error, 10)
        self.assertIn("below its current usage", c["message"])
        time.sleep(1)
        q = self.get(p)
        self.assertIsNotNone(error())  # retried, still refused
        self.assertEqual(q["status"]["containerStatuses"][0]["resources"]["limits"]["memory"],
                         "256Mi")
        self.assertEqual(q["status"]["containerStatuses"][0]["restartCount"], 0)
        # Above the usage it goes through.
        self.assertEqual(self.resize(p, resize_patch("500m", "200Mi"))[0], 200)
        q = self.settled(p, "500m")
        self.wait("memory 200Mi", lambda: self.get(p)["status"]["containerStatuses"][0]
                  ["resources"]["limits"]["memory"] == "200Mi", 10)
        self.assertEqual(self.cgroup(p)["memoryBytes"], 200 << 20)

    def test_older_server_refuses_memory_decrease(self):
        p = self.app("older", res("500m", "128Mi"))
        self.f.control("POST", "/fake/config", {"resizeForbidMemoryDecrease": True})
        try:
            code, _, out = self.resize(p, resize_patch("500m", "96Mi"))
            self.assertEqual(code, 422, out)
            self.assertIn("memory limits cannot be decreased unless resizePolicy is "
                          "RestartContainer", out["message"])
            # An increase is fine.
            self.assertEqual(self.resize(p, resize_patch("500m", "160Mi"))[0], 200)
        finally:
            self.f.control("POST", "/fake/config", {"resizeForbidMemoryDecrease": False})
        self.assertEqual(self.resize(p, resize_patch("500m", "96Mi"))[0], 200)
        self.wait("memory 96Mi", lambda: self.get(p)["status"]["containerStatuses"][0]
                  .get("resources", {}).get("limits", {}).get("memory") == "96Mi", 10)

    def test_restart_container_policy(self):
        p = self.app("restarty", res("500m", "128Mi"), policy=[
            {"resourceName": "cpu", "restartPolicy": "NotRequired"},
            {"resourceName": "memory", "restartPolicy": "RestartContainer"}])
        self.assertEqual(self.resize(p, resize_patch("600m", "128Mi"))[0], 200)
        q = self.settled(p, "600m")
        self.assertEqual(q["status"]["containerStatuses"][0]["restartCount"], 0)
        self.assertEqual(self.resize(p, resize_patch("600m", "96Mi"))[0], 200)
        self.wait("restarted with 96Mi", lambda: (lambda cs: cs["restartCount"] == 1 and
                                                   cs["ready"] and cs["resources"]["limits"]
                                                   ["memory"] == "96Mi")(
            self.get(p)["status"]["containerStatuses"][0]), 15)
        self.assertEqual(self.get(p)["metadata"]["uid"], p["metadata"]["uid"])

    def test_kubectl_patch_subresource(self):
        p = self.app("kubectl", res("300m", "128Mi"))
        cache = tempfile.mkdtemp(prefix="kubectl-cache.")
        r = subprocess.run(
            ["kubectl", "--kubeconfig", os.path.join(self.f.dir, "kubeconfig"), "--cache-dir",
             cache, "patch", "pod", p["metadata"]["name"], "--subresource", "resize",
             "--type", "merge", "-p", json.dumps({"spec": {"containers": [
                 {"name": "app", "resources": res("400m", "128Mi")}]}})],
            capture_output=True, text=True, timeout=60)
        if r.returncode != 0 and "unknown flag" in r.stderr:
            self.skipTest("kubectl without --subresource")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("patched", r.stdout)
        self.settled(p, "400m")


if __name__ == "__main__":
    unittest.main()
