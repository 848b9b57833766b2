#!/usr/bin/env bash
# report.html from a real (short) sweep, rendered in headless Chromium: the page must load, the
# three inline SVG charts must be in the rendered DOM with a bar per measured variant, the table
# must have a row per variant, the findings must be there, each variant's series (throughput and
# latency over time) must be drawn and its points must add up to the variant's requests in
# results.json, every SVG must be well-formed XML, nothing may be fetched from outside, and a
# screenshot is kept in $BUILD/test-logs/.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
command -v python3 >/dev/null || { echo "python3 is missing (scripts/install-deps.sh test)"; exit 1; }
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "chromium is missing (scripts/install-deps.sh test)"; exit 1; }
tmp=$(mktemp -d)
marker="sizeup-sweep-html-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
port=$(free_port)

"$SIZEUP" sweep --configs "1@0.25/128Mi 1@0.5/128Mi 2@0.5/128Mi" --port "$port" --load fixed --users 4 \
    --duration 2s --warmup 0s --out "$tmp/out" -- \
    env WORK=20000 python3 "$ROOT/tests/integration/cpu_server.py" "$marker" \
    >"$tmp/sweep.out" 2>"$tmp/sweep.err" || { cat "$tmp/sweep.err"; exit 1; }
html="$tmp/out/report.html"
[ -s "$html" ] || { echo "no report.html"; exit 1; }

flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run
       --disable-extensions --user-data-dir="$tmp/profile")
shot="${BUILD:-$tmp}/test-logs/sweep_html-report.png"
mkdir -p "$(dirname "$shot")"
timeout 60 "$chrome" "${flags[@]}" --window-size=1100,1900 --screenshot="$shot" \
    "file://$html" >"$tmp/shot.log" 2>&1 || { cat "$tmp/shot.log"; exit 1; }
timeout 60 "$chrome" "${flags[@]}" --dump-dom "file://$html" >"$tmp/dom.html" 2>"$tmp/dom.log" ||
    { cat "$tmp/dom.log"; exit 1; }
[ -s "$shot" ] || { echo "no screenshot"; exit 1; }

python3 - "$tmp/dom.html" "$html" "$shot" "$tmp/out/results.json" <<'PY'
import json, os, re, sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

dom, src, shot, results = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]

class Walk(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.svgs, self.rows, self.findings, self.title = [], {}, 0, 0, ""
        self.in_title = False
        self.table = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svgs[a.get("id")] = 0
            self.stack.append(a.get("id"))
        elif tag == "rect" and self.stack and "bar" in (a.get("class") or ""):
            self.svgs[self.stack[-1]] += 1
        elif tag == "table":
            self.table = a.get("id")
        elif tag == "tr" and self.table == "results":
            self.rows += 1
        elif tag == "li":
            self.findings += 1
        elif tag == "title" and not self.stack:
            self.in_title = True
        for k, v in attrs:
            if k in ("src", "href") and v and not v.startswith("#"):
                raise SystemExit(f"external reference in the page: {k}={v}")
    def handle_endtag(self, tag):
        if tag == "svg" and self.stack:
            self.stack.pop()
        if tag == "title":
            self.in_title = False
    def handle_data(self, data):
        if self.in_title:
            self.title += data

w = Walk()
w.feed(open(dom, encoding="utf-8").read())
n = 3  # variants
assert "sizing results" in w.title, f"page title missing: {w.title!r} (page did not load?)"
for sid, bars in (("chart-throughput", n), ("chart-p95", n), ("chart-latency", 3 * n)):
    assert sid in w.svgs, f"{sid} not in the rendered DOM"
    assert w.svgs[sid] == bars, f"{sid}: {w.svgs[sid]} bars, want {bars}"
assert w.rows == n + 1, f"table rows {w.rows}, want {n + 1}"
assert w.findings >= 1, "no findings rendered"
# Every inline SVG is well-formed XML on its own (a broken chart is a broken page).
text = open(src, encoding="utf-8").read()
svgs = re.findall(r"<svg.*?</svg>", text, re.S)
for s in svgs:
    ET.fromstring(s)
# Numbers over time: two charts per variant, and each variant's points add up to its requests.
for i in range(n):
    for part in ("rate", "latency"):
        assert f"series-{i}-{part}" in w.svgs, f"series-{i}-{part} not in the rendered DOM"
assert len(svgs) == 3 + 2 * n, len(svgs)
res = json.load(open(results))
for i in range(n):
    table = re.search(r'<table class="series" id="series-%d-points">(.*?)</table>' % i, text, re.S)
    assert table, f"no points table for variant {i}"
    cells = [re.findall(r"<td>([^<]*)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", table.group(1))]
    got = sum(int(c[2]) for c in cells if c)
    rows = res.get("variants") or res.get("rows")
    want = rows[i]["requests"] if "requests" in rows[i] else rows[i]["load"]["requests"]
    assert got == want, f"variant {i}: points add up to {got} requests, results.json says {want}"
# A rendered page, not a blank one: the PNG holds real content.
size = os.path.getsize(shot)
assert size > 30000, f"screenshot only {size} bytes: blank page?"
print(f"rendered: 3 charts, {w.rows - 1} rows, {w.findings} list items; screenshot {size} bytes")
PY
echo "screenshot: $shot"
