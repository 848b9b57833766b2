#!/usr/bin/env python3
"""Kills a process at a precise point of its conversation with the fake API server.

    killer.py --dir FAKE_DIR --pid PID --user USER --since SEQ --at POINT [--timeout S]

POINT is VERB:RESOURCE:NAME#N[+DELAY]: the N-th request by USER since SEQ with that verb
(`write` = create/update/patch/delete), resource (`pods` also matches its subresources,
`pods/resize` only that one) and name (`*` = any) is answered, DELAY
seconds pass, then PID gets SIGKILL. The fake's request log is polled every 20 ms over one
connection. Prints what it matched and when; exits 0 once it killed, 1 if the point was not
reached within the timeout (or the process ended first), 2 on bad usage.
"""
import argparse
import http.client
import json
import os
import signal
import ssl
import sys
import time

WRITES = ("create", "update", "patch", "delete")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--user", required=True)
    ap.add_argument("--since", type=int, default=0)
    ap.add_argument("--at", required=True)
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    spec, _, delay = a.at.partition("+")
    what, _, nth = spec.partition("#")
    try:
        verb, resource, name = what.split(":")
        nth = int(nth or 1)
        delay = float(delay or 0)
    except ValueError:
        print("bad point %r" % a.at)
        return 2
    with open(os.path.join(a.dir, "ready")) as f:
        port = int(f.read().strip())
    with open(os.path.join(a.dir, "control-token")) as f:
        token = f.read().strip()
    ctx = ssl.create_default_context(cafile=os.path.join(a.dir, "ca.crt"))
    ctx.check_hostname = False
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
    hdrs = {"Authorization": "Bearer " + token}
    seq, seen, end = a.since, 0, time.monotonic() + a.timeout
    while time.monotonic() < end:
        try:
            os.kill(a.pid, 0)
        except ProcessLookupError:
            print("process %d ended before %s" % (a.pid, a.at))
            return 1
        conn.request("GET", "/fake/log?since=%d" % seq, headers=hdrs)
        entries = json.loads(conn.getresponse().read())["entries"]
        for e in entries:
            seq = max(seq, e["seq"])
            if e.get("user") != a.user:
                continue
            v = e.get("verb", "")
            if not (v == verb or (verb == "write" and v in WRITES)):
                continue
            res = e.get("resource", "")
            if e.get("sub"):
                res += "/" + e["sub"]
            if resource != "*" and res != resource and e.get("resource") != resource:
                continue
            if name != "*" and e.get("name", "") != name:
                continue
            seen += 1
            if seen == nth:
                if delay:
                    time.sleep(delay)
                try:
                    os.kill(a.pid, signal.SIGKILL)
                except ProcessLookupError:
                    print("process %d ended before the kill" % a.pid)
                    return 1
                print("killed %d at %s (request seq %d, %s %s/%s -> %d, +%.1f s)" % (
                    a.pid, a.at, e["seq"], v, e.get("resource"), e.get("name", ""),
                    e.get("code", 0), delay))
                return 0
        time.sleep(0.02)
    print("point %s not reached in %.0f s (%d of %d matches)" % (a.at, a.timeout, seen, nth))
    return 1


if __name__ == "__main__":
    sys.exit(main())
