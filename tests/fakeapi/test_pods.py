#!/usr/bin/env python3
"""The fake cluster's kubelet and Deployment controller: pods as real processes under cgroup
limits, OOMKilled, crash loops with back-off, readiness, a held rollout that hits its
progress deadline, a CPU limit above the host's capacity, env from the pod spec, the scale
subresource. Run by tests/integration/fakeapi_pods.sh."""

import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from client import Fake, PodChecks, deployment, http_get  # noqa: E402

NS = "/api/v1/namespaces/default"
APPS = "/apis/apps/v1/namespaces/default"
SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"


class Pods(PodChecks, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fake("--restart-backoff", "0.3", "--max-grace", "1", "--metrics-window", "1")
        _, _, pods = cls.f.control("GET", "/fake/pods")
        cls.cgroups = pods["cgroups"]

    @classmethod
    def tearDownClass(cls):
        cls.f.stop()

    def deploy(self, name, **kw):
        code, _, d = self.req("POST", APPS + "/deployments", deployment(name, **kw))
        self.assertEqual(code, 201, d)
        return d

    def dstatus(self, name):
        return self.req("GET", APPS + "/deployments/" + name)[2].get("status", {})

    def cond(self, name, ctype):
        return next((c for c in self.dstatus(name).get("conditions", [])
                     if c["type"] == ctype), {})

    def cgroup_of(self, pod_name):
        _, _, d = self.f.control("GET", "/fake/pods")
        for p in d["pods"]:
            if p["name"] == pod_name:
                return p["containers"][0]["cgroup"]
        return None

    def test_env_and_pod_ip(self):
        self.req("POST", NS + "/configmaps", {"metadata": {"name": "envcm"},
                                              "data": {"level": "debug"}})
        self.deploy("envapp", replicas=1, env=[
            {"name": "WORKERS", "value": "3"},
            {"name": "LEVEL", "valueFrom": {"configMapKeyRef": {"name": "envcm",
                                                                "key": "level"}}},
            {"name": "MY_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "URL", "value": "http://$(MY_IP):8080"}])
        p = self.ready_pod("envapp")
        ip = p["status"]["podIP"]
        self.assertTrue(ip.startswith("127.") and not ip.startswith("127.0.0.1"), ip)
        import json
        _, body = http_get("http://%s:8080/env" % ip)
        env = json.loads(body)
        self.assertEqual((env["POD_IP"], env["PORT"], env["WORKERS"], env["LEVEL"],
                          env["MY_IP"], env["URL"], env["POD_NAME"]),
                         (ip, "8080", "3", "debug", ip, "http://%s:8080" % ip,
                          p["metadata"]["name"]))
        self.assertEqual(p["spec"]["nodeName"], "fake-node")
        cs = p["status"]["containerStatuses"][0]
        self.assertEqual((cs["ready"], cs["restartCount"], list(cs["state"])),
                         (True, 0, ["running"]))

    def test_oom_killed(self):
        if self.cgroups == "none":
            self.skipTest("no writable cgroup")
        d = deployment("oom", replicas=1)
        d["spec"]["template"]["spec"]["containers"][0]["resources"] = {
            "limits": {"memory": "48Mi", "cpu": "1"}}
        self.assertEqual(self.req("POST", APPS + "/deployments", d)[0], 201)
        p = self.ready_pod("oom")
        try:
            http_get("http://%s:8080/alloc?mb=96" % p["status"]["podIP"])
        except OSError:
            pass  # the process died mid-request

        def oomed():
            for q in self.pods("oom"):
                for cs in q.get("status", {}).get("containerStatuses", []):
                    t = cs.get("lastState", {}).get("terminated", {})
                    if t.get("reason") == "OOMKilled" and cs["restartCount"] >= 1:
                        return cs
            return None
        cs = self.wait("OOMKilled", oomed)
        self.assertEqual(cs["lastState"]["terminated"]["exitCode"], 137)
        # It restarts and serves again.
        self.wait("ready after OOM", lambda: any(
            c.get("ready") for q in self.pods("oom")
            for c in q.get("status", {}).get("containerStatuses", [])))

    def test_crash_loop_backoff(self):
        self.deploy("crash", replicas=1, image="example/crash:1")

        def restarted():
            for q in self.pods("crash"):
                for cs in q.get("status", {}).get("containerStatuses", []):
                    if cs["restartCount"] >= 2:
                        return cs
            return None
        cs = self.wait("restarts", restarted)
        self.assertEqual(cs["lastState"]["terminated"]["exitCode"], 3)
        self.assertEqual(cs["lastState"]["terminated"]["reason"], "Error")
        self.assertFalse(cs["ready"])
        self.assertEqual(self.cond("crash", "Available").get("status"), "False")
        _, _, evs = self.req("GET", NS + "/events?fieldSelector=reason%3DBackOff")
        self.assertTrue(evs["items"])

    def test_unknown_image(self):
        self.deploy("noimg", replicas=1, image="nowhere/unknown:9")

        def waiting():
            for q in self.pods("noimg"):
                for cs in q.get("status", {}).get("containerStatuses", []):
                    if cs.get("state", {}).get("waiting", {}).get("reason") == "ErrImagePull":
                        return True
            return False
        self.wait("ErrImagePull", waiting)

    def test_readiness_probe(self):
        d = deployment("probe", replicas=1)
        c = d["spec"]["template"]["spec"]["containers"][0]
        c["readinessProbe"] = {"httpGet": {"path": "/missing", "port": 8080},
                               "periodSeconds": 1}
        self.req("POST", APPS + "/deployments", d)
        self.wait("running", lambda: any(q.get("status", {}).get("phase") == "Running"
                                         for q in self.pods("probe")))
        time.sleep(2)
        q = self.pods("probe")[0]
        self.assertFalse(q["status"]["containerStatuses"][0]["ready"])
        self.assertEqual(self.dstatus("probe").get("availableReplicas", 0), 0)
        # A probe on a path that answers makes it ready.
        patch = {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "readinessProbe": {"httpGet": {"path": "/healthz"}}}]}}}}
        self.assertEqual(self.req("PATCH", APPS + "/deployments/probe", patch, ctype=SMP)[0],
                         200)
        self.wait("available", lambda: self.dstatus("probe").get("availableReplicas") == 1
                  and self.dstatus("probe").get("updatedReplicas") == 1
                  and self.dstatus("probe").get("replicas") == 1)

    def test_stuck_rollout_deadline(self):
        self.deploy("stuck", replicas=1, progressDeadlineSeconds=2)
        old = self.ready_pod("stuck")
        self.wait("complete", lambda: self.cond("stuck", "Progressing").get("reason") ==
                  "NewReplicaSetAvailable")
        self.req("PATCH", APPS + "/deployments/stuck",
                 {"metadata": {"annotations": {"fake.sizeup.dev/stuck": "true"}},
                  "spec": {"template": {"metadata": {"annotations": {"v": "2"}}}}}, ctype=MERGE)
        c = self.wait("deadline", lambda: (lambda c: c if c.get("reason") ==
                                           "ProgressDeadlineExceeded" else None)(
            self.cond("stuck", "Progressing")), timeout=20)
        self.assertEqual(c["status"], "False")
        st = self.dstatus("stuck")
        self.assertEqual((st.get("updatedReplicas"), st.get("availableReplicas")), (1, 1))
        # The old pod still serves; the new one is Pending, unschedulable.
        self.assertEqual(http_get("http://%s:8080/healthz" % old["status"]["podIP"])[0], 200)
        pend = [q for q in self.pods("stuck") if q["status"].get("phase") == "Pending"]
        self.assertEqual(pend[0]["status"]["conditions"][0]["reason"], "Unschedulable")
        # Lifting the knob lets the rollout finish.
        self.req("PATCH", APPS + "/deployments/stuck",
                 {"metadata": {"annotations": {"fake.sizeup.dev/stuck": None}}}, ctype=MERGE)
        self.wait("rollout after unstick", lambda: self.cond("stuck", "Progressing").get(
            "reason") == "NewReplicaSetAvailable", timeout=30)

    def test_cpu_limit_above_host_and_throttling(self):
        if self.cgroups == "none":
            self.skipTest("no writable cgroup")
        big = deployment("bigcpu", replicas=1)
        big["spec"]["template"]["spec"]["containers"][0]["resources"] = {
            "limits": {"cpu": str(4 * (os.cpu_count() or 1)), "memory": "128Mi"}}
        small = deployment("smallcpu", replicas=1)
        small["spec"]["template"]["spec"]["containers"][0]["resources"] = {
            "limits": {"cpu": "100m", "memory": "128Mi"}}
        self.req("POST", APPS + "/deployments", big)
        self.req("POST", APPS + "/deployments", small)
        pb, ps = self.ready_pod("bigcpu"), self.ready_pod("smallcpu")
        cg = self.cgroup_of(pb["metadata"]["name"])
        self.assertEqual(cg["cpuMillis"], 4000 * (os.cpu_count() or 1))
        self.assertNotIn("unlimited", cg)

        def timed(ip, n=3):
            t0 = time.time()
            for _ in range(n):
                http_get("http://%s:8080/work?ms=60" % ip, timeout=20)
            return time.time() - t0
        # 300 ms of CPU at 0.1 CPU takes at least ~2.5 s of wall time (quota periods): longer
        # than two metrics windows (--metrics-window 1), so the last scrape's window was busy.
        t_small = timed(ps["status"]["podIP"], 5)
        code, _, m = self.req("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/"
                              + ps["metadata"]["name"])
        t_big = timed(pb["status"]["podIP"], 5)
        self.assertGreater(t_small, 2.0)
        self.assertLess(t_big, t_small)
        # metrics.k8s.io reports the usage, never above the limit (plus sampling slack).
        self.assertEqual((code, m["kind"]), (200, "PodMetrics"))
        usage = m["containers"][0]["usage"]
        nano = int(usage["cpu"].rstrip("n"))
        self.assertGreater(nano, 30 * 10**6)
        self.assertLess(nano, 150 * 10**6)
        self.assertGreater(int(usage["memory"].rstrip("Ki")), 1024)
        # As metrics-server reports it: the last scrape's time in whole seconds, the window
        # between the last two scrapes (the configured resolution once a pod ran a while).
        self.assertRegex(m["timestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertRegex(m["window"], r"^[0-9.]+s$")
        self.assertAlmostEqual(float(m["window"][:-1]), 1.0, delta=0.3)

    def test_scale_subresource_and_pod_replacement(self):
        self.deploy("scaled", replicas=1)
        self.ready_pod("scaled")
        code, _, sc = self.req("GET", APPS + "/deployments/scaled/scale")
        self.assertEqual((code, sc["kind"], sc["spec"]["replicas"]), (200, "Scale", 1))
        sc["spec"]["replicas"] = 2
        self.assertEqual(self.req("PUT", APPS + "/deployments/scaled/scale", sc)[0], 200)
        self.wait("2 ready", lambda: self.dstatus("scaled").get("readyReplicas") == 2)
        victim = self.pods("scaled")[0]["metadata"]["name"]
        self.assertEqual(self.req("DELETE", NS + "/pods/" + victim)[0], 200)
        self.wait("replacement", lambda: self.dstatus("scaled").get("readyReplicas") == 2 and
                  victim not in [q["metadata"]["name"] for q in self.pods("scaled")])
        self.req("PATCH", APPS + "/deployments/scaled", {"spec": {"replicas": 0}}, ctype=MERGE)
        self.wait("scaled to 0", lambda: not self.pods("scaled") and
                  not self.dstatus("scaled").get("replicas"))


    def test_endpoints_follow_their_service(self):
        self.deploy("eps", replicas=1)
        ip = self.ready_pod("eps")["status"]["podIP"]
        svc = {"metadata": {"name": "eps"}, "spec": {"selector": {"app": "eps"},
                                                     "ports": [{"port": 8080}]}}
        self.assertEqual(self.req("POST", NS + "/services", svc)[0], 201)
        self.wait("endpoints", lambda: ip in json.dumps(
            self.req("GET", NS + "/endpoints/eps")[2]))
        self.assertEqual(self.req("DELETE", NS + "/services/eps")[0], 200)
        # The endpoints controller deletes the Endpoints of a Service that is gone.
        self.wait("endpoints gone", lambda: self.req("GET", NS + "/endpoints/eps")[0] == 404)

if __name__ == "__main__":
    unittest.main(verbosity=2)
