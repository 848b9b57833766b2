#!/usr/bin/env python3
"""The fake API server refuses an object whose annotations (keys and values, in bytes) pass
262,144 bytes, as a real API server does (422 Invalid, "metadata.annotations: Too long: must have
at most 262144 bytes"), on create, update and patch, and the same for a Deployment's pod
template annotations. Run by tests/integration/fakeapi_semantics.sh."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from client import Fake  # noqa: E402

NS = "/api/v1/namespaces/default"
APPS = "/apis/apps/v1/namespaces/default"
LIMIT = 262144
MERGE = "application/merge-patch+json"
MSG = "metadata.annotations: Too long: must have at most 262144 bytes"


def deployment(name, ann=None, tpl_ann=None):
    return {"metadata": {"name": name, "annotations": ann or {}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name},
                                               "annotations": tpl_ann or {}},
                                  "spec": {"containers": [{"name": "c", "image": "x"}]}}}}


class AnnotationSize(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fake("--no-kubelet")

    @classmethod
    def tearDownClass(cls):
        cls.f.stop()

    def assertTooLong(self, code, st, field="metadata.annotations"):
        self.assertEqual((code, st.get("reason")), (422, "Invalid"), st)
        self.assertIn(field + ": Too long: must have at most %d bytes" % LIMIT, st["message"])

    def test_keys_and_values_count(self):
        # Key "a" (1 byte) + value: exactly the limit is fine, one byte more is not.
        code, _, obj = self.f.request("POST", NS + "/configmaps",
                                      {"metadata": {"name": "at", "annotations":
                                                    {"a": "x" * (LIMIT - 1)}}})
        self.assertEqual(code, 201, obj.get("message"))
        code, _, st = self.f.request("POST", NS + "/configmaps",
                                     {"metadata": {"name": "over", "annotations":
                                                   {"a": "x" * LIMIT}}})
        self.assertTooLong(code, st)
        self.assertIn(MSG, st["message"])
        self.assertEqual(self.f.request("GET", NS + "/configmaps/over")[0], 404)

    def test_patch_and_update_refused(self):
        code, _, obj = self.f.request("POST", APPS + "/deployments",
                                      deployment("d", {"k": "v" * (LIMIT // 2)}))
        self.assertEqual(code, 201, obj.get("message"))
        code, _, st = self.f.request("PATCH", APPS + "/deployments/d",
                                     {"metadata": {"annotations": {"k2": "w" * (LIMIT // 2)}}},
                                     ctype=MERGE)
        self.assertTooLong(code, st)
        code, _, cur = self.f.request("GET", APPS + "/deployments/d")
        self.assertNotIn("k2", cur["metadata"]["annotations"])
        cur["metadata"]["annotations"]["k3"] = "z" * LIMIT
        code, _, st = self.f.request("PUT", APPS + "/deployments/d", cur)
        self.assertTooLong(code, st)

    def test_template_annotations(self):
        code, _, st = self.f.request("POST", APPS + "/deployments",
                                     deployment("t", tpl_ann={"a": "x" * LIMIT}))
        self.assertTooLong(code, st, "spec.template.metadata.annotations")


if __name__ == "__main__":
    unittest.main()
