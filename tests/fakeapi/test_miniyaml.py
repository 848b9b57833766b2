#!/usr/bin/env python3
"""Cases for the fake's small YAML reader (image maps, --preload of `kubectl kustomize`)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from miniyaml import YamlError, load, load_all  # noqa: E402


class MiniYaml(unittest.TestCase):
    def test_cases(self):
        cases = [
            ("a: 1\nb: x\n", {"a": 1, "b": "x"}),
            ("a:\n  b: [1, two, \"3\"]\n  c: {d: e, f: 'g''s'}\n",
             {"a": {"b": [1, "two", "3"], "c": {"d": "e", "f": "g's"}}}),
            ("l:\n- a\n- b: 1\n  c: 2\n-\n  - x\n", {"l": ["a", {"b": 1, "c": 2}, ["x"]]}),
            ("l:\n  - 1\n  - 2.5\n  - true\n  - null\n  - ~\n", {"l": [1, 2.5, True, None,
                                                                    None]}),
            ("s: |\n  line1\n\n  line2\nt: x\n", {"s": "line1\n\nline2\n", "t": "x"}),
            ("s: |-\n  a\n  b\n", {"s": "a\nb"}),
            ("s: >\n  a\n  b\n\n  c\n", {"s": "a b\nc\n"}),
            ("k: v # comment\n# full line\nu: http://h:1/p#f\n",
             {"k": "v", "u": "http://h:1/p#f"}),
            ("\"quoted key\": \"a\\tb\"\nempty:\nzero: 0\nver: 1.32.0\n",
             {"quoted key": "a\tb", "empty": None, "zero": 0, "ver": "1.32.0"}),
            ("example/web:*:\n  command: [python3, \"${FAKEAPI_APPS}/web.py\"]\n",
             {"example/web:*": {"command": ["python3", "${FAKEAPI_APPS}/web.py"]}}),
        ]
        for text, want in cases:
            with self.subTest(text=text):
                self.assertEqual(load(text), want)

    def test_documents(self):
        docs = load_all("---\na: 1\n---\n# only a comment\n---\nb: 2\n...\n")
        self.assertEqual(docs, [{"a": 1}, {"b": 2}])
        lst = load("a: 1\n---\nb: 2\n")
        self.assertEqual(lst["kind"], "List")
        self.assertEqual(lst["items"], [{"a": 1}, {"b": 2}])

    def test_malformed(self):
        for bad in ("a: [1, 2\n", "a: 'x\n", "a:\n\tb: 1\n", "a: 1\n b: 2\n  - c\n"):
            with self.subTest(bad=bad):
                with self.assertRaises(YamlError):
                    load(bad)


if __name__ == "__main__":
    unittest.main(verbosity=2)
