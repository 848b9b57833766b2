"""Object storage with one global resourceVersion counter and a bounded watch-event history.

Stored objects are never mutated in place: a write replaces the dict, so a reader holding an
old dict (a list in progress, a watch serialising an event) sees a consistent snapshot. Objects
are kept without kind/apiVersion (lists omit them, as a real server does); the view adds them.
"""

import collections
import json
import threading


class ApiError(Exception):
    """An error the HTTP layer turns into a `Status` object."""

    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self):
        st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            st["details"] = self.details
        return st


class Entry:
    __slots__ = ("obj", "_item")

    def __init__(self, obj):
        self.obj = obj
        self._item = None

    def item_json(self):
        """The object serialised as a list item, cached (lists of 10,000 objects stay fast)."""
        if self._item is None:
            self._item = json.dumps(self.obj, separators=(",", ":"))
        return self._item


class Event:
    __slots__ = ("rv", "key", "ns", "name", "type", "obj", "labels")

    def __init__(self, rv, key, ns, name, etype, obj):
        self.rv = rv
        self.key = key
        self.ns = ns
        self.name = name
        self.type = etype
        self.obj = obj
        self.labels = (obj.get("metadata") or {}).get("labels") or {}


# --- selectors --------------------------------------------------------------------------------

def parse_label_selector(text):
    """Parse `a=b,c!=d,e in (x,y),f notin (z),g,!h` into a list of predicates."""
    reqs = []
    if not text:
        return reqs
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in parts:
        p = p.strip()
        if not p:
            continue
        if " notin " in p or " in " in p:
            op = "notin" if " notin " in p else "in"
            k, _, vals = p.partition(" notin " if op == "notin" else " in ")
            vals = vals.strip()
            if not (vals.startswith("(") and vals.endswith(")")):
                raise ApiError(400, "BadRequest", "unable to parse requirement: %r" % p)
            vs = {v.strip() for v in vals[1:-1].split(",") if v.strip()}
            reqs.append((k.strip(), op, vs))
        elif "!=" in p:
            k, _, v = p.partition("!=")
            reqs.append((k.strip(), "!=", v.strip()))
        elif "==" in p:
            k, _, v = p.partition("==")
            reqs.append((k.strip(), "=", v.strip()))
        elif "=" in p:
            k, _, v = p.partition("=")
            reqs.append((k.strip(), "=", v.strip()))
        elif p.startswith("!"):
            reqs.append((p[1:].strip(), "!exists", None))
        else:
            reqs.append((p, "exists", None))
    return reqs


def labels_match(reqs, labels):
    for k, op, v in reqs:
        have = k in labels
        val = labels.get(k)
        if op == "=" and val != v:
            return False
        if op == "!=" and val == v:
            return False
        if op == "in" and (not have or val not in v):
            return False
        if op == "notin" and have and val in v:
            return False
        if op == "exists" and not have:
            return False
        if op == "!exists" and have:
            return False
    return True


def selector_matches(selector, labels):
    """A LabelSelector object (matchLabels + matchExpressions) against labels."""
    if not selector:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        k, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


def parse_field_selector(text):
    reqs = []
    if not text:
        return reqs
    for p in text.split(","):
        p = p.strip()
        if not p:
            continue
        if "!=" in p:
            k, _, v = p.partition("!=")
            reqs.append((k.strip(), False, v.strip()))
        else:
            k, _, v = p.partition("==") if "==" in p else p.partition("=")
            reqs.append((k.strip(), True, v.strip()))
    return reqs


def _field(obj, path):
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def fields_match(reqs, obj):
    for k, eq, v in reqs:
        if (_field(obj, k) == v) != eq:
            return False
    return True


# --- the store --------------------------------------------------------------------------------

class Store:
    def __init__(self, history=5000):
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.rv = 1
        self.objs = collections.defaultdict(dict)  # key -> {(ns, name): Entry}
        self.history = collections.deque(maxlen=history)
        self.oldest_rv = 1  # events after this rv are all still in history
        self.by_owner = collections.defaultdict(set)  # owner uid -> {(key, ns, name)}
        self.by_uid = {}  # uid -> (key, ns, name)
        self.listeners = []  # fn(key, etype, obj, old) called with the lock held
        self.closed = False

    def next_rv(self):
        self.rv += 1
        return self.rv

    def get(self, key, ns, name):
        with self.lock:
            e = self.objs[key].get((ns, name))
            return e.obj if e else None

    def entries(self, key, ns=None):
        """Snapshot of entries (sorted by namespace, name) and the current rv."""
        with self.lock:
            d = self.objs[key]
            if ns is None:
                items = sorted(d.items())
            else:
                items = sorted((k, v) for k, v in d.items() if k[0] == ns)
            return [v for _, v in items], self.rv

    def count(self, key):
        with self.lock:
            return len(self.objs[key])

    def _index(self, key, ns, name, obj, add):
        meta = obj.get("metadata") or {}
        uid = meta.get("uid")
        if uid:
            if add:
                self.by_uid[uid] = (key, ns, name)
            else:
                self.by_uid.pop(uid, None)
        for ref in meta.get("ownerReferences") or []:
            s = self.by_owner.get(ref.get("uid"))
            if add:
                self.by_owner[ref.get("uid")].add((key, ns, name))
            elif s is not None:
                s.discard((key, ns, name))
                if not s:
                    del self.by_owner[ref.get("uid")]

    def put(self, key, ns, name, obj, etype, full):
        """Store `obj` (taking ownership) under a fresh resourceVersion and record the event.

        `full(obj)` returns the object with kind/apiVersion for the watch event. Returns obj.
        """
        with self.lock:
            rv = self.next_rv()
            obj["metadata"]["resourceVersion"] = str(rv)
            old = self.objs[key].get((ns, name))
            if old is not None:
                self._index(key, ns, name, old.obj, False)
            self.objs[key][(ns, name)] = Entry(obj)
            self._index(key, ns, name, obj, True)
            self._record(rv, key, ns, name, etype, full(obj))
            for fn in self.listeners:
                fn(key, etype, obj, old.obj if old else None)
            return obj

    def remove(self, key, ns, name, full):
        with self.lock:
            old = self.objs[key].pop((ns, name), None)
            if old is None:
                return None
            self._index(key, ns, name, old.obj, False)
            rv = self.next_rv()
            obj = dict(old.obj)
            obj["metadata"] = dict(obj["metadata"], resourceVersion=str(rv))
            self._record(rv, key, ns, name, "DELETED", full(obj))
            for fn in self.listeners:
                fn(key, "DELETED", obj, old.obj)
            return obj

    def _record(self, rv, key, ns, name, etype, fullobj):
        if len(self.history) == self.history.maxlen:
            self.oldest_rv = self.history[0].rv
        self.history.append(Event(rv, key, ns, name, etype, fullobj))
        self.cond.notify_all()

    def events_after(self, rv):
        """Events with resourceVersion > rv, or None when rv is older than the history holds."""
        with self.lock:
            if rv < self.oldest_rv:
                return None
            out = []
            for ev in reversed(self.history):
                if ev.rv <= rv:
                    break
                out.append(ev)
            out.reverse()
            return out

    def dependents(self, uid):
        with self.lock:
            return list(self.by_owner.get(uid, ()))

    def uid_exists(self, uid):
        with self.lock:
            return uid in self.by_uid
