#!/usr/bin/env python3
"""API semantics of the fake API server that sizeup depends on: conflicts, watch from a
resourceVersion, 410 Gone, bookmarks, garbage collection, generation, strategic merge, fault
injection, tokens, the request log. Run by tests/integration/fakeapi_semantics.sh."""

import http.client
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from client import Fake, WatchError, deployment  # noqa: E402

NS = "/api/v1/namespaces/default"
APPS = "/apis/apps/v1/namespaces/default"
SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
JSONP = "application/json-patch+json"


class Semantics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fake("--no-kubelet", "--history", "300", "--bookmark-interval", "0.3")

    @classmethod
    def tearDownClass(cls):
        cls.f.stop()

    def setUp(self):
        self.f.control("DELETE", "/fake/faults")

    def req(self, *a, **kw):
        return self.f.request(*a, **kw)

    def cm(self, name, data=None):
        code, _, obj = self.req("POST", NS + "/configmaps",
                                {"metadata": {"name": name}, "data": data or {"k": "v"}})
        self.assertEqual(code, 201, obj)
        return obj

    # --- CRUD and conflicts ------------------------------------------------------------------

    def test_create_conflict_and_stale_update(self):
        obj = self.cm("c1")
        code, _, st = self.req("POST", NS + "/configmaps", {"metadata": {"name": "c1"}})
        self.assertEqual((code, st["kind"], st["reason"]), (409, "Status", "AlreadyExists"))
        self.assertEqual(st["details"], {"name": "c1", "kind": "configmaps"})
        obj["data"]["k"] = "v2"
        code, _, new = self.req("PUT", NS + "/configmaps/c1", obj)
        self.assertEqual(code, 200)
        self.assertGreater(int(new["metadata"]["resourceVersion"]),
                           int(obj["metadata"]["resourceVersion"]))
        obj["data"]["k"] = "stale"
        code, _, st = self.req("PUT", NS + "/configmaps/c1", obj)
        self.assertEqual((code, st["reason"]), (409, "Conflict"))
        self.assertIn("the object has been modified", st["message"])
        code, _, st = self.req("GET", NS + "/configmaps/nope")
        self.assertEqual((code, st["reason"], st["message"]),
                         (404, "NotFound", 'configmaps "nope" not found'))
        code, _, st = self.req("POST", "/api/v1/namespaces/missing/configmaps",
                               {"metadata": {"name": "x"}})
        self.assertEqual(code, 404)

    def test_noop_update_keeps_resource_version(self):
        obj = self.cm("c-noop")
        code, _, same = self.req("PUT", NS + "/configmaps/c-noop", obj)
        self.assertEqual(same["metadata"]["resourceVersion"], obj["metadata"]["resourceVersion"])

    def test_list_selectors_and_pagination(self):
        for i in range(5):
            self.req("POST", NS + "/configmaps", {"metadata": {"name": "sel-%d" % i, "labels": {
                "grp": "sel", "parity": "even" if i % 2 == 0 else "odd"}}})
        code, _, lst = self.req("GET", NS + "/configmaps?labelSelector=grp%3Dsel,parity%3Deven")
        self.assertEqual([o["metadata"]["name"] for o in lst["items"]],
                         ["sel-0", "sel-2", "sel-4"])
        self.assertNotIn("kind", lst["items"][0])  # list items carry no kind, as for real
        self.assertEqual(lst["kind"], "ConfigMapList")
        code, _, lst = self.req("GET", NS + "/configmaps?fieldSelector=metadata.name%3Dsel-3")
        self.assertEqual([o["metadata"]["name"] for o in lst["items"]], ["sel-3"])
        names, cont = [], ""
        while True:
            code, _, lst = self.req("GET", NS + "/configmaps?labelSelector=grp%3Dsel&limit=2"
                                    + ("&continue=" + cont if cont else ""))
            names += [o["metadata"]["name"] for o in lst["items"]]
            cont = lst["metadata"].get("continue")
            if not cont:
                break
        self.assertEqual(names, ["sel-%d" % i for i in range(5)])

    # --- watch ---------------------------------------------------------------------------------

    def test_watch_from_resource_version(self):
        _, _, lst = self.req("GET", NS + "/configmaps")
        rv = lst["metadata"]["resourceVersion"]
        obj = self.cm("w1")
        obj["data"] = {"k": "changed"}
        self.req("PUT", NS + "/configmaps/w1", obj)
        self.req("DELETE", NS + "/configmaps/w1")
        evs = []
        for ev in self.f.watch(NS + "/configmaps?watch=1&resourceVersion=%s&timeoutSeconds=1"
                               % rv):
            evs.append((ev["type"], ev["object"]["metadata"]["name"]))
        self.assertEqual(evs, [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")])

    def test_watch_too_old_gets_410(self):
        for i in range(320):  # the server keeps 300 events
            self.req("PATCH", NS + "/configmaps/" + ("old-%d" % (i % 3)), {"data": {"i": str(i)}},
                     ctype=MERGE) if i >= 3 else self.cm("old-%d" % i)
        with self.assertRaises(WatchError) as cm:
            list(self.f.watch(NS + "/configmaps?watch=1&resourceVersion=2"))
        self.assertEqual(cm.exception.status, 410)
        self.assertEqual(cm.exception.body["reason"], "Expired")

    def test_bookmarks_and_timeout(self):
        _, _, lst = self.req("GET", NS + "/configmaps")
        t0 = time.time()
        evs = list(self.f.watch(NS + "/configmaps?watch=1&allowWatchBookmarks=true"
                                "&timeoutSeconds=1&resourceVersion="
                                + lst["metadata"]["resourceVersion"]))
        self.assertLess(time.time() - t0, 3.0)
        bms = [e for e in evs if e["type"] == "BOOKMARK"]
        self.assertTrue(bms, evs)
        self.assertEqual(bms[0]["object"]["kind"], "ConfigMap")
        self.assertGreaterEqual(int(bms[-1]["object"]["metadata"]["resourceVersion"]),
                                int(lst["metadata"]["resourceVersion"]))

    def test_watch_without_rv_sends_current_state(self):
        self.cm("initial-state")
        evs = list(self.f.watch(NS + "/configmaps?watch=1&timeoutSeconds=1"
                                "&fieldSelector=metadata.name%3Dinitial-state"))
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in evs],
                         [("ADDED", "initial-state")])

    # --- generation, status, patches -------------------------------------------------------------

    def test_generation_only_on_spec(self):
        code, _, d = self.req("POST", APPS + "/deployments", deployment("gen"))
        self.assertEqual((code, d["metadata"]["generation"]), (201, 1))
        code, _, d = self.req("PATCH", APPS + "/deployments/gen",
                              {"metadata": {"labels": {"x": "y"}}}, ctype=MERGE)
        self.assertEqual(d["metadata"]["generation"], 1)
        # A Deployment's annotations count as a change (the real API server's deployment
        # strategy; tests/kcluster/differential.py compares the two).
        code, _, d = self.req("PATCH", APPS + "/deployments/gen",
                              {"metadata": {"annotations": {"a": "b"}}}, ctype=MERGE)
        self.assertEqual(d["metadata"]["generation"], 2)
        code, _, d = self.req("PATCH", APPS + "/deployments/gen/status",
                              {"status": {"observedGeneration": 2, "replicas": 0}}, ctype=MERGE)
        self.assertEqual((code, d["metadata"]["generation"]), (200, 2))
        code, _, d = self.req("PATCH", APPS + "/deployments/gen", {"spec": {"replicas": 0,
                              "template": {"metadata": {"labels": {"app": "gen", "v": "2"}}}}},
                              ctype=SMP)
        self.assertEqual(d["metadata"]["generation"], 3)
        # A write to the main resource cannot change status.
        for _ in range(20):
            _, _, d = self.req("GET", APPS + "/deployments/gen")
            d["status"] = {"observedGeneration": 99}
            code, _, d2 = self.req("PUT", APPS + "/deployments/gen", d)
            if code != 409:  # the controller may write status in between
                break
        self.assertEqual(code, 200, d2)
        self.assertNotEqual(d2.get("status", {}).get("observedGeneration"), 99)
        # The controller observes the new generation.
        for _ in range(50):
            _, _, d = self.req("GET", APPS + "/deployments/gen")
            if d.get("status", {}).get("observedGeneration") == 3:
                break
            time.sleep(0.1)
        self.assertEqual(d["status"]["observedGeneration"], 3)

    def test_strategic_merge_env_by_name(self):
        env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
        self.req("POST", APPS + "/deployments", deployment("smp", env=env))
        patch = {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}],
             "resources": {"limits": {"cpu": "500m"}}}]}}}}
        code, _, d = self.req("PATCH", APPS + "/deployments/smp", patch, ctype=SMP)
        self.assertEqual(code, 200, d)
        c = d["spec"]["template"]["spec"]["containers"]
        self.assertEqual(len(c), 1)
        self.assertEqual(c[0]["image"], "example/web:1")
        self.assertEqual(c[0]["env"], [{"name": "A", "value": "1"}, {"name": "B", "value": "20"},
                                       {"name": "C", "value": "3"}])
        self.assertEqual(c[0]["resources"]["limits"], {"cpu": "500m"})
        # $patch: delete removes one element by its key.
        patch = {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "env": [{"name": "A", "$patch": "delete"}]}]}}}}
        _, _, d = self.req("PATCH", APPS + "/deployments/smp", patch, ctype=SMP)
        self.assertEqual([e["name"] for e in d["spec"]["template"]["spec"]["containers"][0]["env"]],
                         ["B", "C"])
        # $patch: replace on a map replaces it wholesale.
        patch = {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "resources": {"$patch": "replace", "limits": {"memory": "64Mi"}}}]}}}}
        _, _, d = self.req("PATCH", APPS + "/deployments/smp", patch, ctype=SMP)
        self.assertEqual(d["spec"]["template"]["spec"]["containers"][0]["resources"],
                         {"limits": {"memory": "64Mi"}})
        # A JSON merge patch replaces the whole container list (why sizeup uses strategic).
        patch = {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "example/web:2"}]}}}}
        _, _, d = self.req("PATCH", APPS + "/deployments/smp", patch, ctype=MERGE)
        self.assertNotIn("env", d["spec"]["template"]["spec"]["containers"][0])

    def test_restored_template_brings_back_its_replicaset(self):
        """In-place mode restores the original pod template: the result must equal it exactly
        and the controller must treat it as the old revision, as a real one does."""
        _, _, d = self.req("POST", APPS + "/deployments", deployment("restore", env=[
            {"name": "WORKERS", "value": "2"}]))
        original = json.dumps(d["spec"]["template"], sort_keys=True)

        def rs_names():
            _, _, lst = self.req("GET", APPS + "/replicasets?labelSelector=app%3Drestore")
            return {r["metadata"]["name"]: r["metadata"]["annotations"][
                "deployment.kubernetes.io/revision"] for r in lst["items"]}
        for _ in range(50):
            if rs_names():
                break
            time.sleep(0.1)
        first = list(rs_names())
        self.assertEqual(len(first), 1)
        patch = {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "env": [{"name": "WORKERS", "value": "8"}]}]}}}}
        self.req("PATCH", APPS + "/deployments/restore", patch, ctype=SMP)
        for _ in range(50):
            if len(rs_names()) == 2:
                break
            time.sleep(0.1)
        # Restore with the template as saved (null creationTimestamp as kubectl sends it).
        _, _, d = self.req("GET", APPS + "/deployments/restore")
        saved = json.loads(original)
        saved["metadata"]["creationTimestamp"] = None
        d["spec"]["template"] = saved
        code, _, d = self.req("PUT", APPS + "/deployments/restore", d)
        self.assertEqual(code, 200, d)
        self.assertEqual(json.dumps(d["spec"]["template"], sort_keys=True), original)
        for _ in range(50):
            names = rs_names()
            if names.get(first[0]) == "3":
                break
            time.sleep(0.1)
        self.assertEqual(rs_names()[first[0]], "3")
        self.assertEqual(len(rs_names()), 2)

    def test_json_patch(self):
        self.cm("jp", {"a": "1"})
        code, _, o = self.req("PATCH", NS + "/configmaps/jp", [
            {"op": "add", "path": "/data/b", "value": "2"},
            {"op": "replace", "path": "/data/a", "value": "10"},
            {"op": "test", "path": "/data/b", "value": "2"}], ctype=JSONP)
        self.assertEqual((code, o["data"]), (200, {"a": "10", "b": "2"}))
        code, _, st = self.req("PATCH", NS + "/configmaps/jp", [
            {"op": "test", "path": "/data/a", "value": "nope"}], ctype=JSONP)
        self.assertEqual(code, 422)
        code, _, o = self.req("PATCH", NS + "/configmaps/jp", {"data": {"a": None}}, ctype=MERGE)
        self.assertEqual(o["data"], {"b": "2"})

    # --- garbage collection --------------------------------------------------------------------

    def _gone(self, path, timeout=5.0):
        end = time.time() + timeout
        while time.time() < end:
            if self.req("GET", path)[0] == 404:
                return True
            time.sleep(0.05)
        return False

    def test_owner_reference_gc(self):
        _, _, owner = self.req("POST", APPS + "/deployments", deployment("owner"))
        ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "owner",
               "uid": owner["metadata"]["uid"], "controller": False}
        clone = deployment("owner-sizeup")
        clone["metadata"]["ownerReferences"] = [ref]
        self.assertEqual(self.req("POST", APPS + "/deployments", clone)[0], 201)
        cm = {"metadata": {"name": "owned-cm", "ownerReferences": [ref]}}
        self.assertEqual(self.req("POST", NS + "/configmaps", cm)[0], 201)
        code, _, _ = self.req("DELETE", APPS + "/deployments/owner",
                              {"propagationPolicy": "Background"})
        self.assertEqual(code, 200)
        self.assertTrue(self._gone(APPS + "/deployments/owner-sizeup"))
        self.assertTrue(self._gone(NS + "/configmaps/owned-cm"))

    def test_orphan_and_foreground(self):
        _, _, owner = self.req("POST", APPS + "/deployments", deployment("own2"))
        ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "own2",
               "uid": owner["metadata"]["uid"]}
        self.req("POST", NS + "/configmaps", {"metadata": {"name": "orph", "ownerReferences":
                                                           [ref]}})
        self.req("DELETE", APPS + "/deployments/own2", {"propagationPolicy": "Orphan"})
        self.assertTrue(self._gone(APPS + "/deployments/own2"))
        _, _, o = self.req("GET", NS + "/configmaps/orph")
        self.assertNotIn("ownerReferences", o["metadata"])
        _, _, owner = self.req("POST", APPS + "/deployments", deployment("own3"))
        ref["uid"], ref["name"] = owner["metadata"]["uid"], "own3"
        self.req("POST", NS + "/configmaps", {"metadata": {"name": "fg", "ownerReferences":
                                                           [ref]}})
        code, _, o = self.req("DELETE", APPS + "/deployments/own3",
                              {"propagationPolicy": "Foreground"})
        self.assertIn("foregroundDeletion", o["metadata"].get("finalizers", []))
        self.assertTrue(self._gone(NS + "/configmaps/fg"))
        self.assertTrue(self._gone(APPS + "/deployments/own3"))

    # --- other kinds -----------------------------------------------------------------------------

    def test_events_two_views_and_leases(self):
        ev = {"metadata": {"name": "e1"}, "regarding": {"kind": "Deployment", "name": "x"},
              "note": "sweep started", "reason": "SweepStarted", "type": "Normal",
              "action": "Sweep", "reportingController": "sizeup.dev/operator",
              "reportingInstance": "op-1", "eventTime": "2026-01-01T00:00:00.000000Z"}
        code, _, o = self.req("POST", "/apis/events.k8s.io/v1/namespaces/default/events", ev)
        self.assertEqual(code, 201, o)
        self.assertEqual(o["note"], "sweep started")
        code, _, core = self.req("GET", NS + "/events/e1")
        self.assertEqual((core["message"], core["involvedObject"]["name"]),
                         ("sweep started", "x"))
        lease = {"metadata": {"name": "sizeup"}, "spec": {"holderIdentity": "a",
                                                          "leaseDurationSeconds": 15}}
        code, _, l1 = self.req("POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases",
                               lease)
        self.assertEqual(code, 201)
        l1["spec"]["holderIdentity"] = "b"
        code, _, l2 = self.req("PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/"
                               "sizeup", l1)
        self.assertEqual((code, l2["spec"]["holderIdentity"]), (200, "b"))
        code, _, _ = self.req("PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/"
                              "sizeup", l1)
        self.assertEqual(code, 409)

    def test_namespace_gets_default_service_account(self):
        # The serviceaccount controller's work: pods that name no ServiceAccount run as it.
        self.assertEqual(self.req("POST", "/api/v1/namespaces",
                                  {"metadata": {"name": "fresh"}})[0], 201)
        code, _, sa = self.req("GET", "/api/v1/namespaces/fresh/serviceaccounts/default")
        self.assertEqual((code, sa["metadata"]["name"]), (200, "default"))

    def test_protobuf_delete_options(self):
        # helm deletes its release Secrets through a typed client: DeleteOptions as protobuf.
        def pb(num, data):  # a length-delimited field (all lengths here are < 128)
            return bytes([num << 3 | 2, len(data)]) + data

        def delete_options(uid):
            meta = pb(1, b"v1") + pb(2, b"DeleteOptions")
            opts = bytes([1 << 3, 0]) + pb(2, pb(1, uid.encode())) + pb(4, b"Background")
            return b"k8s\x00" + pb(1, meta) + pb(2, opts)
        code, _, cm = self.req("POST", NS + "/configmaps", {"metadata": {"name": "pbdel"}})
        self.assertEqual(code, 201)
        pbtype = "application/vnd.kubernetes.protobuf"
        code, _, st = self.req("DELETE", NS + "/configmaps/pbdel", delete_options("wrong"),
                               ctype=pbtype)
        self.assertEqual(code, 409, st)
        self.assertIn("Precondition failed: UID in precondition: wrong", st["message"])
        code, _, _ = self.req("DELETE", NS + "/configmaps/pbdel",
                              delete_options(cm["metadata"]["uid"]), ctype=pbtype)
        self.assertEqual(code, 200)
        self.assertEqual(self.req("GET", NS + "/configmaps/pbdel")[0], 404)

    def test_discovery(self):
        _, _, apis = self.req("GET", "/apis")
        names = [g["name"] for g in apis["groups"]]
        for g in ("apps", "events.k8s.io", "coordination.k8s.io", "rbac.authorization.k8s.io"):
            self.assertIn(g, names)
        _, _, rl = self.req("GET", "/apis/apps/v1")
        dep = next(r for r in rl["resources"] if r["name"] == "deployments")
        self.assertEqual((dep["kind"], dep["namespaced"], dep["shortNames"]),
                         ("Deployment", True, ["deploy"]))
        self.assertIn("watch", dep["verbs"])
        self.assertIn("deployments/status", [r["name"] for r in rl["resources"]])
        code, _, v = self.req("GET", "/version")
        self.assertEqual((code, v["major"]), (200, "1"))

    # --- faults, tokens, log ----------------------------------------------------------------------

    def test_fault_conflicts_then_success(self):
        self.req("POST", APPS + "/deployments", deployment("flt"))
        self.f.control("POST", "/fake/faults", {"type": "error", "code": 409, "count": 2,
                                                "match": {"verb": "patch",
                                                          "resource": "deployments"}})
        codes = [self.req("PATCH", APPS + "/deployments/flt", {"metadata": {"labels": {
            "n": str(i)}}}, ctype=MERGE)[0] for i in range(3)]
        self.assertEqual(codes, [409, 409, 200])
        self.assertEqual(self.req("GET", APPS + "/deployments/flt")[0], 200)
        _, _, log = self.f.control("GET", "/fake/log")
        faulted = [e for e in log["entries"] if e.get("name") == "flt" and e.get("fault")]
        self.assertEqual([e["fault"] for e in faulted], ["error:409", "error:409"])
        _, _, snap = self.f.control("GET", "/fake/faults")
        self.assertEqual(snap["rules"][0]["count"], 0)

    def test_fault_429_503_delay(self):
        self.f.control("POST", "/fake/faults", [
            {"type": "error", "code": 429, "retryAfter": 2, "count": 1,
             "match": {"resource": "configmaps"}},
            {"type": "error", "code": 503, "count": 1, "match": {"resource": "configmaps"}},
            {"type": "delay", "seconds": 0.4, "count": 1, "match": {"resource": "leases"}}])
        code, h, st = self.req("GET", NS + "/configmaps")
        self.assertEqual((code, h.get("retry-after"), st["reason"]), (429, "2", "TooManyRequests"))
        code, _, st = self.req("GET", NS + "/configmaps")
        self.assertEqual((code, st["reason"]), (503, "ServiceUnavailable"))
        self.assertEqual(self.req("GET", NS + "/configmaps")[0], 200)
        t0 = time.time()
        self.assertEqual(self.req("GET", "/apis/coordination.k8s.io/v1/leases")[0], 200)
        self.assertGreaterEqual(time.time() - t0, 0.4)

    def test_fault_watch_dropped_and_expired(self):
        self.cm("wf-1")
        self.cm("wf-2")
        self.f.control("POST", "/fake/faults", {"type": "watch-close", "afterEvents": 1,
                                                "count": 1})
        got = []
        with self.assertRaises((http.client.IncompleteRead, OSError, ValueError)):
            for ev in self.f.watch(NS + "/configmaps?watch=1&timeoutSeconds=5"):
                got.append(ev)
        self.assertEqual(len(got), 1)
        self.f.control("POST", "/fake/faults", {"type": "watch-expire", "mode": "event",
                                                "count": 1})
        evs = list(self.f.watch(NS + "/configmaps?watch=1&timeoutSeconds=5&resourceVersion=%s"
                                % self.req("GET", NS + "/configmaps")[2]["metadata"][
                                    "resourceVersion"]))
        self.assertEqual(evs[-1]["type"], "ERROR")
        self.assertEqual((evs[-1]["object"]["code"], evs[-1]["object"]["reason"]),
                         (410, "Expired"))
        self.f.control("POST", "/fake/faults", {"type": "watch-expire", "mode": "http",
                                                "count": 1})
        with self.assertRaises(WatchError) as cm:
            list(self.f.watch(NS + "/configmaps?watch=1&resourceVersion=1"))
        self.assertEqual(cm.exception.status, 410)

    def test_tokens_rotation_and_401(self):
        self.assertEqual(self.req("GET", NS + "/configmaps", token="wrong")[0], 401)
        code, _, st = self.req("GET", NS + "/configmaps", token="")
        self.assertEqual((code, st["reason"]), (401, "Unauthorized"))
        tokfile = os.path.join(self.f.dir, "sa-token")
        _, _, t = self.f.control("POST", "/fake/tokens", {"user": "rotating",
                                                          "groups": ["system:masters"],
                                                          "file": tokfile})
        old = t["token"]
        with open(tokfile) as fh:
            self.assertEqual(fh.read(), old)
        self.assertEqual(self.req("GET", NS + "/configmaps", token=old)[0], 200)
        _, _, t = self.f.control("POST", "/fake/tokens/rotate", {"user": "rotating",
                                                                 "file": tokfile})
        self.assertEqual(self.req("GET", NS + "/configmaps", token=old)[0], 401)
        with open(tokfile) as fh:
            self.assertEqual(self.req("GET", NS + "/configmaps", token=fh.read())[0], 200)
        self.f.control("POST", "/fake/faults", {"type": "error", "code": 401, "count": 1})
        self.assertEqual(self.req("GET", NS + "/configmaps")[0], 401)
        self.assertEqual(self.req("GET", NS + "/configmaps")[0], 200)

    def test_request_log(self):
        _, _, before = self.f.control("GET", "/fake/log")
        seq = before["entries"][-1]["seq"] if before["entries"] else 0
        self.req("GET", NS + "/configmaps/log-probe")
        _, _, log = self.f.control("GET", "/fake/log?since=%d" % seq)
        e = [x for x in log["entries"] if x.get("name") == "log-probe"]
        self.assertEqual(len(e), 1)
        self.assertEqual((e[0]["method"], e[0]["code"], e[0]["user"], e[0]["verb"]),
                         ("GET", 404, "admin", "get"))
        with open(os.path.join(self.f.dir, "requests.log")) as fh:
            text = fh.read()
        self.assertNotIn(self.f.token, text)
        self.assertNotIn("Bearer", text)


class Tls(unittest.TestCase):
    def test_wrong_ca_and_host_mismatch_log_no_request(self):
        import ssl
        f = Fake("--no-kubelet", "--server-san", "DNS:wrong.example")
        try:
            with self.assertRaises(ssl.SSLError):
                f.request("GET", "/version")  # verifies 127.0.0.1 against the certificate
            other = ssl.create_default_context()  # the system CAs, not the fake's
            other.check_hostname = False
            with self.assertRaises(ssl.SSLError):
                f.request("GET", "/version", ctx=other)
            _, _, st = f.control("GET", "/fake/state")
            self.assertGreaterEqual(st["handshakeFailures"], 2)
            _, _, log = f.control("GET", "/fake/log")
            self.assertEqual(log["entries"], [])
        finally:
            f.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
