#!/usr/bin/env python3
"""RBAC enforcement of the fake API server: a service account gets exactly what its Roles and
ClusterRoles grant through RoleBindings and ClusterRoleBindings, and a denied request gets a
403 Status as a real API server words it. Run by tests/integration/fakeapi_rbac.sh."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from client import Fake  # noqa: E402

NS = "/api/v1/namespaces/default"
APPS = "/apis/apps/v1/namespaces/default"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
MERGE = "application/merge-patch+json"
USER = "system:serviceaccount:default:op"

# What an operator's manifests might grant, loaded at start with --preload.
PRELOAD = {"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": {"name": "op-read"},
     "rules": [{"apiGroups": ["apps"], "resources": ["deployments"],
                "verbs": ["get", "list", "watch"]},
               {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                "verbs": ["*"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
     "metadata": {"name": "op-read"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                 "name": "op-read"},
     "subjects": [{"kind": "ServiceAccount", "name": "op", "namespace": "default"}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
     "metadata": {"name": "op-write", "namespace": "team"},
     "rules": [{"apiGroups": ["apps"], "resources": ["deployments", "deployments/scale"],
                "verbs": ["patch", "update"]},
               {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"],
                "resourceNames": ["allowed"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
     "metadata": {"name": "op-write", "namespace": "team"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "op-write"},
     "subjects": [{"kind": "ServiceAccount", "name": "op", "namespace": "default"}]},
]}


class Rbac(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        fd, cls.preload = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(PRELOAD, f)
        cls.f = Fake("--no-kubelet", "--preload", cls.preload)
        _, _, t = cls.f.control("POST", "/fake/tokens", {"user": USER})
        cls.tok = t["token"]

    @classmethod
    def tearDownClass(cls):
        cls.f.stop()
        os.unlink(cls.preload)

    def as_op(self, method, path, body=None, ctype="application/json"):
        return self.f.request(method, path, body, ctype=ctype, token=self.tok)

    def test_cluster_role_binding_grants_everywhere(self):
        self.assertEqual(self.as_op("GET", APPS + "/deployments")[0], 200)
        self.assertEqual(self.as_op("GET", "/apis/apps/v1/deployments")[0], 200)
        self.assertEqual(self.as_op("GET", "/apis/apps/v1/namespaces/team/deployments")[0], 200)
        self.assertEqual(self.as_op("POST", "/apis/coordination.k8s.io/v1/namespaces/default/"
                                    "leases", {"metadata": {"name": "l"}, "spec": {}})[0], 201)

    def test_denied_verb_gets_403_status(self):
        code, _, st = self.as_op("PATCH", APPS + "/deployments/web", {}, ctype=MERGE)
        self.assertEqual(code, 403)
        self.assertEqual((st["kind"], st["status"], st["reason"], st["code"]),
                         ("Status", "Failure", "Forbidden", 403))
        self.assertEqual(st["message"], 'deployments.apps "web" is forbidden: User "%s" cannot '
                         'patch resource "deployments" in API group "apps" in the namespace '
                         '"default"' % USER)
        self.assertEqual(st["details"], {"name": "web", "group": "apps", "kind": "deployments"})
        code, _, st = self.as_op("GET", NS + "/configmaps")
        self.assertEqual(code, 403)
        self.assertEqual(st["message"], 'configmaps is forbidden: User "%s" cannot list resource '
                         '"configmaps" in API group "" in the namespace "default"' % USER)
        code, _, st = self.as_op("GET", RBAC + "/clusterroles")
        self.assertEqual(code, 403)
        self.assertIn("at the cluster scope", st["message"])

    def test_role_binding_is_namespaced(self):
        # patch allowed in team (404: the object does not exist, but the verb passed RBAC)...
        self.assertEqual(self.as_op("PATCH", "/apis/apps/v1/namespaces/team/deployments/x", {},
                                    ctype=MERGE)[0], 404)
        # ... and not in default.
        self.assertEqual(self.as_op("PATCH", APPS + "/deployments/x", {}, ctype=MERGE)[0], 403)
        # Subresources need their own rule.
        self.assertEqual(self.as_op("PATCH", "/apis/apps/v1/namespaces/team/deployments/x/"
                                    "status", {}, ctype=MERGE)[0], 403)
        self.assertEqual(self.as_op("GET", "/apis/apps/v1/namespaces/team/deployments/x/"
                                    "scale")[0], 403)

    def test_resource_names(self):
        self.assertEqual(self.as_op("GET", "/api/v1/namespaces/team/configmaps/allowed")[0],
                         404)
        self.assertEqual(self.as_op("GET", "/api/v1/namespaces/team/configmaps/other")[0], 403)
        self.assertEqual(self.as_op("GET", "/api/v1/namespaces/team/configmaps")[0], 403)

    def test_removing_a_rule_denies(self):
        self.assertEqual(self.as_op("GET", APPS + "/deployments")[0], 200)
        _, _, cr = self.f.request("GET", RBAC + "/clusterroles/op-read")
        saved = json.loads(json.dumps(cr))
        cr["rules"] = cr["rules"][1:]
        self.assertEqual(self.f.request("PUT", RBAC + "/clusterroles/op-read", cr)[0], 200)
        try:
            self.assertEqual(self.as_op("GET", APPS + "/deployments")[0], 403)
        finally:
            _, _, cur = self.f.request("GET", RBAC + "/clusterroles/op-read")
            saved["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
            self.f.request("PUT", RBAC + "/clusterroles/op-read", saved)
        self.assertEqual(self.as_op("GET", APPS + "/deployments")[0], 200)

    def test_discovery_open_to_authenticated_users(self):
        for p in ("/api", "/apis", "/api/v1", "/apis/apps/v1", "/version", "/openapi/v3"):
            self.assertEqual(self.as_op("GET", p)[0], 200, p)
        self.assertEqual(self.f.request("GET", "/apis", token="bogus")[0], 401)

    def test_admin_bypasses(self):
        self.assertEqual(self.f.request("GET", NS + "/configmaps")[0], 200)

    def test_log_records_denials(self):
        self.as_op("DELETE", APPS + "/deployments/logged")
        _, _, log = self.f.control("GET", "/fake/log")
        e = [x for x in log["entries"] if x.get("name") == "logged"][-1]
        self.assertEqual((e["code"], e["user"], e["verb"]), (403, USER, "delete"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
