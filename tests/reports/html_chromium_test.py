#!/usr/bin/python3
"""Renders bundlefit's --html pages in headless Chromium and checks what is drawn.

The pages come from the real commands (plan, fit, pick) on the reference
models; the expected figures come from the same commands' --json output. The
page is loaded through chromedriver (WebDriver over HTTP, no Selenium needed)
so the checks read the *rendered* geometry (getBoundingClientRect, hit
testing) and a screenshot's pixels, not just the markup. Without
chromedriver, the checks that need only the DOM run on `chromium --dump-dom`.

Exit 0: pass; 1: a check failed; 77: chromium is not installed (ctest SKIP).
"""
import argparse
import base64
import html.parser
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
import urllib.request
import zlib

FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print("FAIL: " + message)


def run(bundlefit, args, expect=0):
    result = subprocess.run([bundlefit] + args, capture_output=True, text=True)
    if result.returncode != expect:
        sys.exit(f"bundlefit {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result.stdout


def thousands(n):
    return f"{n:,}"


# --- WebDriver over plain HTTP ------------------------------------------------

class Browser:
    def __init__(self, chromium, driver):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen([driver, f"--port={self.port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        for _ in range(100):
            try:
                if self.call("GET", "/status")["value"].get("ready"):
                    break
            except OSError:
                pass
            time.sleep(0.1)
        options = {"binary": chromium,
                   "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                            "--window-size=1280,3000", "--force-device-scale-factor=1"]}
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome",
                                                 "goog:chromeOptions": options}}}
        self.session = self.call("POST", "/session", caps)["value"]["sessionId"]

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())

    def open(self, path):
        self.call("POST", f"/session/{self.session}/url", {"url": "file://" + os.path.abspath(path)})

    def js(self, script, *args):
        return self.call("POST", f"/session/{self.session}/execute/sync",
                         {"script": script, "args": list(args)})["value"]

    def screenshot(self):
        return base64.b64decode(self.call("GET", f"/session/{self.session}/screenshot")["value"])

    def close(self):
        try:
            self.call("DELETE", f"/session/{self.session}")
        finally:
            self.proc.terminate()
            self.proc.wait(timeout=10)


# --- A PNG reader for the screenshot (8-bit RGB/RGBA, not interlaced) -----------

def decode_png(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and color in (2, 6) and interlace == 0, "unsupported PNG"
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    channels = 4 if color == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous, i = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = previous[x]
            c = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        previous = line
    return width, height, channels, rows


# --- The checks ------------------------------------------------------------------

TIMELINE_JS = """
const svg = document.querySelector('svg.timeline');
const box = svg.getBoundingClientRect();
const rects = [...svg.querySelectorAll('rect.buffer')].map(r => {
  const b = r.getBoundingClientRect();
  const cx = b.left + b.width / 2, cy = b.top + b.height / 2;
  return {tensor: r.dataset.tensor, title: r.querySelector('title').textContent,
          left: b.left - box.left, top: b.top - box.top, width: b.width, height: b.height,
          hit: b.height >= 2 && document.elementFromPoint(cx, cy) === r};
});
const line = svg.querySelector('line.lower-bound').getBoundingClientRect();
const d = svg.dataset;
return {rects: rects, lineY: line.top + line.height / 2 - box.top, lineTop: line.top,
        pageLineY: line.top + line.height / 2 + window.scrollY,
        left: +d.plotLeft, top: +d.plotTop, width: +d.plotWidth, height: +d.plotHeight,
        steps: +d.steps, yMax: +d.yMax, lowerBound: +d.lowerBound, arena: +d.arena,
        svgWidth: box.width, scripts: document.scripts.length,
        layerRows: document.querySelectorAll('table.layers tbody tr').length};
"""

BARS_JS = """
const svg = document.querySelector('svg.regions');
if (!svg) return null;
const width = +svg.dataset.barWidth;
return [...svg.querySelectorAll('g.region-bar')].map(g => ({
  region: g.dataset.region, used: +g.dataset.used, capacity: +g.dataset.capacity,
  capacityWidth: g.querySelector('rect.capacity').getBoundingClientRect().width,
  usedWidth: g.querySelector('rect.used').getBBox().width, barWidth: width,
  items: g.querySelectorAll('rect.item').length}));
"""

LABELS_JS = """
const svg = document.querySelector('svg.timeline');
const rects = {};
svg.querySelectorAll('rect.buffer').forEach(r => rects[r.dataset.tensor] = r.getBoundingClientRect());
return [...svg.querySelectorAll('text.buffer-label')].map(t => {
  const b = t.getBoundingClientRect(), r = rects[t.dataset.tensor];
  return {tensor: t.dataset.tensor, text: t.textContent, width: b.width, height: b.height,
          inside: !!r && b.left >= r.left - 0.5 && b.right <= r.right + 0.5 &&
                  b.top >= r.top - 0.5 && b.bottom <= r.bottom + 0.5};
});
"""

LEGEND_JS = """
const legend = document.querySelector('div.legend');
if (!legend) return null;
const fills = new Set([...document.querySelectorAll('svg.regions rect.item')]
                      .map(r => getComputedStyle(r).fill));
return [...legend.querySelectorAll('span.legend-item')].map(item => {
  const swatch = item.querySelector('span.swatch');
  const b = swatch.getBoundingClientRect();
  return {text: item.textContent, colour: getComputedStyle(swatch).backgroundColor,
          drawn: b.width > 0 && b.height > 0, usedInBars: fills.has(getComputedStyle(swatch).backgroundColor)};
});
"""

VARIANTS_JS = """
return [...document.querySelectorAll('table.variants tbody tr')].map(tr => ({
  best: tr.classList.contains('best'), cells: [...tr.cells].map(td => td.textContent)}));
"""


def check_self_contained(path):
    text = open(path, encoding="utf-8").read()
    check("<script" not in text, f"{path}: has a script")
    check("<link" not in text and " src=" not in text, f"{path}: loads an external resource")
    stripped = text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    check("http://" not in stripped and "https://" not in stripped, f"{path}: refers to the network")
    check(text.startswith("<!DOCTYPE html>"), f"{path}: not an HTML document")


def expected_tooltip(buffer, step_of):
    first = buffer.get("first", step_of.get(buffer["producer"], 0))
    last = buffer.get("last", first)
    return (f"{buffer['name']}, producer {buffer['producer']}, {thousands(buffer['size'])} bytes "
            f"at offset {thousands(buffer['offset'])}, steps {first}-{last}")


def check_timeline(browser, page, memory, label):
    browser.open(page)
    t = browser.js(TIMELINE_JS)
    buffers = memory["buffers"]
    step_of = {layer["name"]: layer["step"] for layer in memory["layers"]}
    check(len(t["rects"]) == len(buffers),
          f"{label}: {len(t['rects'])} buffer rectangles drawn, plan has {len(buffers)} buffers")
    check(t["scripts"] == 0, f"{label}: page has scripts")
    check(t["layerRows"] == len(memory["layers"]),
          f"{label}: {t['layerRows']} layer rows, plan has {len(memory['layers'])} layers")
    arena, bound = memory["sizes"]["activations"], memory["activations_lower_bound"]
    y_max = max(arena, bound, 1)
    check(t["yMax"] == y_max and t["lowerBound"] == bound, f"{label}: axis scale {t['yMax']}")
    expected_line = t["top"] + t["height"] * (1 - bound / y_max)
    check(abs(t["lineY"] - expected_line) <= 1.5,
          f"{label}: lower-bound line drawn at y={t['lineY']:.1f}, expected {expected_line:.1f}")
    by_name = {r["tensor"]: r for r in t["rects"]}
    steps = max(1, len(memory["layers"]))
    hits = 0
    for buffer in buffers:
        rect = by_name.get(buffer["name"])
        if rect is None:
            check(False, f"{label}: no rectangle for {buffer['name']}")
            continue
        check(rect["title"] == expected_tooltip(buffer, step_of),
              f"{label}: tooltip '{rect['title']}' != '{expected_tooltip(buffer, step_of)}'")
        first = buffer.get("first", step_of.get(buffer["producer"], 0))
        last = buffer.get("last", first)
        top = t["top"] + t["height"] * (1 - (buffer["offset"] + buffer["size"]) / y_max)
        height = t["height"] * buffer["size"] / y_max
        left = t["left"] + t["width"] * first / steps
        width = t["width"] * (last + 1 - first) / steps
        # Rendered box includes half the 0.5 px stroke on each side.
        for what, got, want in (("top", rect["top"], top), ("left", rect["left"], left),
                                ("width", rect["width"], width),
                                ("height", rect["height"], max(height, 0.5))):
            check(abs(got - want) <= 1.5,
                  f"{label}: {buffer['name']} {what} {got:.1f}, expected {want:.1f}")
        hits += rect["hit"]
    check(hits > 0, f"{label}: no buffer rectangle is on top where it is drawn")
    check_labels(browser, memory, label)
    return t


def check_labels(browser, memory, label):
    """Boxes big enough carry their tensor's name (and size) inside them."""
    labels = browser.js(LABELS_JS)
    sizes = {b["name"]: b["size"] for b in memory["buffers"]}
    check(len(labels) > 0, f"{label}: no buffer box is labelled")
    for text in labels:
        check(text["tensor"] in sizes, f"{label}: label for unknown tensor {text['tensor']}")
        check(text["text"] in (text["tensor"], f"{text['tensor']} {thousands(sizes.get(text['tensor'], 0))} B"),
              f"{label}: label '{text['text']}' for {text['tensor']}")
        check(text["width"] > 0 and text["inside"], f"{label}: label '{text['text']}' drawn outside its box")
    summary = browser.js("return document.querySelector('h2 + p.summary').textContent;")
    scratch = sum(1 for b in memory["buffers"] if b.get("scratch"))
    words = f"{len(memory['buffers']) - scratch} activation buffers" + (
        f" + {scratch} kernel scratch" if scratch else "")
    check(words in summary, f"{label}: timeline summary '{summary}' does not say '{words}'")


def check_legend(browser, report, label):
    """The Flash/RAM bars' legend names what each colour holds."""
    legend = browser.js(LEGEND_JS)
    whats = []
    for region in report["regions"]:
        for item in region["items"]:
            if item["what"] not in whats:
                whats.append(item["what"])
    check(legend is not None, f"{label}: no legend under the Flash/RAM bars")
    texts = [entry["text"] for entry in legend or []]
    check(texts[:len(whats)] == whats and texts[len(whats):] ==
          ["free", "used (outline; red: over capacity)"], f"{label}: legend {texts}, expected {whats}")
    for entry in (legend or [])[:len(whats)]:
        check(entry["drawn"], f"{label}: legend swatch for '{entry['text']}' not drawn")
    check(any(entry["usedInBars"] for entry in legend or []),
          f"{label}: no legend colour is used in the bars")


def check_lower_bound_pixels(browser, t, label):
    """The dashed red lower-bound line is in the screenshot at its row."""
    browser.js("window.scrollTo(0, arguments[0] - 200);", t["pageLineY"])
    row_in_view = browser.js(
        "const l = document.querySelector('svg.timeline line.lower-bound')"
        ".getBoundingClientRect(); return l.top + l.height / 2;")
    width, height, channels, rows = decode_png(browser.screenshot())
    y = int(round(row_in_view))
    red = 0
    for yy in (y - 1, y, y + 1):
        if 0 <= yy < height:
            line = rows[yy]
            for x in range(width):
                r, g, b = line[x * channels:x * channels + 3]
                red += r > 180 and g < 60 and b < 60
    check(red > 100, f"{label}: only {red} red pixels on the lower-bound line's row {y}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bundlefit", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--tmp", required=True)
    args = parser.parse_args()

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP: chromium is not installed (Debian packages chromium chromium-driver; "
              "scripts/install-deps.sh installs them)")
        return 77
    driver = shutil.which("chromedriver")
    os.makedirs(args.tmp, exist_ok=True)
    model = lambda name: os.path.join(args.models, name + ".onnx")
    out = lambda name: os.path.join(args.tmp, name)

    # Pages and the JSON that says what they must show.
    run(args.bundlefit, ["plan", model("lenet"), "--device", "rt1060", "--html", out("plan.html"),
                         "--json", out("plan.json")])
    run(args.bundlefit, ["plan", model("branchy"), "--html", out("branchy.html"),
                         "--json", out("branchy.json")])
    fit = json.loads(run(args.bundlefit, ["fit", model("lenet"), "--device", "rt1060", "--html",
                                          out("fit.html"), "--json"]))
    nofit = json.loads(run(args.bundlefit, ["fit", model("lenet"), "--device", "lpc55s69",
                                            "--html", out("nofit.html"), "--json"], expect=3))
    pick = json.loads(run(args.bundlefit, ["pick", model("ds_cnn"), "--device", "rt685", "--html",
                                           out("pick.html"), "--json"]))
    inspect = json.loads(run(args.bundlefit, ["inspect", model("lenet"), "--html", out("inspect.html"),
                                              "--json"]))
    plan = json.load(open(out("plan.json")))
    branchy = json.load(open(out("branchy.json")))
    for page in ("plan.html", "branchy.html", "fit.html", "nofit.html", "pick.html", "inspect.html"):
        check_self_contained(out(page))

    if not driver:
        print("note: chromedriver missing; checking the DOM from chromium --dump-dom only")
        return dump_dom_checks(chromium, out, plan, fit)

    browser = Browser(chromium, driver)
    try:
        t = check_timeline(browser, out("plan.html"), plan, "plan lenet")
        check_lower_bound_pixels(browser, t, "plan lenet")
        check_timeline(browser, out("branchy.html"), branchy, "plan branchy")
        for page, report, label in ((out("fit.html"), fit, "fit lenet rt1060"),
                                    (out("nofit.html"), nofit, "fit lenet lpc55s69")):
            check_timeline(browser, page, plan, label)
            bars = browser.js(BARS_JS)
            check(bars is not None and len(bars) == len(report["regions"]),
                  f"{label}: {bars and len(bars)} region bars, part has {len(report['regions'])}")
            for bar, region in zip(bars or [], report["regions"]):
                check(bar["region"] == region["name"] and bar["used"] == region["used"] and
                      bar["capacity"] == region["capacity"], f"{label}: bar {bar} vs {region}")
                want = bar["barWidth"] * min(1.0, region["used"] / region["capacity"])
                check(abs(bar["usedWidth"] - want) <= 1.0,
                      f"{label}: {region['name']} used bar {bar['usedWidth']:.1f} px, expected {want:.1f}")
                check(bar["items"] >= (1 if region["used"] else 0),
                      f"{label}: {region['name']} shows none of what it holds")
            over = browser.js("return document.querySelectorAll('g.region-bar.over').length;")
            check((over > 0) == any(r["used"] > r["capacity"] for r in report["regions"]),
                  f"{label}: over-capacity marking")
            check_legend(browser, report, label)
            verdict = browser.js("return document.querySelector('.verdict').textContent;")
            check(verdict == ("verdict: FITS" if report["fits"] else "verdict: DOES NOT FIT"),
                  f"{label}: verdict '{verdict}'")
        browser.open(out("pick.html"))
        rows = browser.js(VARIANTS_JS)
        check(len(rows) == len(pick["candidates"]),
              f"pick: {len(rows)} variant rows, {len(pick['candidates'])} candidates")
        for row, candidate in zip(rows, pick["candidates"]):
            check(row["best"] == candidate["best"] and row["cells"][1] == candidate["variant"] and
                  row["cells"][2] == candidate["weights"] and
                  row["cells"][3] == thousands(candidate["flash"]),
                  f"pick: row {row['cells']} vs {candidate}")
        check(browser.js("return document.querySelectorAll('svg.regions g.region-bar').length;") > 0,
              "pick: no Flash/RAM bars for the chosen build")
        # A command's own table (inspect): every node, then the total row.
        browser.open(out("inspect.html"))
        names = browser.js("return [...document.querySelectorAll('table.report tbody tr')]"
                           ".map(tr => tr.cells[0].textContent);")
        check(names == [n["name"] for n in inspect["nodes"]] + ["total"],
              f"inspect: table rows {names}")
    finally:
        browser.close()
    return report_result()


class DomCollector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.elements, self.titles, self._title_of = [], [], None
        self._stack = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.elements.append((tag, attrs))
        self._stack.append((tag, attrs))
        if tag == "title" and len(self._stack) > 1:
            self._title_of = self._stack[-2]
            self.titles.append([self._title_of, ""])

    def handle_endtag(self, tag):
        if self._stack:
            self._stack.pop()
        if tag == "title":
            self._title_of = None

    def handle_data(self, data):
        if self._title_of is not None:
            self.titles[-1][1] += data


def dump_dom_checks(chromium, out, plan, fit):
    for page, regions in ((out("plan.html"), None), (out("fit.html"), fit["regions"])):
        dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                              "file://" + os.path.abspath(page)],
                             capture_output=True, text=True, timeout=120).stdout
        collector = DomCollector()
        collector.feed(dom)
        rects = [a for t, a in collector.elements if t == "rect" and "buffer" in a.get("class", "")]
        check(len(rects) == len(plan["buffers"]), f"{page}: {len(rects)} buffer rects")
        svg = next(a for t, a in collector.elements if t == "svg" and a.get("class") == "timeline")
        line = next(a for t, a in collector.elements if t == "line" and a.get("class") == "lower-bound")
        bound, y_max = plan["activations_lower_bound"], max(plan["sizes"]["activations"], 1)
        want = float(svg["data-plot-top"]) + float(svg["data-plot-height"]) * (1 - bound / y_max)
        check(abs(float(line["y1"]) - want) < 0.01, f"{page}: lower-bound y {line['y1']} vs {want}")
        step_of = {layer["name"]: layer["step"] for layer in plan["layers"]}
        titles = {a.get("data-tensor"): text for (t, a), text in collector.titles if t == "rect"}
        for buffer in plan["buffers"]:
            check(titles.get(buffer["name"]) == expected_tooltip(buffer, step_of),
                  f"{page}: tooltip of {buffer['name']}")
        if regions is not None:
            bars = [a for t, a in collector.elements if t == "g" and "region-bar" in a.get("class", "")]
            check(len(bars) == len(regions), f"{page}: {len(bars)} region bars")
    return report_result()


def report_result():
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print("html_chromium_test: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
