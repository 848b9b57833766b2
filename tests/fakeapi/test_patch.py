#!/usr/bin/env python3
"""Table-driven cases for the fake's three patch flavours (tests/fakeapi/patch.py)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from patch import PatchError, json_patch, merge_patch, strategic_merge_patch  # noqa: E402

POD = {"spec": {"containers": [
    {"name": "a", "image": "x:1", "env": [{"name": "E1", "value": "1"}],
     "ports": [{"containerPort": 80, "protocol": "TCP"}]},
    {"name": "b", "image": "y:1"}],
    "volumes": [{"name": "v1", "emptyDir": {}}]},
    "metadata": {"finalizers": ["f1"], "labels": {"l": "1"}}}


class StrategicMerge(unittest.TestCase):
    def smp(self, patch, doc=None):
        return strategic_merge_patch(doc if doc is not None else POD, patch)

    def test_cases(self):
        cases = [
            ("container merged by name",
             {"spec": {"containers": [{"name": "b", "image": "y:2"}]}},
             lambda o: [c["image"] for c in o["spec"]["containers"]] == ["x:1", "y:2"]),
            ("new container appended",
             {"spec": {"containers": [{"name": "c", "image": "z"}]}},
             lambda o: [c["name"] for c in o["spec"]["containers"]] == ["a", "b", "c"]),
            ("container deleted",
             {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}},
             lambda o: [c["name"] for c in o["spec"]["containers"]] == ["b"]),
            ("env merged by name inside a container",
             {"spec": {"containers": [{"name": "a", "env": [{"name": "E2", "value": "2"}]}]}},
             lambda o: o["spec"]["containers"][0]["env"] == [{"name": "E1", "value": "1"},
                                                            {"name": "E2", "value": "2"}]),
            ("container ports merged by containerPort",
             {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80,
                                                               "name": "http"}]}]}},
             lambda o: o["spec"]["containers"][0]["ports"] == [
                 {"containerPort": 80, "protocol": "TCP", "name": "http"}]),
            ("volumes replaced wholesale with $patch: replace",
             {"spec": {"volumes": [{"name": "v2", "emptyDir": {}}, {"$patch": "replace"}]}},
             lambda o: o["spec"]["volumes"] == [{"name": "v2", "emptyDir": {}}]),
            ("null deletes a key",
             {"metadata": {"labels": {"l": None}}},
             lambda o: o["metadata"]["labels"] == {}),
            ("finalizers merged as a set",
             {"metadata": {"finalizers": ["f2", "f1"]}},
             lambda o: o["metadata"]["finalizers"] == ["f1", "f2"]),
            ("$deleteFromPrimitiveList",
             {"metadata": {"$deleteFromPrimitiveList/finalizers": ["f1"]}},
             lambda o: o["metadata"]["finalizers"] == []),
            ("$setElementOrder reorders",
             {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}},
             lambda o: [c["name"] for c in o["spec"]["containers"]] == ["b", "a"]),
            ("$retainKeys drops the rest",
             {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
             lambda o: o["spec"]["strategy"] == {"type": "Recreate"}),
            ("map $patch: delete",
             {"spec": {"strategy": {"$patch": "delete"}}},
             lambda o: "strategy" not in o["spec"]),
            ("an unknown list is replaced",
             {"spec": {"tolerations": [{"key": "k"}]}},
             lambda o: o["spec"]["tolerations"] == [{"key": "k"}]),
        ]
        doc = dict(POD, spec=dict(POD["spec"], strategy={"type": "RollingUpdate",
                                                         "rollingUpdate": {"maxSurge": 1}},
                                  tolerations=[{"key": "old"}]))
        for name, patch, ok in cases:
            with self.subTest(name):
                out = self.smp(patch, doc)
                self.assertTrue(ok(out), out)
        self.assertEqual(POD["spec"]["containers"][0]["env"], [{"name": "E1", "value": "1"}],
                         "the input must not be modified")

    def test_service_ports_merge_on_port(self):
        svc = {"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443}]}}
        out = strategic_merge_patch(svc, {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}})
        self.assertEqual(out["spec"]["ports"], [{"port": 80, "targetPort": 9090},
                                                {"port": 443}])

    def test_malformed(self):
        with self.assertRaises(PatchError):
            strategic_merge_patch(POD, [1, 2])
        with self.assertRaises(PatchError):
            strategic_merge_patch(POD, {"spec": {"containers": ["not-a-map"]}})


class MergeAndJsonPatch(unittest.TestCase):
    def test_merge_patch_rfc7386(self):
        cases = [({"a": "b"}, {"a": "c"}, {"a": "c"}),
                 ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
                 ({"a": "b"}, {"a": None}, {}),
                 ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
                 ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
                 ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
                 ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}})]
        for doc, patch, want in cases:
            self.assertEqual(merge_patch(doc, patch), want)

    def test_json_patch_rfc6902(self):
        doc = {"a": [1, 2], "b": {"c": "d"}}
        out = json_patch(doc, [{"op": "add", "path": "/a/1", "value": 9},
                               {"op": "add", "path": "/a/-", "value": 3},
                               {"op": "remove", "path": "/b/c"},
                               {"op": "copy", "from": "/a/0", "path": "/b/x"},
                               {"op": "move", "from": "/b/x", "path": "/m~1n"},
                               {"op": "test", "path": "/a", "value": [1, 9, 2, 3]}])
        self.assertEqual(out, {"a": [1, 9, 2, 3], "b": {}, "m/n": 1})
        self.assertEqual(doc, {"a": [1, 2], "b": {"c": "d"}})
        for bad in ([{"op": "remove", "path": "/nope"}], [{"op": "replace", "path": "/a/7",
                                                         "value": 1}],
                    [{"op": "test", "path": "/a", "value": []}], [{"op": "frob", "path": ""}],
                    {"op": "add"}, [{"path": "/a"}]):
            with self.assertRaises(PatchError, msg=repr(bad)):
                json_patch(doc, bad)


if __name__ == "__main__":
    unittest.main(verbosity=2)
