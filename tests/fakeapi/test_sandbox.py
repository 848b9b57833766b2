#!/usr/bin/env python3
"""What the fake's kubelet gives a pod's process, as a kubelet and a container runtime would:
the image's entrypoint and cmd with the container's command and args, the ServiceAccount volume
in the pod's own mount namespace (and its token, valid while the pod exists), the
KUBERNETES_SERVICE_* variables, and a wildcard bind confined to the pod's address. Run by
tests/integration/fakeapi_sandbox.sh (as root: mount namespaces)."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from client import Fake, PodChecks, deployment, http_get  # noqa: E402

NS = "/api/v1/namespaces/default"
APPS = "/apis/apps/v1/namespaces/default"
SA_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
# Prints its arguments, then serves like example/web (the readiness check needs a listener).
SHOW_ARGS = 'echo "argv: $*"; exec python3 "$FAKEAPI_APPS/web.py"'
IMAGES = {
    "example/web:*": {"command": ["python3", "${FAKEAPI_APPS}/web.py"]},
    "example/args:*": {"entrypoint": ["/bin/sh", "-c", SHOW_ARGS, "sh"], "cmd": ["default"]},
    "example/any4:*": {"command": ["python3", "-m", "http.server", "8080", "--bind", "0.0.0.0"]},
    "example/any6:*": {"command": ["python3", "-m", "http.server", "8080"]},
}


def read(path):
    with open(path) as f:
        return f.read()


class Sandbox(PodChecks, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.images = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump(IMAGES, cls.images)
        cls.images.close()
        cls.f = Fake("--images", cls.images.name, "--max-grace", "1")

    @classmethod
    def tearDownClass(cls):
        cls.f.stop()
        os.unlink(cls.images.name)

    def run_of(self, pod_name):
        _, _, d = self.f.control("GET", "/fake/pods")
        return next(p for p in d["pods"] if p["name"] == pod_name)

    def deploy(self, name, container=None, replicas=1, image="example/web:1", **pod_spec):
        d = deployment(name, replicas=replicas, image=image)
        d["spec"]["template"]["spec"].update(pod_spec)
        if container:
            d["spec"]["template"]["spec"]["containers"][0].update(container)
        code, _, body = self.req("POST", APPS + "/deployments", d)
        self.assertEqual(code, 201, body)

    def log_of(self, pod):
        return self.wait("argv in the log of " + pod, lambda: next(
            (ln for ln in str(self.req("GET", NS + "/pods/%s/log" % pod)[2]).splitlines()
             if ln.startswith("argv:")), None))

    def test_support_on_this_machine(self):
        # The test runs as root on a machine with util-linux and a C compiler: every pod part
        # must be there, or the fake says why.
        _, _, d = self.f.control("GET", "/fake/pods")
        self.assertEqual((d["serviceAccountVolume"], d["podNetwork"]),
                         ("mounted", "wildcard binds confined"))

    def test_command_and_args_as_in_a_pod_spec(self):
        cases = [("args-default", {}, "argv: default"),
                 ("args-own", {"args": ["a", "$(WORKERS)", "$$(WORKERS)", "$(NOPE)"],
                               "env": [{"name": "WORKERS", "value": "3"}]},
                  "argv: a 3 $(WORKERS) $(NOPE)"),
                 ("args-command", {"command": ["/bin/sh", "-c", SHOW_ARGS, "own"]}, "argv: "),
                 ("args-both", {"command": ["/bin/sh", "-c", SHOW_ARGS, "own"],
                                "args": ["x"]}, "argv: x")]
        for name, spec, _ in cases:
            self.deploy(name, dict(spec, image="example/args:1"))
        for name, _, want in cases:
            pod = self.ready_pods(name)[0]["metadata"]["name"]
            self.assertEqual(self.log_of(pod).rstrip(), want.rstrip(), name)

    def test_service_account_volume_and_token(self):
        self.req("POST", NS + "/serviceaccounts", {"metadata": {"name": "robot"}})
        self.deploy("sa", serviceAccountName="robot")
        pod = self.ready_pods("sa")[0]
        run = self.run_of(pod["metadata"]["name"])
        pid = run["containers"][0]["pid"]
        self.assertNotEqual(os.readlink("/proc/%d/ns/mnt" % pid), os.readlink("/proc/self/ns/mnt"))
        inside = "/proc/%d/root%s" % (pid, os.path.realpath(SA_PATH))
        files = {n: read(os.path.join(inside, n)) for n in ("token", "ca.crt", "namespace")}
        self.assertEqual(files["namespace"], "default")
        self.assertEqual(files["ca.crt"], read(os.path.join(self.f.dir, "ca.crt")))
        self.assertFalse(os.path.exists(os.path.join(SA_PATH, "token")) and read(
            os.path.join(SA_PATH, "token")) == files["token"], "visible on the host")
        with self.assertRaises(OSError):  # read-only, as a kubelet mounts it
            open(os.path.join(inside, "token"), "w").close()
        # The token is the pod's ServiceAccount's: no RBAC grants it anything.
        code, _, st = self.req("GET", NS + "/secrets", token=files["token"])
        self.assertEqual(code, 403)
        self.assertIn('User "system:serviceaccount:default:robot"', st["message"])
        _, env = http_get("http://%s:8080/env" % run["ip"])
        env = json.loads(env)
        self.assertEqual((env["KUBERNETES_SERVICE_HOST"], env["KUBERNETES_SERVICE_PORT"]),
                         ("127.0.0.1", str(self.f.port)))
        # A bound token dies with its pod; the per-pod directory goes too.
        self.req("PATCH", APPS + "/deployments/sa", {"spec": {"replicas": 0}},
                 ctype="application/merge-patch+json")
        self.wait("the token revoked", lambda: self.req(
            "GET", NS + "/secrets", token=files["token"])[0] == 401)
        self.wait("the volume removed", lambda: not os.path.exists(run["serviceAccountDir"]))

    def test_no_volume_when_automount_is_off(self):
        self.req("POST", NS + "/serviceaccounts", {"metadata": {"name": "quiet"},
                                                   "automountServiceAccountToken": False})
        self.deploy("noauto-pod", automountServiceAccountToken=False)
        self.deploy("noauto-sa", serviceAccountName="quiet")
        for app in ("noauto-pod", "noauto-sa"):
            run = self.run_of(self.ready_pods(app)[0]["metadata"]["name"])
            self.assertIsNone(run["serviceAccountDir"], app)
            pid = run["containers"][0]["pid"]
            self.assertFalse(os.path.exists("/proc/%d/root%s/token"
                                            % (pid, os.path.realpath(SA_PATH))), app)

    def test_wildcard_bind_stays_on_the_pod_address(self):
        # Two pods listening on every address, same port: each gets its own pod address, as in
        # its own network namespace (IPv4 0.0.0.0 and dual-stack [::]).
        for app in ("any4", "any6"):
            self.deploy(app, replicas=2, image="example/%s:1" % app)
        for app in ("any4", "any6"):
            pods = self.ready_pods(app, 2)
            ips = {p["status"]["podIP"] for p in pods}
            self.assertEqual(len(ips), 2, app)
            for ip in ips:
                self.assertEqual(http_get("http://%s:8080/" % ip)[0], 200)


if __name__ == "__main__":
    unittest.main(verbosity=2)
