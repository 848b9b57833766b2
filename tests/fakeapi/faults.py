"""Fault injection rules and the request log.

A rule is a JSON object; `type` says what it does, `match` which requests it applies to, and
`count` how many times it fires before it is spent (absent = until cleared):

  {"type": "error", "code": 409, "count": 3, "match": {"verb": "update", "resource": "deployments"}}
  {"type": "error", "code": 429, "retryAfter": 2, "count": 1}
  {"type": "error", "code": 503, "count": 5}
  {"type": "error", "code": 401, "count": 1}              (token rejected once)
  {"type": "delay", "seconds": 1.5, "count": 10}
  {"type": "watch-close", "afterEvents": 2, "count": 1}   (connection dropped mid-stream)
  {"type": "watch-close", "afterSeconds": 1.0, "probability": 0.5}
  {"type": "watch-expire", "mode": "http", "count": 1}    (410 Gone when the watch starts)
  {"type": "watch-expire", "mode": "event", "afterEvents": 1, "count": 1}
                                                          (ERROR 410 inside a 200 stream)

match keys (all optional, all must hold): verb (a verb, a list, or "write" for
create/update/patch/delete), resource (plural, e.g. "deployments" or "deployments/status"),
group, namespace, name, method, path (a prefix), user.
"""

import collections
import json
import random
import threading
import time

WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")

REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
           405: "MethodNotAllowed", 409: "Conflict", 410: "Expired", 422: "Invalid",
           429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
           504: "Timeout"}


def _verb_ok(want, verb):
    if want is None or want == "*":
        return True
    if isinstance(want, list):
        return any(_verb_ok(w, verb) for w in want)
    if want == "write":
        return verb in WRITE_VERBS
    return want == verb


def matches(m, attrs):
    if not m:
        return True
    if not _verb_ok(m.get("verb"), attrs.get("verb")):
        return False
    res = attrs.get("resource") or ""
    full = res + ("/" + attrs["sub"] if attrs.get("sub") else "")
    if "resource" in m and m["resource"] not in (res, full) and m["resource"] != "*":
        return False
    for k, ak in (("group", "group"), ("namespace", "ns"), ("name", "name"),
                  ("method", "method"), ("user", "user")):
        if k in m and m[k] != attrs.get(ak):
            return False
    if "path" in m and not (attrs.get("path") or "").startswith(m["path"]):
        return False
    return True


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []
        self.fired = collections.Counter()

    def add(self, rules):
        if isinstance(rules, dict):
            rules = [rules]
        if not isinstance(rules, list):
            raise ValueError("faults must be an object or a list of objects")
        with self.lock:
            for r in rules:
                if not isinstance(r, dict) or r.get("type") not in (
                        "error", "delay", "watch-close", "watch-expire"):
                    raise ValueError("bad fault rule %r" % (r,))
                if r["type"] == "error" and not isinstance(r.get("code"), int):
                    raise ValueError("an error fault needs an integer `code`")
                self.rules.append(dict(r))

    def clear(self):
        with self.lock:
            self.rules = []

    def take(self, types, attrs):
        """The first live rule of one of `types` matching attrs; spends one of its count."""
        with self.lock:
            for r in self.rules:
                if r["type"] not in types or not matches(r.get("match"), attrs):
                    continue
                if "probability" in r and r["type"] != "watch-close" and \
                        random.random() >= r["probability"]:
                    continue
                if "count" in r:
                    if r["count"] <= 0:
                        continue
                    r["count"] -= 1
                self.fired[r["type"] + (":%d" % r["code"] if "code" in r else "")] += 1
                return dict(r)
        return None

    def snapshot(self):
        with self.lock:
            return {"rules": [dict(r) for r in self.rules], "fired": dict(self.fired)}


class RequestLog:
    """Every API request: method, path, verb, resource, code, user, fault. Never a token."""

    def __init__(self, path, keep=20000):
        self.lock = threading.Lock()
        self.entries = collections.deque(maxlen=keep)
        self.seq = 0
        self.fh = open(path, "a", buffering=1) if path else None

    def add(self, entry):
        with self.lock:
            self.seq += 1
            entry["seq"] = self.seq
            entry["time"] = round(time.time(), 3)
            self.entries.append(entry)
            if self.fh:
                self.fh.write(json.dumps(entry, separators=(",", ":")) + "\n")

    def since(self, seq):
        with self.lock:
            return [e for e in self.entries if e["seq"] > seq]

    def clear(self):
        with self.lock:
            self.entries.clear()
