#!/usr/bin/env bash
# report.html's scale-out chart in headless Chromium, from fixture results (no sweep: the unit
# binary test_output_scale_out --write renders a peaking, a linear and a no-scale-out report):
# the chart is in the rendered DOM with a mark per point, a whisker per measured point, the
# fitted curve, the linear line, the target and (peaking) the peak; contended and skipped points
# are told apart in the legend; no two text boxes of the chart overlap and none leaves the
# chart, as the browser lays them out (getBoundingClientRect); without a scale-out only the
# sentence.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$ROOT/build/asan}
command -v python3 >/dev/null || { echo "python3 is missing (scripts/install-deps.sh test)"; exit 1; }
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "chromium is missing (scripts/install-deps.sh test)"; exit 1; }
gen="$BUILD/tests/test_output_scale_out"
[ -x "$gen" ] || { echo "FAIL $gen is not built (make unit-bins)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$gen" --write "$tmp/out" >/dev/null
# One Chromium run for the three reports (each start costs seconds on a busy host): a page holds
# each report, unchanged, in a same-origin iframe (srcdoc), and its script measures what the
# browser drew in each and writes it into the page, which --dump-dom prints.
python3 - "$tmp/out" "$tmp/probe.html" <<'PY'
import html, sys
out, dst = sys.argv[1], sys.argv[2]
frames = "".join(
    f'<iframe id="{s}" width="1100" height="2600" srcdoc="{html.escape(open(f"{out}/{s}/report.html").read())}"></iframe>'
    for s in ("peaking", "linear", "none"))
probe = r"""<script>
function measure(doc) {
  const svg = doc.getElementById('chart-scale-out');
  const out = {chart: !!svg, none: !!doc.getElementById('scale-out-none')};
  if (!svg) return out;
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  out.svg = box(svg);
  out.texts = [...svg.querySelectorAll('text')].map(t => ({t: t.textContent, b: box(t)}));
  out.points = [...svg.querySelectorAll('.so-point')].map(e => ({
      n: +e.dataset.replicas, b: box(e), contended: e.classList.contains('so-contended')}));
  out.whiskers = [...svg.querySelectorAll('.so-whisker')].map(e => +e.dataset.replicas);
  out.skipped = [...svg.querySelectorAll('.so-skipped')].map(e => +e.dataset.replicas);
  const pl = svg.querySelector('.so-usl');
  out.curve = pl ? [...pl.points].map(p => [p.x, p.y]) : [];
  for (const c of ['so-linear', 'so-target', 'so-peak']) out[c] = !!svg.querySelector('.' + c);
  return out;
}
window.addEventListener('load', () => {
  const res = {};
  for (const f of document.querySelectorAll('iframe')) res[f.id] = measure(f.contentDocument);
  const pre = document.createElement('pre');
  pre.id = 'probe-out';
  pre.textContent = JSON.stringify(res);
  document.body.appendChild(pre);
});
</script>"""
open(dst, "w").write("<!DOCTYPE html><html><body>" + frames + probe + "</body></html>")
PY
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run
       --disable-extensions --user-data-dir="$tmp/profile" --virtual-time-budget=3000)
timeout 60 "$chrome" "${flags[@]}" --window-size=1100,2600 --dump-dom "file://$tmp/probe.html" \
    >"$tmp/probe.dom" 2>"$tmp/probe.log" || { cat "$tmp/probe.log"; exit 1; }

python3 - "$tmp" <<'PY'
import html, json, re, sys
tmp = sys.argv[1]
passed = failed = 0
def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1; print("ok   " + name)
    else:
        failed += 1; print("FAIL " + name + (": " + detail if detail else ""))

dom = open(f"{tmp}/probe.dom").read()
m = re.search(r'<pre id="probe-out">(.*?)</pre>', dom, re.S)
if not m:
    print("FAIL the probe wrote nothing"); sys.exit(1)
res = json.loads(html.unescape(m.group(1)))
def probe(shape):
    return res[shape]

def overlaps(texts):
    bad = []
    for i in range(len(texts)):
        a = texts[i]["b"]
        for j in range(i + 1, len(texts)):
            b = texts[j]["b"]
            if a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5:
                bad.append((texts[i]["t"], texts[j]["t"]))
    return bad

def inside(o):
    s = o["svg"]
    return [t["t"] for t in o["texts"] if t["b"][0] < s[0] - 0.5 or t["b"][2] > s[2] + 0.5
            or t["b"][1] < s[1] - 0.5 or t["b"][3] > s[3] + 0.5]

for shape in ("peaking", "linear"):
    o = probe(shape)
    check(f"{shape}: the chart is rendered", o["chart"])
    if not o["chart"]:
        continue
    pts = sorted(o["points"], key=lambda p: p["n"])
    check(f"{shape}: {len(o['texts'])} text boxes, none overlapping", not overlaps(o["texts"]),
          str(overlaps(o["texts"])))
    check(f"{shape}: every text box inside the chart", not inside(o), str(inside(o)))
    xs = [(p["b"][0] + p["b"][2]) / 2 for p in pts]
    check(f"{shape}: points left to right by replicas", all(a < b for a, b in zip(xs, xs[1:])), str(xs))
    check(f"{shape}: a whisker per measured point",
          sorted(o["whiskers"]) == [p["n"] for p in pts], f"{o['whiskers']} vs {[p['n'] for p in pts]}")
    cx = [p[0] for p in o["curve"]]
    check(f"{shape}: the USL curve drawn left to right ({len(cx)} points)",
          len(cx) > 20 and all(a < b for a, b in zip(cx, cx[1:])))
    check(f"{shape}: the linear line and the target", o["so-linear"] and o["so-target"])
    if shape == "peaking":
        check("peaking: measured 1 2 3 4 5 6, 5 contended, 8 skipped",
              [p["n"] for p in pts] == [1, 2, 3, 4, 5, 6] and
              [p["n"] for p in pts if p["contended"]] == [5] and o["skipped"] == [8],
              f"{pts} {o['skipped']}")
        check("peaking: the peak is marked", o["so-peak"])
        legend = [t["t"] for t in o["texts"]]
        check("peaking: the legend names contended and not measured points",
              "contended" in legend and "not measured" in legend, str(legend))
        ys = [(p["b"][1] + p["b"][3]) / 2 for p in pts if not p["contended"]]
        check("peaking: the points rise with N (y falls)", all(a > b for a, b in zip(ys, ys[1:])), str(ys))
    else:
        check("linear: four points, no peak, nothing contended or skipped",
              len(pts) == 4 and not o["so-peak"] and not o["skipped"] and
              not any(p["contended"] for p in pts))
o = probe("none")
check("none: no chart, the sentence instead", not o["chart"] and o["none"])
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
