"""What a kubelet derives from a container's spec before it starts the process: the environment
(env, envFrom, valueFrom with fieldRef, resourceFieldRef, configMapKeyRef and secretKeyRef, the
`kubernetes` Service's variables) and the command line from the image map.

Pure functions: the ConfigMaps and Secrets come through a lookup the caller passes, so that the
rules are tested without an API server.
"""

import base64
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "fakeapi"))
import resize as fakeresize  # noqa: E402  (quantities: one parser for the fake and this kubelet)
from sandbox import container_argv, expand_env, expand_k8s, image_entry  # noqa: E402,F401

# Variables a container inherits from the kubelet's environment, as an image's ENV would give
# them (PATH to find the interpreters, the locale).
INHERITED = ("PATH", "LANG", "LC_ALL", "TZ", "PYTHONPATH")


class ConfigError(Exception):
    """A container whose environment cannot be built (CreateContainerConfigError)."""


def qty(kind, v):
    """cpu in millicores or memory in bytes (None when absent); ValueError when malformed."""
    return fakeresize.qty(kind, v)


def _field(pod, path, ctx):
    m = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    mm = re.match(r"^metadata\.(labels|annotations)\['(.*)'\]$", path)
    if mm:
        return (m.get(mm.group(1)) or {}).get(mm.group(2), "")
    if path in ("metadata.labels", "metadata.annotations"):
        return "\n".join('%s="%s"' % (k, v) for k, v in sorted((m.get(path[9:]) or {}).items()))
    vals = {"metadata.name": m.get("name", ""), "metadata.namespace": m.get("namespace", ""),
            "metadata.uid": m.get("uid", ""), "spec.nodeName": spec.get("nodeName") or
            ctx.get("node", ""),
            "spec.serviceAccountName": spec.get("serviceAccountName") or "default",
            "status.podIP": ctx.get("pod_ip", ""), "status.podIPs": ctx.get("pod_ip", ""),
            "status.hostIP": ctx.get("host_ip", ""), "status.hostIPs": ctx.get("host_ip", "")}
    if path not in vals:
        raise ConfigError("unsupported fieldRef %r" % path)
    return vals[path]


def _resource(c, ref, ctx):
    """resourceFieldRef: the container's limit (the node's allocatable when unset) or request
    (0 when unset), divided by the divisor and rounded up, as the downward API does."""
    res = ref.get("resource", "")
    part, _, kind = res.partition(".")
    if part not in ("limits", "requests") or kind not in ("cpu", "memory"):
        raise ConfigError("unsupported resourceFieldRef %r" % res)
    r = (c.get("resources") or {})
    try:
        v = qty(kind, (r.get(part) or {}).get(kind))
        if v is None and part == "requests":
            v = qty(kind, ((r.get("limits") or {}).get(kind)))
        div = qty(kind, ref.get("divisor") or ("1" if kind == "cpu" else "1"))
    except ValueError as e:
        raise ConfigError(str(e))
    if v is None:
        v = ctx.get("node_cpu_millis" if kind == "cpu" else "node_memory_bytes", 0) \
            if part == "limits" else 0
    if not div:
        raise ConfigError("resourceFieldRef %r: divisor is zero" % res)
    return str(max(1 if kind == "cpu" and part == "limits" else 0, math.ceil(v / div)))


def _key_ref(kind, ref, ns, lookup):
    obj = lookup(kind, ns, ref.get("name", ""))
    optional = bool(ref.get("optional"))
    if obj is None:
        if optional:
            return None
        raise ConfigError('%s "%s" not found' % (kind, ref.get("name")))
    key = ref.get("key", "")
    if kind == "secret":
        data = obj.get("data") or {}
        if key in data:
            return base64.b64decode(data[key]).decode(errors="replace")
    else:
        data = obj.get("data") or {}
        if key in data:
            return data[key]
        if key in (obj.get("binaryData") or {}):
            return base64.b64decode(obj["binaryData"][key]).decode(errors="replace")
    if optional:
        return None
    raise ConfigError("couldn't find key %s in %s %s/%s" % (key, kind, ns, ref.get("name")))


def container_env(pod, c, ctx, lookup):
    """The container's environment as a dict. ctx: node, pod_ip, host_ip, api_host, api_port,
    node_cpu_millis, node_memory_bytes, base (the inherited variables), defaults (set when the
    container does not set them). lookup(kind, ns, name)
    returns a ConfigMap ("configmap") or Secret ("secret") or None. Raises ConfigError."""
    ns = (pod.get("metadata") or {}).get("namespace", "default")
    env = dict(ctx.get("base") or {})
    if ctx.get("api_host"):
        host, port = ctx["api_host"], str(ctx.get("api_port", 443))
        env.update({"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port,
                    "KUBERNETES_SERVICE_PORT_HTTPS": port,
                    "KUBERNETES_PORT": "tcp://%s:%s" % (host, port),
                    "KUBERNETES_PORT_443_TCP": "tcp://%s:%s" % (host, port),
                    "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
                    "KUBERNETES_PORT_443_TCP_ADDR": host,
                    "KUBERNETES_PORT_443_TCP_PORT": port})
    env["HOSTNAME"] = (pod.get("metadata") or {}).get("name", "")
    for ef in c.get("envFrom") or []:
        prefix = ef.get("prefix") or ""
        for kind, key in (("configmap", "configMapRef"), ("secret", "secretRef")):
            ref = ef.get(key)
            if ref is None:
                continue
            obj = lookup(kind, ns, ref.get("name", ""))
            if obj is None:
                if ref.get("optional"):
                    continue
                raise ConfigError('%s "%s" not found' % (kind, ref.get("name")))
            for k, v in (obj.get("data") or {}).items():
                env[prefix + k] = base64.b64decode(v).decode(errors="replace") \
                    if kind == "secret" else v
    for e in c.get("env") or []:
        name = e.get("name", "")
        if "valueFrom" not in e:
            # $(VAR) refers to variables defined before this one, as in a pod spec.
            env[name] = expand_k8s(e.get("value") or "", env)
            continue
        vf = e["valueFrom"] or {}
        if "fieldRef" in vf:
            env[name] = _field(pod, (vf["fieldRef"] or {}).get("fieldPath", ""), ctx)
        elif "resourceFieldRef" in vf:
            env[name] = _resource(c, vf["resourceFieldRef"] or {}, ctx)
        elif "configMapKeyRef" in vf:
            v = _key_ref("configmap", vf["configMapKeyRef"] or {}, ns, lookup)
            if v is not None:
                env[name] = v
        elif "secretKeyRef" in vf:
            v = _key_ref("secret", vf["secretKeyRef"] or {}, ns, lookup)
            if v is not None:
                env[name] = v
        else:
            raise ConfigError("env %s: unsupported valueFrom %s" % (name, sorted(vf)))
    for k, v in (ctx.get("defaults") or {}).items():
        env.setdefault(k, v)
    return env


def app_defaults(pod, c, pod_ip):
    """The variables the project's example apps read (tests/fakeapi/apps), which the fake
    kubelet gives every container too; the container's own env wins."""
    m = pod.get("metadata") or {}
    ports = [p.get("containerPort") for p in c.get("ports") or [] if p.get("containerPort")]
    out = {"POD_IP": pod_ip, "POD_NAME": m.get("name", ""),
           "POD_NAMESPACE": m.get("namespace", ""), "PORT": str(ports[0] if ports else 8080)}
    for k in ("FAKEAPI_APPS",):
        if os.environ.get(k):
            out[k] = os.environ[k]
    return out


def command_line(images, c, env):
    """(argv, env) for container c: the image map's entry gives the command (or the image's
    entrypoint / cmd that the container's command / args replace) and default variables that
    the container's own env overrides. None when the image is not in the map."""
    entry = image_entry(images, c.get("image", ""))
    if entry is None:
        return None
    env = dict(env)
    for k, v in (entry.get("env") or {}).items():
        if k not in env:
            env[k] = expand_env(str(v), env)
    return container_argv(entry, c, env), env


def expand_images(images, environ):
    """The image map with ${VAR} in its commands and env expanded from environ (the kubelet's
    environment: FAKEAPI_APPS says where the example apps are)."""
    def walk(v):
        if isinstance(v, str):
            return expand_env(v, environ)
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return v
    return {k: walk(v) for k, v in images.items()}
