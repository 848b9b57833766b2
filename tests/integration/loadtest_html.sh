#!/usr/bin/env bash
# sizeup loadtest --html and the JSON series: an open-loop run of 3.5 s against a server whose
# /slow path sleeps, with a quarter of the requests failing; the series has one point per
# second (the last one half a second), its requests and errors add up to the run's totals, its
# rate follows the schedule; the page renders in headless Chromium with its charts, every SVG is
# well-formed XML, its table of points sums to the same totals, and nothing is fetched from
# outside (screenshot kept in $BUILD/test-logs/).
set -u
. "$ROOT/tests/servers/lib.sh"
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || fail "chromium is missing (scripts/install-deps.sh test)"

srv_start s
P=$SRV_PORT_s
cat >"$SRV_TMP/p.yaml" <<'YAML'
rate: 120
duration: 3500ms
warmup: 1s
requests:
  - { name: ok,   path: /, weight: 3 }
  - { name: e500, path: /status/500, weight: 1 }
YAML
timeout 60 "$SIZEUP" loadtest --url "http://127.0.0.1:$P" --profile "$SRV_TMP/p.yaml" --seed 5 \
    --json --out "$SRV_TMP/r.json" --html "$SRV_TMP/r.html"
rc=$?
[ $rc -eq 99 ] || fail "exit $rc, want 99 (a quarter of the requests are 500s)"
[ -s "$SRV_TMP/r.html" ] || fail "no page written"

flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run
       --disable-extensions --user-data-dir="$SRV_TMP/profile")
shot="${BUILD:-$SRV_TMP}/test-logs/loadtest_html.png"
mkdir -p "$(dirname "$shot")"
timeout 60 "$chrome" "${flags[@]}" --window-size=1000,1400 --screenshot="$shot" \
    "file://$SRV_TMP/r.html" >/dev/null 2>&1 || fail "chromium screenshot"
timeout 60 "$chrome" "${flags[@]}" --dump-dom "file://$SRV_TMP/r.html" >"$SRV_TMP/dom.html" \
    2>/dev/null || fail "chromium dump-dom"

python3 - "$SRV_TMP/r.json" "$SRV_TMP/r.html" "$SRV_TMP/dom.html" "$shot" <<'PY' || fail "series"
import json, os, re, sys
import xml.etree.ElementTree as ET
r = json.load(open(sys.argv[1])); src = open(sys.argv[2]).read(); dom = open(sys.argv[3]).read()
s = r["series"]
assert r["series_interval_s"] == 1, r["series_interval_s"]
assert [p["t"] for p in s] == [0, 1, 2, 3], [p["t"] for p in s]
assert sum(p["requests"] for p in s) == r["requests"], (sum(p["requests"] for p in s), r["requests"])
assert sum(p["errors"] for p in s) == r["failed"], (sum(p["errors"] for p in s), r["failed"])
assert r["failed"] > 0
# 120/s on a fixed schedule: full seconds carry ~120, the last half second ~60 at the same rate.
for p in s[:3]:
    assert 100 <= p["requests"] <= 140, p
assert 40 <= s[3]["requests"] <= 80 and 90 <= s[3]["rps"] <= 150, s[3]
assert all(p["p50_ms"] <= p["p95_ms"] <= p["p99_ms"] for p in s), s
# The page: its charts in the rendered DOM, well-formed, the table adding up, nothing external.
for sid in ("series-rate", "series-latency"):
    assert f'id="{sid}"' in dom, f"{sid} not rendered"
assert 'id="series-delivery"' not in dom, "a delivery chart without streams"
for svg in re.findall(r"<svg.*?</svg>", src, re.S):
    ET.fromstring(svg)
table = re.search(r'<table class="series" id="series-points">(.*?)</table>', src, re.S).group(1)
rows = [re.findall(r"<td>([^<]*)</td>", t) for t in re.findall(r"<tr>(.*?)</tr>", table)]
assert sum(int(c[2]) for c in rows if c) == r["requests"] and sum(int(c[3]) for c in rows if c) == r["failed"]
assert re.search(r'id="total-requests">%d<' % r["requests"], src)
for k, v in re.findall(r'\b(src|href)="([^"]*)"', src):
    assert v.startswith("#"), f"external reference {k}={v}"
assert "<script" not in src, "the page has a script"
size = os.path.getsize(sys.argv[4])
assert size > 20000, f"screenshot only {size} bytes"
print("series: %s requests per second, %d total, %d errors; page rendered (%d bytes of screenshot)"
      % ([p["requests"] for p in s], r["requests"], r["failed"], size))
PY
