#!/usr/bin/env bash
# report.html's over-time charts: the step labels of a capacity search never overlap. Two pages:
# a timeline of 16 steps with long labels (written by the unit test test_report, the same
# renderer, so many labels compete for the room), and the report.html of a short capacity sweep.
# A copy of each page with a measuring script added is loaded in headless Chromium, which lays
# the labels out in the page's own fonts and styles, measures each label's box (getBBox) per
# chart and writes every overlap into the DOM; --dump-dom reads it back. The capacity chart's
# caption says what its whisker is.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
command -v python3 >/dev/null || { echo "python3 is missing (scripts/install-deps.sh test)"; exit 1; }
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "chromium is missing (scripts/install-deps.sh test)"; exit 1; }
tmp=$(mktemp -d)
marker="sizeup-chart-labels-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
port=$(free_port)
cat >"$tmp/p.yaml" <<'YAML'
users: 2
search: { warmup: 0s, window: 300ms, precision: 2%, max_steps: 10, repeats: 3, budget: 60s }
slo: { p95: 200ms }
YAML
"$SIZEUP" sweep --configs "1@0.5/128Mi" --port "$port" --profile "$tmp/p.yaml" --out "$tmp/out" \
    -- env WORK=20000 python3 "$ROOT/tests/integration/cpu_server.py" "$marker" \
    >"$tmp/sweep.out" 2>"$tmp/sweep.err" || { tail -20 "$tmp/sweep.err"; exit 1; }
html="$tmp/out/report.html"
[ -s "$html" ] || { echo "no report.html"; exit 1; }

# The page as written, plus a script that measures: every chart's text.segl labels (the segment
# labels over time), pairwise, in the SVG's own coordinates.
measure() { # PAGE OUT: the page laid out in Chromium, its label check into OUT
python3 - "$1" "$tmp/measure.html" <<'PY'
import sys
page = open(sys.argv[1]).read()
script = """<script>
const out = [];
let n = 0;
for (const svg of document.querySelectorAll('svg')) {
  const boxes = [...svg.querySelectorAll('text.segl')].map(t => [t.textContent, t.getBBox()]);
  n += boxes.length;
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const [la, a] = boxes[i], [lb, b] = boxes[j];
      if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height)
        out.push(svg.id + ': "' + la + '" overlaps "' + lb + '"');
    }
}
const pre = document.createElement('pre');
pre.id = 'label-check';
pre.textContent = JSON.stringify({labels: n, overlaps: out});
document.body.appendChild(pre);
</script>"""
assert "<script" not in page, "report.html must stay script-free"
open(sys.argv[2], "w").write(page.replace("</body>", script + "</body>"))
PY
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run
       --disable-extensions --user-data-dir="$tmp/profile")
timeout 60 "$chrome" "${flags[@]}" --window-size=1100,1900 --dump-dom "file://$tmp/measure.html" \
    >"$2" 2>"$tmp/dom.log" || { cat "$tmp/dom.log"; exit 1; }
}
SIZEUP_LABELS_PAGE="$tmp/many.html" "$BUILD/tests/test_report" >/dev/null 2>&1 ||
    { echo "test_report failed"; exit 1; }
measure "$tmp/many.html" "$tmp/many.dom"
measure "$html" "$tmp/dom.html"
python3 - "$tmp/dom.html" "$html" "$tmp/out/results.json" "$tmp/many.dom" <<'PY'
import html, json, re, sys
def check(path):
    m = re.search(r'<pre id="label-check">(.*?)</pre>', open(path).read(), re.S)
    assert m, f"{path}: the measuring script did not run"
    res = json.loads(html.unescape(m.group(1)))
    for o in res["overlaps"]:
        print("FAIL overlap:", o)
    assert not res["overlaps"], f"{len(res['overlaps'])} overlapping labels"
    return res["labels"]
page = open(sys.argv[2]).read()
steps = len(json.load(open(sys.argv[3]))["variants"][0]["slo_capacity"]["steps"])
many = check(sys.argv[4])
assert many >= 10, f"only {many} labels drawn over 2 charts of 16 steps"
res = {"labels": check(sys.argv[1])}
assert res["labels"] >= 2, f"only {res['labels']} step labels drawn for {steps} steps"
cap = re.search(r"<figcaption>Capacity within the SLO per variant[^<]*</figcaption>", page)
assert cap, "no capacity chart caption"
assert "95% interval of the repeats)" not in cap.group(0), "the whisker caption says only the repeats"
assert "bracket" in cap.group(0), "the whisker caption does not name the search's bracket"
print(f"chart_labels: 16 long-labelled steps: {many} labels drawn over 2 charts; the sweep's "
      f"{steps} steps: {res['labels']} labels; none overlapping")
PY
echo "PASS chart_labels"
