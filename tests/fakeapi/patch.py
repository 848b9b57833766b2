"""The three PATCH flavours of the Kubernetes API: JSON merge (RFC 7386), JSON patch (RFC 6902)
and strategic merge (lists merged by their patch-merge-key, with the `$patch`, `$retainKeys`,
`$setElementOrder/` and `$deleteFromPrimitiveList/` directives kubectl emits)."""

import copy


class PatchError(Exception):
    """A patch that cannot be applied; the server answers 422 (or 409 for a failed `test`)."""

    def __init__(self, msg, conflict=False):
        super().__init__(msg)
        self.conflict = conflict


# --- RFC 7386 JSON merge patch ---------------------------------------------------------------

def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


# --- RFC 6902 JSON patch ---------------------------------------------------------------------

def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError("invalid JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc, parts):
    cur = doc
    for p in parts:
        if isinstance(cur, dict):
            if p not in cur:
                raise PatchError("path not found: /%s" % "/".join(parts))
            cur = cur[p]
        elif isinstance(cur, list):
            try:
                cur = cur[int(p)]
            except (ValueError, IndexError):
                raise PatchError("bad array index %r" % p)
        else:
            raise PatchError("cannot walk into a scalar at %r" % p)
    return cur


def _index(lst, p, allow_end):
    if p == "-" and allow_end:
        return len(lst)
    try:
        i = int(p)
    except ValueError:
        raise PatchError("bad array index %r" % p)
    if i < 0 or i > len(lst) or (i == len(lst) and not allow_end):
        raise PatchError("array index %d out of range" % i)
    return i


def _add(doc, parts, value):
    if not parts:
        return value
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, True), value)
    else:
        raise PatchError("cannot add into a scalar")
    return doc


def _remove(doc, parts):
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError("path not found: /%s" % "/".join(parts))
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, False))
    raise PatchError("cannot remove from a scalar")


def json_patch(doc, ops):
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError("each operation needs `op` and `path`")
        kind = op["op"]
        parts = _pointer(op["path"])
        if kind == "add":
            doc = _add(doc, parts, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            _remove(doc, parts)
        elif kind == "replace":
            _walk(doc, parts)  # must exist
            if not parts:
                doc = copy.deepcopy(op.get("value"))
            else:
                parent = _walk(doc, parts[:-1])
                if isinstance(parent, list):
                    parent[_index(parent, parts[-1], False)] = copy.deepcopy(op.get("value"))
                else:
                    parent[parts[-1]] = copy.deepcopy(op.get("value"))
        elif kind == "move":
            value = _remove(doc, _pointer(op.get("from", "")))
            doc = _add(doc, parts, value)
        elif kind == "copy":
            value = copy.deepcopy(_walk(doc, _pointer(op.get("from", ""))))
            doc = _add(doc, parts, value)
        elif kind == "test":
            if _walk(doc, parts) != op.get("value"):
                raise PatchError("test operation failed at %s" % op["path"], conflict=False)
        else:
            raise PatchError("unknown operation %r" % kind)
    return doc


# --- strategic merge patch -------------------------------------------------------------------

# Field name -> patch merge key, as the Kubernetes Go types declare them (patchStrategy=merge).
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "ownerReferences": "uid",
    "conditions": "type",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "containerStatuses": "name",
}
# Lists of scalars merged as sets (patchStrategy=merge on []string).
PRIMITIVE_MERGE = {"finalizers"}


class _Delete:
    pass


DELETE = _Delete()


def _merge_key(field, orig, patch):
    if field == "ports":
        # Container ports merge on containerPort, Service ports on port.
        for item in list(orig or []) + list(patch or []):
            if isinstance(item, dict) and "containerPort" in item:
                return "containerPort"
        for item in list(orig or []) + list(patch or []):
            if isinstance(item, dict) and "port" in item:
                return "port"
        return None
    return MERGE_KEYS.get(field)


def _clean(value):
    """Strip directives from a value the patch adds wholesale."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()
                if not k.startswith("$") and v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value
                if not (isinstance(v, dict) and v.get("$patch") in ("delete", "replace")
                        and len(v) == 1)]
    return value


def _smp_list(orig, patch, field):
    orig = orig if isinstance(orig, list) else []
    if field in PRIMITIVE_MERGE:
        out = list(orig)
        for v in patch:
            if v not in out:
                out.append(v)
        return out
    key = _merge_key(field, orig, patch)
    if key is None:
        return _clean(patch)
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return _clean([p for p in patch if not (isinstance(p, dict) and "$patch" in p)])
    out = [copy.deepcopy(x) for x in orig]
    for item in patch:
        if not isinstance(item, dict):
            raise PatchError("list %r merges on %r but holds a non-object" % (field, key))
        kv = item.get(key)
        idx = next((i for i, o in enumerate(out) if isinstance(o, dict) and o.get(key) == kv),
                   None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(_clean(item))
        else:
            merged = _smp_map(out[idx], item)
            if merged is DELETE:
                out.pop(idx)
            else:
                out[idx] = merged
    return out


def _reorder(items, order, field, orig):
    """Apply `$setElementOrder/<field>`: listed elements in that order, others kept after."""
    if not isinstance(items, list) or not isinstance(order, list):
        return items
    key = _merge_key(field, orig, order) if field not in PRIMITIVE_MERGE else None

    def ident(x):
        return x.get(key) if key and isinstance(x, dict) else x

    wanted = [ident(o) for o in order]
    placed = [next((x for x in items if ident(x) == w), None) for w in wanted]
    placed = [x for x in placed if x is not None]
    rest = [x for x in items if ident(x) not in wanted]
    return placed + rest


def _smp_map(orig, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    orig = orig if isinstance(orig, dict) else {}
    directive = patch.get("$patch")
    if directive == "replace":
        return _clean({k: v for k, v in patch.items() if k != "$patch"})
    if directive == "delete":
        return DELETE
    result = dict(orig)
    for k, v in patch.items():
        if k in ("$patch", "$retainKeys") or k.startswith("$setElementOrder/"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            result[field] = [x for x in result.get(field, []) if x not in (v or [])]
            continue
        if v is None:
            result.pop(k, None)
        elif isinstance(v, dict):
            merged = _smp_map(result.get(k), v)
            if merged is DELETE:
                result.pop(k, None)
            else:
                result[k] = merged
        elif isinstance(v, list):
            result[k] = _smp_list(result.get(k), v, k)
        else:
            result[k] = v
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    for k, v in patch.items():
        if k.startswith("$setElementOrder/"):
            field = k.split("/", 1)[1]
            if field in result:
                result[field] = _reorder(result[field], v, field, orig.get(field))
    return result


def strategic_merge_patch(doc, patch):
    if not isinstance(patch, dict):
        raise PatchError("a strategic merge patch must be a JSON object")
    out = _smp_map(copy.deepcopy(doc), patch)
    if out is DELETE:
        raise PatchError("the patch deletes the whole object")
    return out
