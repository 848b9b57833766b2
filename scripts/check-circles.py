#!/usr/bin/env python3
"""Call circles between the .c files of one room (a folder of src/), from the objects' symbols.

Usage: check-circles.py OBJ_DIR SRC_DIR LIMIT   (scripts/check-structure.sh runs it)

For each room, file A -> file B when A's object refers to a symbol B's object defines: `nm`
lists what each object defines (T, D, B, R, C, W: functions and data, weak ones included) and
what it leaves undefined (U). A circle is a strongly connected component of that graph with more
than one file (Tarjan). Every circle is printed with its files, then the count per room and in
all; the exit status is 1 when the total is above LIMIT, or when a .c file of SRC_DIR has no
object (or one older than its source) in OBJ_DIR, since a stale object would count yesterday's
calls.

nm was chosen over cflow because the objects are what the compiler made of the code, macros and
all, with no C parser of our own to be wrong. What it does not see: a call through a function
pointer (a vtable such as platform.h's or sock.h's, a callback) and a call to a static inline
function of a header, neither of which leaves an undefined symbol; and a call the compiler
inlined away within one file, which cannot make a circle between files anyway.
"""
import os
import subprocess
import sys

DEFINED = set("TDBRCGSVW")  # external definitions (lower case: file-local)


def symbols(obj):
    """(defined, undefined) external symbol names of one object."""
    out = subprocess.run(["nm", "-P", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind in DEFINED:
            defined.add(name)
    return defined, undefined


def circles(graph):
    """The strongly connected components with more than one node (Tarjan, iterative)."""
    index, low, on, stack, found = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def main():
    obj_dir, src_dir, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rooms = sorted(d for d in os.listdir(src_dir) if os.path.isdir(os.path.join(src_dir, d)))
    missing, per_room, total = [], [], 0
    for room in rooms:
        files = sorted(f[:-2] for f in os.listdir(os.path.join(src_dir, room)) if f.endswith(".c"))
        defs, refs = {}, {}
        for f in files:
            src = os.path.join(src_dir, room, f + ".c")
            obj = os.path.join(obj_dir, room, f + ".o")
            if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(src):
                missing.append(obj)
                continue
            defs[f], refs[f] = symbols(obj)
        owner = {}
        for f, names in defs.items():
            for n in names:
                owner[n] = f
        graph = {f: set() for f in defs}
        for f, names in refs.items():
            for n in names:
                if n in owner and owner[n] != f:
                    graph[f].add(owner[n])
        found = circles(graph)
        for comp in found:
            print("structure: circle in src/%s: %s" % (room, " <-> ".join(c + ".c" for c in comp)))
        per_room.append("%s %d" % (room, len(found)))
        total += len(found)
    print("structure: call circles between the .c files of one room (nm): %d (limit %d; %s)"
          % (total, limit, ", ".join(per_room)))
    rc = 0
    if missing:
        print("structure: FAIL objects missing or older than their source (run make): %s"
              % ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else ""))
        rc = 1
    if total > limit:
        print("structure: FAIL %d call circles is over the limit %d" % (total, limit))
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
