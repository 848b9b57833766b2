#!/usr/bin/env python3
"""Talk to a running fake API server's control endpoints.

    fakectl.py --dir DIR METHOD PATH [JSON]

e.g.  fakectl.py --dir DIR POST /fake/faults '{"type":"error","code":503,"count":2}'
      fakectl.py --dir DIR GET /fake/log
Prints the JSON answer; exits 1 on an HTTP error.
"""

import argparse
import http.client
import json
import os
import ssl
import sys


def call(d, method, path, body=None):
    with open(os.path.join(d, "ready")) as f:
        port = int(f.read().strip())
    with open(os.path.join(d, "control-token")) as f:
        token = f.read().strip()
    ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.crt"))
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)
    data = None if body is None else (body if isinstance(body, str) else json.dumps(body))
    conn.request(method, path, body=data, headers={"Authorization": "Bearer " + token,
                                                    "Content-Type": "application/json"})
    r = conn.getresponse()
    out = r.read()
    conn.close()
    return r.status, json.loads(out or b"null")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("method")
    ap.add_argument("path")
    ap.add_argument("body", nargs="?")
    a = ap.parse_args()
    code, out = call(a.dir, a.method.upper(), a.path, a.body)
    print(json.dumps(out, indent=1, sort_keys=True))
    sys.exit(0 if code < 400 else 1)


if __name__ == "__main__":
    main()
