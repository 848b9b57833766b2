#!/usr/bin/env python3
"""RBAC enforcement of the fake API server: a service account gets exactly what its Roles and
ClusterRoles grant through RoleBindings and ClusterRoleBindings, and a denied request gets a
403 Status as a real API server words it. Run by tests/integration/fakeapi_rbac.sh."""

import json
import os
import shutil
import subprocess
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


def sa_cluster_binding(role, sa, ns):
    """A ClusterRoleBinding named as its ClusterRole, to one ServiceAccount."""
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]}


# What an operator's manifests might grant, loaded at start with --preload.
PRELOAD = {"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": {"name": "op-read"},
     "rules": [{"apiGroups": ["apps"], "resources": ["deployments"],
                "verbs": ["get", "list", "watch"]},
               {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                "verbs": ["*"]}]},
    sa_cluster_binding("op-read", "op", "default"),
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


class PreloadedFake(unittest.TestCase):
    """One fake without a kubelet for the whole class, started with the class's PRELOAD."""
    PRELOAD = None

    @classmethod
    def setUpClass(cls):
        fd, cls.preload = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(cls.PRELOAD, f)
        cls.f = Fake("--no-kubelet", "--preload", cls.preload)

    @classmethod
    def tearDownClass(cls):
        cls.f.stop()
        os.unlink(cls.preload)


class Rbac(PreloadedFake):
    PRELOAD = PRELOAD

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        _, _, t = cls.f.control("POST", "/fake/tokens", {"user": USER})
        cls.tok = t["token"]

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


AUTHN = "/apis/authentication.k8s.io/v1/tokenreviews"
AUTHZ = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
REVIEWER = "system:serviceaccount:sizeup:sizeup"
READER = "system:serviceaccount:team:reader"

# A reviewer with the chart's progress-auth rule, and a reader a ClusterRole lets `get` the
# non-resource URL /progress.
REVIEW_PRELOAD = {"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": {"name": "reviewer"},
     "rules": [{"apiGroups": ["authentication.k8s.io", "authorization.k8s.io"],
                "resources": ["tokenreviews", "subjectaccessreviews"], "verbs": ["create"]}]},
    sa_cluster_binding("reviewer", "sizeup", "sizeup"),
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": {"name": "progress-reader"},
     "rules": [{"nonResourceURLs": ["/progress"], "verbs": ["get"]},
               {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["list"]}]},
    sa_cluster_binding("progress-reader", "reader", "team"),
]}


def token_review(tok):
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": tok}}


def access_review(user, groups=None, **attrs):
    spec = {"user": user}
    if groups is not None:
        spec["groups"] = groups
    spec.update(attrs)
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": spec}


def progress_get(path="/progress", verb="get"):
    return {"nonResourceAttributes": {"path": path, "verb": verb}}


class Reviews(PreloadedFake):
    """TokenReview and SubjectAccessReview, as kube-rbac-proxy (and the operator's
    --progress-public) ask them."""
    PRELOAD = REVIEW_PRELOAD

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.rev = cls.f.control("POST", "/fake/tokens", {"user": REVIEWER})[2]["token"]
        cls.reader = cls.f.control("POST", "/fake/tokens", {"user": READER})[2]["token"]
        cls.other = cls.f.control("POST", "/fake/tokens",
                                  {"user": "jane", "groups": ["devs"]})[2]["token"]

    def as_reviewer(self, path, body):
        return self.f.request("POST", path, body, token=self.rev)

    def test_token_review_names_the_user_and_groups(self):
        code, _, out = self.as_reviewer(AUTHN, token_review(self.reader))
        self.assertEqual(code, 201, out)
        self.assertEqual((out["kind"], out["apiVersion"]),
                         ("TokenReview", "authentication.k8s.io/v1"))
        st = out["status"]
        self.assertIs(st["authenticated"], True)
        self.assertEqual(st["user"]["username"], READER)
        self.assertEqual(sorted(st["user"]["groups"]),
                         ["system:authenticated", "system:serviceaccounts",
                          "system:serviceaccounts:team"])
        st = self.as_reviewer(AUTHN, token_review(self.other))[2]["status"]
        self.assertEqual((st["user"]["username"], st["user"]["groups"]),
                         ("jane", ["devs", "system:authenticated"]))

    def test_unknown_or_revoked_token_is_not_authenticated(self):
        code, _, out = self.as_reviewer(AUTHN, token_review("not-a-token-the-fake-issued"))
        self.assertEqual(code, 201)
        self.assertIs(out["status"]["authenticated"], False)
        self.assertEqual(out["status"]["user"], {})
        tok = self.f.control("POST", "/fake/tokens", {"user": "gone"})[2]["token"]
        self.assertIs(self.as_reviewer(AUTHN, token_review(tok))[2]["status"]["authenticated"],
                      True)
        self.f.control("DELETE", "/fake/tokens", {"token": tok})
        self.assertIs(self.as_reviewer(AUTHN, token_review(tok))[2]["status"]["authenticated"],
                      False)
        # The control token is not a bearer token of the API.
        st = self.as_reviewer(AUTHN, token_review(self.f.control_token))[2]["status"]
        self.assertIs(st["authenticated"], False)

    def test_token_review_needs_a_token(self):
        code, _, st = self.as_reviewer(AUTHN, {"kind": "TokenReview", "spec": {}})
        self.assertEqual((code, st["reason"]), (400, "BadRequest"))

    def test_access_review_judges_non_resource_urls(self):
        groups = ["system:serviceaccounts", "system:authenticated"]
        code, _, out = self.as_reviewer(AUTHZ, access_review(READER, groups, **progress_get()))
        self.assertEqual(code, 201, out)
        self.assertEqual(out["kind"], "SubjectAccessReview")
        self.assertIs(out["status"]["allowed"], True)
        for spec in (access_review(READER, groups, **progress_get(verb="post")),
                     access_review(READER, groups, **progress_get("/progress/x")),
                     access_review("jane", ["devs"], **progress_get())):
            st = self.as_reviewer(AUTHZ, spec)[2]["status"]
            self.assertIs(st["allowed"], False, spec)
        # A group binding works without a user name.
        st = self.as_reviewer(AUTHZ, {"spec": dict(groups=["system:masters"],
                                                   **progress_get())})[2]["status"]
        self.assertIs(st["allowed"], True)

    def test_access_review_judges_resources(self):
        ra = {"verb": "list", "group": "apps", "resource": "deployments", "namespace": "x"}
        st = self.as_reviewer(AUTHZ, access_review(READER, resourceAttributes=ra))[2]["status"]
        self.assertIs(st["allowed"], True)
        ra["verb"] = "delete"
        st = self.as_reviewer(AUTHZ, access_review(READER, resourceAttributes=ra))[2]["status"]
        self.assertIs(st["allowed"], False)

    def test_access_review_validation(self):
        code, _, st = self.as_reviewer(AUTHZ, {"spec": progress_get()})
        self.assertEqual((code, st["reason"]), (422, "Invalid"))
        self.assertIn("at least one of user or group", st["message"])
        code, _, st = self.as_reviewer(AUTHZ, access_review(READER))
        self.assertEqual(code, 422)
        self.assertIn("exactly one of", st["message"])
        both = access_review(READER, resourceAttributes={"verb": "get"}, **progress_get())
        self.assertEqual(self.as_reviewer(AUTHZ, both)[0], 422)

    def test_reviews_need_create_on_them(self):
        for path, body, res, group in (
                (AUTHN, token_review(self.reader), "tokenreviews", "authentication.k8s.io"),
                (AUTHZ, access_review(READER, **progress_get()), "subjectaccessreviews",
                 "authorization.k8s.io")):
            code, _, st = self.f.request("POST", path, body, token=self.reader)
            self.assertEqual(code, 403, path)
            self.assertEqual(st["message"], '%s.%s is forbidden: User "%s" cannot create '
                             'resource "%s" in API group "%s" at the cluster scope'
                             % (res, group, READER, res, group))
            self.assertEqual(self.f.request("GET", path, token=self.rev)[0], 403, path)
            # The admin (system:masters) may; a GET is no create.
            self.assertEqual(self.f.request("POST", path, body)[0], 201, path)
            self.assertEqual(self.f.request("GET", path)[0], 405, path)

    def test_discovery_lists_both_groups(self):
        _, _, apis = self.f.request("GET", "/apis", token=self.reader)
        names = [g["name"] for g in apis["groups"]]
        self.assertIn("authentication.k8s.io", names)
        self.assertIn("authorization.k8s.io", names)
        _, _, rl = self.f.request("GET", "/apis/authentication.k8s.io/v1")
        self.assertEqual([(r["name"], r["kind"], r["verbs"]) for r in rl["resources"]],
                         [("tokenreviews", "TokenReview", ["create"])])
        _, _, rl = self.f.request("GET", "/apis/authorization.k8s.io/v1")
        self.assertIn(("subjectaccessreviews", "SubjectAccessReview", ["create"]),
                      [(r["name"], r["kind"], r["verbs"]) for r in rl["resources"]])

    def test_kubectl_create_token_review(self):
        """kubectl (the real client) finds TokenReview by discovery and prints the answer."""
        cache = tempfile.mkdtemp(prefix="kubectl-cache.")
        try:
            doc = json.dumps(token_review(self.reader))
            p = subprocess.run(["kubectl", "--kubeconfig", os.path.join(self.f.dir,
                                                                        "kubeconfig"),
                                "--cache-dir", cache, "create", "-f", "-", "-o", "json"],
                               input=doc, capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            st = json.loads(p.stdout)["status"]
            self.assertEqual((st["authenticated"], st["user"]["username"]), (True, READER))
            doc = json.dumps(access_review(READER, **progress_get()))
            p = subprocess.run(["kubectl", "--kubeconfig", os.path.join(self.f.dir,
                                                                        "kubeconfig"),
                                "--cache-dir", cache, "create", "-f", "-", "-o",
                                "jsonpath={.status.allowed}"],
                               input=doc, capture_output=True, text=True, timeout=60)
            self.assertEqual((p.returncode, p.stdout), (0, "true"), p.stderr)
        finally:
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
