#!/usr/bin/env python3
"""Checks the Dockerfile for what can be checked without a container engine.

Usage: check_dockerfile.py DOCKERFILE BUILD_PKGS RUNTIME_PKGS [CHART_VALUES_UID:GID] [BINARY]

BUILD_PKGS is the space-separated build group of scripts/install-deps.sh; RUNTIME_PKGS the runtime
libraries the final stage must install, no more, no less. With a uid:gid, the image's USER must
match the chart's securityContext. With a built BINARY, every shared library it names (ELF
NEEDED) must come from a runtime package, one apt installs with them, or libc: a library linked later but not installed in the
final stage is caught here, not in a crash-looping pod.

Prints one "ok"/"FAIL" line per check and a closing "N passed, N failed"; exits 1 on any failure.
"""

import json
import os
import re
import shlex
import subprocess
import sys

TOOLCHAIN = {"gcc", "g++", "cc", "clang", "make", "cpp", "binutils", "build-essential",
             "pkg-config", "pkgconf", "autoconf", "automake", "libtool", "cmake", "git"}
# Libraries the C runtime and the sanitizers bring; they are in every Debian image or only in
# the sanitized test build.
BASE_LIB_PKGS = {"libc6", "libgcc-s1", "libasan8", "libubsan1", "libstdc++6"}


def instructions(text):
    """Yields (keyword, argument) with continuation lines joined and comments dropped."""
    joined, buf = [], ""
    for line in text.splitlines():
        s = line.strip()
        if not buf and (not s or s.startswith("#")):
            continue
        if buf and s.startswith("#"):
            continue
        if s.endswith("\\"):
            buf += s[:-1] + " "
            continue
        buf += s
        joined.append(buf)
        buf = ""
    if buf:
        joined.append(buf)
    for ins in joined:
        kw, _, arg = ins.partition(" ")
        yield kw.upper(), arg.strip()


def stages(text):
    out = []
    for kw, arg in instructions(text):
        if kw == "FROM":
            m = re.match(r"^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$", arg, re.I)
            if not m:
                raise ValueError("cannot parse FROM %r" % arg)
            out.append({"image": m.group(1), "name": m.group(2), "ins": []})
        elif not out:
            if kw != "ARG":
                raise ValueError("%s before the first FROM" % kw)
        else:
            out[-1]["ins"].append((kw, arg))
    return out


def apt_packages(stage):
    """The packages named by every `apt-get install` in the stage's RUN instructions."""
    pkgs = []
    for kw, arg in stage["ins"]:
        if kw != "RUN":
            continue
        for cmd in re.split(r"&&|;|\|\|", arg):
            words = shlex.split(cmd)
            words = [w for w in words if "=" not in w or w.startswith("-")]  # drop VAR=x prefixes
            if len(words) >= 2 and words[0] in ("apt-get", "apt") and "install" in words:
                after = words[words.index("install") + 1:]
                pkgs += [w for w in after if not w.startswith("-")]
    return pkgs


def exec_form(arg):
    try:
        v = json.loads(arg)
    except ValueError:
        return None
    return v if isinstance(v, list) and all(isinstance(x, str) for x in v) else None


def needed_libs(binary):
    out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout)


def resolved_paths(binary):
    """soname -> the file the dynamic loader picks on this machine (ldd)."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True)
    return dict(re.findall(r"^\s*(\S+) => (/\S+)", out.stdout, re.M))


def package_of_lib(path):
    """The Debian package that ships the file at path, or None. Tries the path as given, its real
    path, and both with and without /usr (merged-/usr systems record either)."""
    cands = [path, os.path.realpath(path)]
    for c in list(cands):
        cands.append(c[4:] if c.startswith("/usr/") else "/usr" + c)
    for c in cands:
        r = subprocess.run(["dpkg", "-S", c], capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout.splitlines()[0].split(":")[0].split(",")[0].strip()
    return None


def dependency_closure(pkgs):
    """The packages apt installs with pkgs, as this machine's dpkg database records them."""
    seen, todo = set(), list(pkgs)
    while todo and len(seen) < 500:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Depends},${Pre-Depends}", p],
                           capture_output=True, text=True)
        if r.returncode != 0:
            continue
        for alt in r.stdout.split(","):
            name = alt.split("|")[0].strip().split(" ")[0].split(":")[0]
            if name:
                todo.append(name)
    return seen


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    text = open(argv[0], encoding="utf-8").read()
    build_pkgs = argv[1].split()
    runtime_pkgs = argv[2].split()
    uidgid = argv[3] if len(argv) > 3 and argv[3] else None
    binary = argv[4] if len(argv) > 4 and argv[4] else None
    results = []

    def check(desc, ok, detail=""):
        results.append(ok)
        print("%s %s%s" % ("ok  " if ok else "FAIL", desc, (": " + detail) if detail else ""))

    st = stages(text)
    check("two stages", len(st) == 2, "found %d" % len(st))
    if len(st) < 2:
        return 1
    build, final = st[0], st[-1]
    check("build stage is debian:bookworm and named", build["image"] == "debian:bookworm"
          and bool(build["name"]), "FROM %s AS %s" % (build["image"], build["name"]))
    check("final stage is debian:bookworm-slim", final["image"] == "debian:bookworm-slim",
          "FROM %s" % final["image"])

    bp = apt_packages(build)
    check("build stage installs exactly install-deps.sh's build group",
          sorted(bp) == sorted(build_pkgs),
          "Dockerfile %s vs install-deps.sh %s" % (sorted(bp), sorted(build_pkgs)))
    runs = " ".join(a for k, a in build["ins"] if k == "RUN")
    check("build stage runs make", re.search(r"(^|[\s;&])make(\s|$)", runs) is not None)

    fp = apt_packages(final)
    check("final stage installs exactly the runtime libraries", sorted(fp) == sorted(runtime_pkgs),
          "Dockerfile %s vs expected %s" % (sorted(fp), sorted(runtime_pkgs)))
    bad = [p for p in fp if p.endswith("-dev") or p in TOOLCHAIN or p.startswith("gcc-")
           or p.startswith("clang")]
    check("no compiler, build tool or -dev package in the final stage", not bad, str(bad))
    froms = [a for k, a in final["ins"] if k == "COPY" and "--from=" in a]
    check("final stage copies only the binary from the build stage",
          len(froms) == 1 and ("--from=%s" % build["name"]) in froms[0]
          and froms[0].split()[-1] == "/usr/local/bin/sizeup", str(froms))
    final_runs = " ".join(a for k, a in final["ins"] if k == "RUN")
    check("final stage compiles nothing", not re.search(r"\b(make|gcc|cc|clang)\b", final_runs))

    users = [a for k, a in final["ins"] if k == "USER"]
    user = users[-1] if users else ""
    m = re.match(r"^(\d+)(?::(\d+))?$", user)
    check("USER is numeric and non-root", bool(m) and int(m.group(1)) > 0
          and (m.group(2) is None or int(m.group(2)) > 0), "USER %r" % user)
    if uidgid:
        check("USER matches the chart's securityContext", user == uidgid,
              "Dockerfile %r, chart %r" % (user, uidgid))
    kws = [k for k, _ in final["ins"]]
    last_user = len(kws) - 1 - kws[::-1].index("USER") if "USER" in kws else -1
    check("nothing runs after USER as another user", "USER" in kws
          and all(k not in ("RUN", "USER") for k in kws[last_user + 1:]))
    ep = [exec_form(a) for k, a in final["ins"] if k == "ENTRYPOINT"]
    check("ENTRYPOINT [\"/usr/local/bin/sizeup\"] in exec form",
          ep[-1:] == [["/usr/local/bin/sizeup"]], str(ep))
    cmd = [exec_form(a) for k, a in final["ins"] if k == "CMD"]
    check("CMD [\"operator\"]", cmd[-1:] == [["operator"]], str(cmd))

    if binary:
        libs = needed_libs(binary)
        installed = dependency_closure(runtime_pkgs) | BASE_LIB_PKGS
        missing = []
        paths = resolved_paths(binary)
        for lib in libs:
            pkg = package_of_lib(paths[lib]) if lib in paths else None
            if pkg is None or pkg not in installed:
                missing.append("%s (%s)" % (lib, pkg or "no package"))
        check("every library the binary loads is installed in the final stage (%d NEEDED)"
              % len(libs), not missing, ", ".join(missing))

    failed = results.count(False)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
