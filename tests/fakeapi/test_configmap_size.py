#!/usr/bin/env python3
"""The fake API server refuses a ConfigMap whose data passes 1 MiB, as a real API server does
(422 Invalid, "Too long: must have at most 1048576 bytes"), on create, update and patch; keys
do not count, binaryData counts decoded. Run by tests/integration/fakeapi_semantics.sh."""

import base64
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from client import Fake  # noqa: E402

NS = "/api/v1/namespaces/default"
LIMIT = 1048576
MERGE = "application/merge-patch+json"


class ConfigMapSize(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fake("--no-kubelet")

    @classmethod
    def tearDownClass(cls):
        cls.f.stop()

    def create(self, name, data=None, binary=None):
        body = {"metadata": {"name": name}, "data": data or {}}
        if binary:
            body["binaryData"] = {k: base64.b64encode(v).decode() for k, v in binary.items()}
        # UTF-8 on the wire (kubectl's encoding): "\u00e9" escapes would pass the 3 MiB
        # request limit (413) before the object's own limit is reached.
        return self.f.request("POST", NS + "/configmaps",
                              json.dumps(body, ensure_ascii=False).encode())

    def assertTooLong(self, code, st):
        self.assertEqual((code, st.get("reason")), (422, "Invalid"), st)
        self.assertIn("Too long: must have at most %d bytes" % LIMIT, st["message"])
        self.assertEqual(st["details"]["causes"][0]["field"], "[]")

    def test_exactly_the_limit_is_accepted(self):
        # Two values adding up to the limit; the long key names are not counted.
        half = LIMIT // 2
        code, _, obj = self.create("at-limit", {"k" * 200: "a" * half, "j" * 200: "b" * half})
        self.assertEqual(code, 201, obj.get("message"))

    def test_one_byte_over_is_refused(self):
        code, _, st = self.create("over", {"a": "x" * (LIMIT - 1), "b": "yz"})
        self.assertTooLong(code, st)
        code, _, _ = self.f.request("GET", NS + "/configmaps/over")
        self.assertEqual(code, 404, "a refused ConfigMap must not be stored")

    def test_multibyte_values_count_in_bytes(self):
        code, _, st = self.create("utf8", {"a": "\u00e9" * (LIMIT // 2 + 1)})
        self.assertTooLong(code, st)

    def test_binary_data_counts_decoded(self):
        code, _, obj = self.create("bin-ok", {"a": "x" * (LIMIT - 10)}, {"b": b"\0" * 10})
        self.assertEqual(code, 201, obj.get("message"))
        code, _, st = self.create("bin-over", {"a": "x" * (LIMIT - 10)}, {"b": b"\0" * 11})
        self.assertTooLong(code, st)

    def test_update_and_patch_over_the_limit_are_refused(self):
        code, _, obj = self.create("grow", {"a": "small"})
        self.assertEqual(code, 201)
        obj["data"]["a"] = "x" * (LIMIT + 1)
        code, _, st = self.f.request("PUT", NS + "/configmaps/grow", obj)
        self.assertTooLong(code, st)
        code, _, st = self.f.request("PATCH", NS + "/configmaps/grow",
                                     {"data": {"b": "y" * LIMIT}}, ctype=MERGE)
        self.assertTooLong(code, st)
        code, _, cur = self.f.request("GET", NS + "/configmaps/grow")
        self.assertEqual(cur["data"], {"a": "small"}, "a refused write must change nothing")


if __name__ == "__main__":
    unittest.main()
