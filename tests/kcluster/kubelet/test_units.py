"""Unit tests of the process kubelet's rules, without a cluster or root:

  python3 -m unittest tests/kcluster/kubelet/test_units.py
"""

import base64
import json
import os
import re
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "..", "..", "fakeapi"))

import kapi  # noqa: E402
import netns  # noqa: E402
import podresize  # noqa: E402
import podspec  # noqa: E402
import podstatus  # noqa: E402
import resmetrics  # noqa: E402


def pod(**kw):
    p = {"metadata": {"name": "web-0", "namespace": "apps", "uid": "1234abcd-0000-4000-8000-0",
                      "generation": 2, "labels": {"app": "web"},
                      "annotations": {"batch.kubernetes.io/job-completion-index": "3"}},
         "spec": {"nodeName": "kc-node-1", "serviceAccountName": "runner",
                  "restartPolicy": "Always", "containers": [{"name": "app", "image": "x"}]},
         "status": {}}
    p.update(kw)
    return p


CTX = {"node": "kc-node-1", "pod_ip": "10.210.1.7", "host_ip": "10.210.255.1",
       "api_host": "10.210.255.1", "api_port": 6443, "node_cpu_millis": 4000,
       "node_memory_bytes": 8 << 30}


def lookup_from(objs):
    return lambda kind, ns, name: objs.get((kind, ns, name))


class EnvTest(unittest.TestCase):
    def env(self, c, objs=None, ctx=CTX):
        return podspec.container_env(pod(), c, ctx, lookup_from(objs or {}))

    def test_field_refs(self):
        fr = [("N", "metadata.name"), ("NS", "metadata.namespace"), ("U", "metadata.uid"),
              ("L", "metadata.labels['app']"),
              ("IDX", "metadata.annotations['batch.kubernetes.io/job-completion-index']"),
              ("NODE", "spec.nodeName"), ("SA", "spec.serviceAccountName"),
              ("IP", "status.podIP"), ("HOST", "status.hostIP")]
        env = self.env({"name": "app", "env": [
            {"name": n, "valueFrom": {"fieldRef": {"fieldPath": f}}} for n, f in fr]})
        self.assertEqual([env[n] for n, _ in fr],
                         ["web-0", "apps", "1234abcd-0000-4000-8000-0", "web", "3",
                          "kc-node-1", "runner", "10.210.1.7", "10.210.255.1"])

    def test_service_variables_and_expansion(self):
        env = self.env({"name": "app", "env": [
            {"name": "A", "value": "x"}, {"name": "B", "value": "$(A)-$(NOPE)-$$(A)"}]})
        self.assertEqual(env["KUBERNETES_SERVICE_HOST"], "10.210.255.1")
        self.assertEqual(env["KUBERNETES_SERVICE_PORT"], "6443")
        self.assertEqual(env["B"], "x-$(NOPE)-$(A)")

    def test_resource_field_refs(self):
        c = {"name": "app", "resources": {"limits": {"cpu": "1500m", "memory": "256Mi"},
                                          "requests": {"cpu": "250m"}},
             "env": [{"name": "LC", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                     {"name": "LM", "valueFrom": {"resourceFieldRef": {
                         "resource": "limits.memory", "divisor": "1Mi"}}},
                     {"name": "RC", "valueFrom": {"resourceFieldRef": {
                         "resource": "requests.cpu", "divisor": "1m"}}},
                     {"name": "RM", "valueFrom": {"resourceFieldRef": {
                         "resource": "requests.memory"}}}]}
        env = self.env(c)
        self.assertEqual((env["LC"], env["LM"], env["RC"], env["RM"]),
                         ("2", "256", "250", str(256 << 20)))
        # Without a limit, the node's allocatable stands in.
        env = self.env({"name": "app", "env": [{"name": "LC", "valueFrom": {
            "resourceFieldRef": {"resource": "limits.cpu"}}}]})
        self.assertEqual(env["LC"], "4")

    def test_config_maps_and_secrets(self):
        objs = {("configmap", "apps", "cfg"): {"data": {"MODE": "fast", "K": "v"}},
                ("secret", "apps", "sec"): {"data": {"PW": base64.b64encode(b"hunter2")
                                                     .decode()}}}
        c = {"name": "app", "envFrom": [{"configMapRef": {"name": "cfg"}, "prefix": "C_"},
                                        {"secretRef": {"name": "sec"}}],
             "env": [{"name": "M", "valueFrom": {"configMapKeyRef": {"name": "cfg",
                                                                     "key": "MODE"}}},
                     {"name": "P", "valueFrom": {"secretKeyRef": {"name": "sec",
                                                                  "key": "PW"}}},
                     {"name": "O", "valueFrom": {"configMapKeyRef": {
                         "name": "gone", "key": "x", "optional": True}}}]}
        env = self.env(c, objs)
        self.assertEqual((env["C_MODE"], env["C_K"], env["PW"], env["M"], env["P"]),
                         ("fast", "v", "hunter2", "fast", "hunter2"))
        self.assertNotIn("O", env)

    def test_missing_reference_is_a_config_error(self):
        for vf in ({"configMapKeyRef": {"name": "gone", "key": "x"}},
                   {"secretKeyRef": {"name": "gone", "key": "x"}},
                   {"fieldRef": {"fieldPath": "spec.nope"}}):
            with self.assertRaises(podspec.ConfigError):
                self.env({"name": "app", "env": [{"name": "X", "valueFrom": vf}]})
        objs = {("configmap", "apps", "cfg"): {"data": {"A": "1"}}}
        with self.assertRaises(podspec.ConfigError):
            self.env({"name": "app", "env": [{"name": "X", "valueFrom": {
                "configMapKeyRef": {"name": "cfg", "key": "B"}}}]}, objs)

    def test_app_defaults_lose_to_the_container(self):
        c = {"name": "app", "ports": [{"containerPort": 9000}],
             "env": [{"name": "POD_NAME", "value": "mine"}]}
        ctx = dict(CTX, defaults=podspec.app_defaults(pod(), c, "10.210.1.7"))
        env = self.env(c, ctx=ctx)
        self.assertEqual((env["POD_NAME"], env["POD_IP"], env["PORT"]),
                         ("mine", "10.210.1.7", "9000"))


class CommandTest(unittest.TestCase):
    IMAGES = {"example/web:*": {"command": ["python3", "${APPS}/web.py"], "env": {"X": "1"}},
              "ep/*": {"entrypoint": ["/bin/ep"], "cmd": ["--default"]}}

    def test_command_entry_and_env(self):
        images = podspec.expand_images(self.IMAGES, {"APPS": "/srv/apps"})
        argv, env = podspec.command_line(images, {"image": "example/web:1",
                                                  "args": ["ignored"]}, {"X": "mine"})
        self.assertEqual(argv, ["python3", "/srv/apps/web.py"])
        self.assertEqual(env["X"], "mine")
        _, env = podspec.command_line(images, {"image": "example/web:1"}, {})
        self.assertEqual(env["X"], "1")

    def test_entrypoint_cmd_replaced_by_command_args(self):
        images = self.IMAGES
        run = lambda c, e=None: podspec.command_line(images, c, e or {})[0]  # noqa: E731
        self.assertEqual(run({"image": "ep/a"}), ["/bin/ep", "--default"])
        self.assertEqual(run({"image": "ep/a", "args": ["-v", "$(N)"]}, {"N": "3"}),
                         ["/bin/ep", "-v", "3"])
        self.assertEqual(run({"image": "ep/a", "command": ["/bin/other"]}), ["/bin/other"])

    def test_unknown_image(self):
        self.assertIsNone(podspec.command_line(self.IMAGES, {"image": "nginx"}, {}))


class MetricsTest(unittest.TestCase):
    def test_text_format(self):
        txt = resmetrics.render({"cpu": 12.5, "memory": 1000}, [
            {"namespace": "a", "pod": "p", "container": "c1", "cpu": 1.25, "memory": 300,
             "start": 1700000000.5},
            {"namespace": "a", "pod": "p", "container": "c2", "cpu": 0.75, "memory": 200,
             "start": 1700000001},
            {"namespace": "a", "pod": 'q"x', "container": "c", "cpu": None, "memory": None,
             "start": 1700000002}], 1700000005123)
        lines = txt.splitlines()
        self.assertIn('container_cpu_usage_seconds_total{container="c1",namespace="a",pod="p"}'
                      ' 1.25 1700000005123', lines)
        self.assertIn('pod_cpu_usage_seconds_total{namespace="a",pod="p"} 2.0 1700000005123',
                      lines)
        self.assertIn('pod_memory_working_set_bytes{namespace="a",pod="p"} 500 1700000005123',
                      lines)
        self.assertIn("node_cpu_usage_seconds_total 12.5 1700000005123", lines)
        self.assertIn("node_memory_working_set_bytes 1000 1700000005123", lines)
        # A container with no figure yet is left out, not reported as 0 (metrics-server would
        # drop its whole pod); its label value is escaped.
        self.assertFalse([x for x in lines if x.startswith("container_cpu") and 'q\\"x' in x])
        self.assertIn('container_start_time_seconds{container="c",namespace="a",pod="q\\"x"} '
                      '1700000002.0 1700000005123', lines)
        # Every sample line is NAME{labels} VALUE TIMESTAMP, with HELP and TYPE before.
        for x in lines:
            if not x.startswith("#") and not x.startswith("resource_scrape_error"):
                self.assertRegex(x, r'^[a-z_]+(\{[^}]*\})? [0-9.e+]+ [0-9]{13}$')
        self.assertEqual(txt.count("# TYPE "), len(resmetrics.SERIES))


def snap(**kw):
    c = {"name": "app", "image": "example/web:1", "image_id": "skc://example/web:1",
         "container_id": "skc://x", "ready": True, "started": True, "restart_count": 0,
         "state": {"running": {"startedAt": "2025-01-01T00:00:01Z"}}, "last_state": {},
         "done": False, "exit_code": None, "resources": {"limits": {"cpu": "1"}},
         "allocated": {"cpu": "1"}}
    s = {"ip": "10.210.1.7", "host_ip": "10.210.255.1", "start_time": "2025-01-01T00:00:00Z",
         "sandbox": True, "deleting": False, "resize_pending": None,
         "resize_in_progress": None, "containers": [c]}
    s.update(kw)
    return s


class StatusTest(unittest.TestCase):
    NOW = "2025-01-01T00:01:00Z"

    def conds(self, st):
        return {c["type"]: c for c in st["conditions"]}

    def test_running_ready(self):
        old = pod(status={"qosClass": "Burstable", "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "T0"},
            {"type": "Ready", "status": "True", "lastTransitionTime": "T1"},
            {"type": "DisruptionTarget", "status": "True", "lastTransitionTime": "T2"}]})
        st = podstatus.compose(old, snap(), self.NOW)
        c = self.conds(st)
        self.assertEqual(st["phase"], "Running")
        self.assertEqual((st["podIP"], st["podIPs"], st["hostIPs"]),
                         ("10.210.1.7", [{"ip": "10.210.1.7"}], [{"ip": "10.210.255.1"}]))
        self.assertEqual([c[t]["status"] for t in ("PodReadyToStartContainers", "Initialized",
                                                   "Ready", "ContainersReady")],
                         ["True"] * 4)
        self.assertEqual(c["Ready"]["lastTransitionTime"], "T1")  # unchanged status keeps it
        self.assertEqual(c["ContainersReady"]["lastTransitionTime"], self.NOW)
        self.assertEqual(c["PodScheduled"]["lastTransitionTime"], "T0")
        self.assertIn("DisruptionTarget", c)
        self.assertEqual(st["observedGeneration"], 2)
        self.assertEqual(c["Ready"]["observedGeneration"], 2)
        cs = st["containerStatuses"][0]
        self.assertEqual((cs["allocatedResources"], cs["resources"], cs["restartCount"]),
                         ({"cpu": "1"}, {"limits": {"cpu": "1"}}, 0))
        patch = podstatus.status_patch(old, st)
        self.assertEqual(patch["metadata"], {"uid": old["metadata"]["uid"]})
        self.assertNotIn("qosClass", patch["status"])  # the server's field is left alone

    def test_crash_loop_is_running_not_ready(self):
        s = snap()
        s["containers"][0].update(ready=False, restart_count=2, state={"waiting": {
            "reason": "CrashLoopBackOff"}}, last_state={"terminated": {"exitCode": 3}})
        st = podstatus.compose(pod(), s, self.NOW)
        c = self.conds(st)
        self.assertEqual(st["phase"], "Running")
        self.assertEqual((c["Ready"]["status"], c["Ready"]["reason"]),
                         ("False", "ContainersNotReady"))
        self.assertEqual(c["Ready"]["message"], "containers with unready status: [app]")

    def test_terminal_phases(self):
        for codes, want in (([0, 0], "Succeeded"), ([0, 1], "Failed")):
            cs = []
            for i, code in enumerate(codes):
                cs.append(dict(snap()["containers"][0], name="c%d" % i, ready=False,
                               done=True, exit_code=code,
                               state={"terminated": {"exitCode": code}}))
            st = podstatus.compose(pod(), snap(containers=cs), self.NOW)
            self.assertEqual(st["phase"], want)
            self.assertEqual(self.conds(st)["Ready"]["reason"], "PodCompleted")
        pending = dict(snap()["containers"][0], ready=False, started=False,
                       state={"waiting": {"reason": "ContainerCreating"}})
        self.assertEqual(podstatus.compose(pod(), snap(containers=[pending], sandbox=False),
                                           self.NOW)["phase"], "Pending")

    def test_deleted_pod_is_terminal(self):
        c = dict(snap()["containers"][0], ready=False, exit_code=0,
                 state={"terminated": {"exitCode": 0}})
        st = podstatus.compose(pod(), snap(containers=[c], deleting=True), self.NOW)
        self.assertEqual(st["phase"], "Failed")  # restartPolicy Always: stopped is a failure
        p = pod()
        p["spec"]["restartPolicy"] = "Never"
        self.assertEqual(podstatus.compose(p, snap(containers=[c], deleting=True),
                                           self.NOW)["phase"], "Succeeded")

    def test_resize_conditions(self):
        st = podstatus.compose(pod(), snap(resize_pending=("Deferred", "no room"),
                                           resize_in_progress=""), self.NOW)
        c = self.conds(st)
        self.assertEqual((c["PodResizePending"]["reason"], c["PodResizePending"]["message"]),
                         ("Deferred", "no room"))
        self.assertNotIn("reason", c["PodResizeInProgress"])
        st = podstatus.compose(pod(), snap(resize_in_progress="below usage"), self.NOW)
        self.assertEqual(self.conds(st)["PodResizeInProgress"]["reason"], "Error")
        st = podstatus.compose(pod(), snap(), self.NOW)
        self.assertFalse({"PodResizePending", "PodResizeInProgress"} & set(self.conds(st)))


class ResizeTest(unittest.TestCase):
    ALLOC = {"cpu": 4000, "memory": 8 << 30}

    def test_fits(self):
        self.assertIsNone(podresize.decide({"a": {"requests": {"cpu": "2"}}}, self.ALLOC,
                                           {"cpu": 1000, "memory": 0}))

    def test_infeasible_whatever_else_runs(self):
        r = podresize.decide({"a": {"requests": {"cpu": "3"}}, "b": {"limits": {"cpu": "2"}}},
                             self.ALLOC, {"cpu": 0, "memory": 0})
        self.assertEqual(r[0], "Infeasible")
        self.assertIn("cpu, requested: 5000, capacity: 4000", r[1])

    def test_deferred_beside_others(self):
        r = podresize.decide({"a": {"requests": {"memory": "6Gi"}}}, self.ALLOC,
                             {"cpu": 0, "memory": 3 << 30})
        self.assertEqual(r[0], "Deferred")
        self.assertIn("used: %d" % (3 << 30), r[1])

    def test_restart_policy(self):
        c = {"resizePolicy": [{"resourceName": "memory", "restartPolicy": "RestartContainer"}]}
        old = {"limits": {"cpu": "1", "memory": "128Mi"}}
        self.assertFalse(podresize.needs_restart(c, old, {"limits": {"cpu": "2",
                                                                     "memory": "128Mi"}}))
        self.assertTrue(podresize.needs_restart(c, old, {"limits": {"cpu": "1",
                                                                    "memory": "256Mi"}}))
        self.assertFalse(podresize.needs_restart({}, old, {"limits": {"memory": "256Mi"}}))

    def test_quantities(self):
        self.assertEqual(podresize.limits({"limits": {"cpu": "500m", "memory": "1Gi"}}),
                         (500, 1 << 30))
        self.assertEqual(podresize.requests({"limits": {"cpu": "0.25"}}),
                         {"cpu": 250, "memory": 0})
        with self.assertRaises(ValueError):
            podresize.norm({"limits": {"cpu": "lots"}})


class AddressTest(unittest.TestCase):
    def test_allocation_persists(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "addresses.json")
            pool = netns.AddressPool(path, "10.210.3.0/24")
            self.assertEqual(pool.gateway, "10.210.3.1")
            a = pool.allocate("uid-a")
            b = pool.allocate("uid-b")
            self.assertEqual((a, b), ("10.210.3.2", "10.210.3.3"))
            self.assertEqual(pool.allocate("uid-a"), a)
            # A restarted kubelet keeps both and hands out neither.
            again = netns.AddressPool(path, "10.210.3.0/24")
            self.assertEqual(again.allocate("uid-a"), a)
            self.assertEqual(again.allocate("uid-c"), "10.210.3.4")
            again.release("uid-a")
            self.assertEqual(netns.AddressPool(path, "10.210.3.0/24").allocate("uid-d"), a)

    def test_full_and_bad(self):
        with tempfile.TemporaryDirectory() as d:
            pool = netns.AddressPool(os.path.join(d, "a.json"), "10.210.4.0/24")
            got = {pool.allocate("u%d" % i) for i in range(253)}
            self.assertEqual(len(got), 253)
            self.assertIsNone(pool.allocate("one-more"))
            with open(os.path.join(d, "bad.json"), "w") as f:
                f.write("{not json")
            self.assertEqual(netns.AddressPool(os.path.join(d, "bad.json"),
                                               "10.210.4.0/24").uids(), [])
            with self.assertRaises(ValueError):
                netns.AddressPool(os.path.join(d, "x.json"), "10.210.0.0/16")

    def test_names_fit_linux_limits(self):
        ns, veth = netns.names("0123abcd-ef00-4000-8000-000000000000")
        self.assertEqual((ns, veth), ("skc-p-0123abcd", "skv0123abcd"))
        self.assertLessEqual(len(veth), 15)


class ResumeTest(unittest.TestCase):
    def test_kubelet_restart_counts_a_restart(self):
        import pods

        class Kl:
            state = "/nonexistent"
        p = pod(status={"startTime": "2025-01-01T00:00:00Z", "containerStatuses": [
            {"name": "app", "restartCount": 2, "containerID": "skc://a",
             "state": {"running": {"startedAt": "2025-01-01T00:00:05Z"}},
             "resources": {"limits": {"cpu": "1"}}, "allocatedResources": {"cpu": "1"}}]})
        w = pods.PodWorker(Kl(), p)
        c = w.containers[0]
        self.assertEqual((w.start_time, c.restarts), ("2025-01-01T00:00:00Z", 3))
        self.assertEqual(c.last_term["reason"], "ContainerStatusUnknown")
        self.assertEqual(c.last_term["startedAt"], "2025-01-01T00:00:05Z")
        self.assertEqual(c.actual, {"limits": {"cpu": "1"}})
        # A container in back-off keeps its count and last state.
        p["status"]["containerStatuses"][0].update(
            state={"waiting": {"reason": "CrashLoopBackOff"}},
            lastState={"terminated": {"exitCode": 3}})
        c = pods.PodWorker(Kl(), p).containers[0]
        self.assertEqual((c.restarts, c.last_term), (2, {"exitCode": 3}))


class KubeconfigTest(unittest.TestCase):
    def test_yaml_as_kcluster_writes_it(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "node.kubeconfig")
            with open(p, "w") as f:
                f.write("apiVersion: v1\nclusters:\n- name: k\n  cluster:\n"
                        "    server: https://10.210.255.1:6443\n"
                        "    certificate-authority: pki/ca.crt\nusers:\n- name: n\n  user:\n"
                        "    client-certificate: /abs/n.crt\n    client-key: /abs/n.key\n")
            cfg = kapi.load_kubeconfig(p)
            self.assertEqual(cfg, {"server": "https://10.210.255.1:6443",
                                   "ca": os.path.join(d, "pki/ca.crt"),
                                   "cert": "/abs/n.crt", "key": "/abs/n.key"})
            with open(p, "w") as f:
                json.dump({"clusters": [{"cluster": {"server": "https://h"}}],
                           "users": [{"user": {"token": "t"}}]}, f)
            with self.assertRaisesRegex(ValueError, "file-based"):
                kapi.load_kubeconfig(p)


if __name__ == "__main__":
    unittest.main()
