"""Decoding of the few protobuf request bodies kubectl sends with its typed clients
(`kubectl create namespace|configmap|secret|serviceaccount`, `kubectl auth can-i`, and the
DeleteOptions helm sends when it deletes its release Secrets) into the JSON objects the rest of
the fake works on. Responses are always JSON, which kubectl accepts."""


class ProtoError(ValueError):
    pass


MAGIC = b"k8s\x00"

# Field number -> (json name, kind[, sub-schema]). kinds: str, bytes, int, bool, msg, map,
# map_bytes (map<string, bytes> -> base64), rep_str, rep_msg, time (metav1.Time -> RFC 3339),
# opt_int (an optional int64 kept even when 0: gracePeriodSeconds 0 means "now").
OBJECT_META = {1: ("name", "str"), 2: ("generateName", "str"), 3: ("namespace", "str"),
               5: ("uid", "str"), 6: ("resourceVersion", "str"), 7: ("generation", "int"),
               11: ("labels", "map"), 12: ("annotations", "map"),
               14: ("finalizers", "rep_str")}
LOCAL_REF = {1: ("name", "str")}
SCHEMAS = {
    "ConfigMap": {1: ("metadata", "msg", OBJECT_META), 2: ("data", "map"),
                  3: ("binaryData", "map_bytes"), 4: ("immutable", "bool")},
    "Secret": {1: ("metadata", "msg", OBJECT_META), 2: ("data", "map_bytes"),
               3: ("type", "str"), 4: ("stringData", "map"), 5: ("immutable", "bool")},
    "Namespace": {1: ("metadata", "msg", OBJECT_META),
                  2: ("spec", "msg", {1: ("finalizers", "rep_str")})},
    "ServiceAccount": {1: ("metadata", "msg", OBJECT_META),
                       3: ("imagePullSecrets", "rep_msg", LOCAL_REF),
                       4: ("automountServiceAccountToken", "bool")},
    "DeleteOptions": {1: ("gracePeriodSeconds", "opt_int"),
                      2: ("preconditions", "msg", {1: ("uid", "str"),
                                                   2: ("resourceVersion", "str")}),
                      3: ("orphanDependents", "bool"), 4: ("propagationPolicy", "str"),
                      5: ("dryRun", "rep_str")},
    "SelfSubjectAccessReview": {
        1: ("metadata", "msg", OBJECT_META),
        2: ("spec", "msg", {
            1: ("resourceAttributes", "msg", {1: ("namespace", "str"), 2: ("verb", "str"),
                                              3: ("group", "str"), 4: ("version", "str"),
                                              5: ("resource", "str"),
                                              6: ("subresource", "str"), 7: ("name", "str")}),
            2: ("nonResourceAttributes", "msg", {1: ("path", "str"), 2: ("verb", "str")})})},
}


def _varint(b, i):
    shift = val = 0
    while True:
        if i >= len(b):
            raise ProtoError("truncated varint")
        c = b[i]
        i += 1
        val |= (c & 0x7F) << shift
        if not c & 0x80:
            return val, i
        shift += 7
        if shift > 63:
            raise ProtoError("varint too long")


def fields(b):
    """Yields (field number, wire type, value) of one message."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            if i + n > len(b):
                raise ProtoError("truncated field %d" % num)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ProtoError("unsupported wire type %d" % wt)
        yield num, wt, v


def _map_entry(b):
    k = v = b""
    for num, _, val in fields(b):
        if num == 1:
            k = val
        elif num == 2:
            v = val
    return k.decode(), v


def decode_message(b, schema):
    import base64
    out = {}
    for num, wt, v in fields(b):
        spec = schema.get(num)
        if spec is None:
            continue  # fields the fake does not need (timestamps, managedFields...)
        name, kind = spec[0], spec[1]
        if kind == "str":
            if v:
                out[name] = v.decode()
        elif kind == "int":
            if v:
                out[name] = v
        elif kind == "opt_int":
            # Two's complement on the wire: a negative int64 is a 10-byte varint.
            out[name] = v - (1 << 64) if v >= 1 << 63 else v
        elif kind == "bool":
            out[name] = bool(v)
        elif kind == "msg":
            sub = decode_message(v, spec[2])
            if sub:
                out[name] = sub
        elif kind == "rep_msg":
            out.setdefault(name, []).append(decode_message(v, spec[2]))
        elif kind == "rep_str":
            out.setdefault(name, []).append(v.decode())
        elif kind == "map":
            k, val = _map_entry(v)
            out.setdefault(name, {})[k] = val.decode()
        elif kind == "map_bytes":
            k, val = _map_entry(v)
            out.setdefault(name, {})[k] = base64.b64encode(val).decode()
    return out


def decode(body):
    """A `k8s\\0` protobuf envelope -> JSON object with apiVersion and kind."""
    if not body.startswith(MAGIC):
        raise ProtoError("not a Kubernetes protobuf body")
    api_version = kind = ""
    raw = b""
    for num, _, v in fields(body[len(MAGIC):]):
        if num == 1:
            for n2, _, v2 in fields(v):
                if n2 == 1:
                    api_version = v2.decode()
                elif n2 == 2:
                    kind = v2.decode()
        elif num == 2:
            raw = v
    schema = SCHEMAS.get(kind)
    if schema is None:
        raise ProtoError("protobuf bodies of kind %r are not supported by the fake; send JSON "
                         "(e.g. kubectl create ... --dry-run=client -o json | kubectl apply "
                         "-f -)" % kind)
    obj = {"apiVersion": api_version, "kind": kind}
    obj.update(decode_message(raw, schema))
    obj.setdefault("metadata", {})
    return obj
