#!/usr/bin/env python3
"""The training report page's test: loads a filled report (viz/report.html with its data) in
headless chromium and checks it against the JSON embedded in the page itself.

    python3 tests/pages/check_report_page.py PAGE.html [PAGE.html ...]
    python3 tests/pages/check_report_page.py --samples   # sample_report.py's pages, in a temp dir

Exit 0 when every check passes; 1 with one line per failed check; 77 when chromium is absent.
The expectations (which charts, which curves, how many points each) are computed here from the
page's own data with the rules the page documents: a training record gives a series per key
(loss also a smoothed one), an evaluation record a series per split under each metric, a value
that is not a finite number is skipped, a record with model_step (the best model evaluated again
at the end) is no point of a curve, and a path draws at most 2,000 points.
"""
import datetime
import json
import math
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser  # noqa: E402

MAX_DRAWN = 2000
NOT_TRAIN_METRIC = {"step", "elapsed_seconds"}
NOT_EVAL_METRIC = {"step", "split", "model_step", "elapsed_seconds"}
DATA_RE = re.compile(r'<script id="heed-data" type="application/json">(.*?)</script>', re.S)
REFRESH_RE = re.compile(r'<meta\s+name="heed-refresh"', re.I)
REFRESH_TAG_RE = re.compile(r'<meta\s+name="heed-refresh"[^>]*>', re.I)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def expected_curves(data):
    """{(metric, run index, series): points drawn} for the page's data."""
    counts = Counter()
    for i, run in enumerate(data["runs"]):
        records = run.get("records") if isinstance(run, dict) else None
        for rec in records if isinstance(records, list) else []:
            if not isinstance(rec, dict) or not is_num(rec.get("step")):
                continue
            is_eval = isinstance(rec.get("split"), str)
            if is_eval and "model_step" in rec:
                continue
            for key, value in rec.items():
                if key in (NOT_EVAL_METRIC if is_eval else NOT_TRAIN_METRIC) or not is_num(value):
                    continue
                counts[(key, i, rec["split"] if is_eval else key)] += 1
                if not is_eval and key == "loss":
                    counts[(key, i, "loss-smoothed")] += 1
    return {k: min(n, MAX_DRAWN) for k, n in counts.items()}


def is_stale(run, data):
    """A running run's page older than the time by which its trainer said it would write the
    next one: the page shows it as stopped (a run killed by SIGKILL)."""
    after = run.get("stale_after_seconds")
    if run.get("status") != "running" or not is_num(after):
        return False
    try:
        written = datetime.datetime.fromisoformat(data["generated"].replace("Z", "+00:00"))
    except (KeyError, AttributeError, ValueError):
        return False
    return (datetime.datetime.now(datetime.timezone.utc) - written).total_seconds() > after


def fmt_count(n):
    for d, s in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= d:
            return f"{n / d:.2f} {s}"
    return str(n)


# Everything the checks read from the DOM, in one round trip.
SNAPSHOT_JS = r"""(() => {
  const text = (el) => el ? el.textContent : null;
  return {
    title: document.title,
    h1: text(document.querySelector('h1')),
    charts: [...document.querySelectorAll('svg.chart')].map((svg) => ({
      metric: svg.dataset.metric,
      scale: svg.dataset.scale,
      xTicks: [...svg.querySelectorAll('.x-axis .tick text')].map((t) => t.textContent.trim()),
      yTicks: [...svg.querySelectorAll('.y-axis .tick text')].map((t) => t.textContent.trim()),
      curves: [...svg.querySelectorAll('path.curve')].map((p) => ({
        run: Number(p.dataset.run), series: p.dataset.series, points: Number(p.dataset.points),
        d: p.getAttribute('d') || '', stroke: p.getAttribute('stroke'),
        visible: getComputedStyle(p).display !== 'none' && getComputedStyle(p).visibility !== 'hidden',
      })),
    })),
    legend: [...document.querySelectorAll('.legend-item')].map((b) => ({
      run: b.dataset.run, pressed: b.getAttribute('aria-pressed'), text: b.textContent.trim() })),
    cards: [...document.querySelectorAll('.run-card')].map((c) => ({
      run: Number(c.dataset.run), text: c.textContent, progress: !!c.querySelector('.progress') })),
    finalHidden: document.querySelector('#final-results')?.hidden ?? true,
    finalRows: [...document.querySelectorAll('#final-results tr[data-run]')].map((tr) => ({
      run: Number(tr.dataset.run), split: tr.dataset.split,
      cells: Object.fromEntries([...tr.querySelectorAll('td[data-metric]')].map((td) =>
        [td.dataset.metric, td.dataset.value === undefined ? null : Number(td.dataset.value)])) })),
    configs: [...document.querySelectorAll('#config details[data-run]')].map((d) => ({
      run: Number(d.dataset.run), text: text(d.querySelector('pre')) })),
    configHidden: document.querySelector('#config')?.hidden ?? true,
    examples: [...document.querySelectorAll('#examples pre[data-run]')].map((p) => ({
      run: Number(p.dataset.run), text: p.textContent })),
    examplesHidden: document.querySelector('#examples')?.hidden ?? true,
    smoothing: document.querySelector('#smoothing')?.value ?? null,
    data: JSON.stringify(window.heedData),
  };
})()"""


def path_points(d):
    """The (x, y) pairs of an M/L path."""
    return [(float(x), float(y)) for x, y in re.findall(r"[ML](-?[\d.]+),(-?[\d.]+)", d)]


def curve_key(chart, curve):
    return (chart["metric"], curve["run"], curve["series"])


class Checker:
    def __init__(self, path):
        self.path = Path(path)
        self.failures = []
        self.count = 0

    def check(self, ok, message):
        self.count += 1
        if not ok:
            self.failures.append(f"{self.path.name}: {message}")
        return ok

    # --- the file itself -------------------------------------------------------------------------
    def static_checks(self):
        html = self.path.read_text(encoding="utf-8")
        blocks = DATA_RE.findall(html)
        if not self.check(len(blocks) == 1, f"{len(blocks)} heed-data script elements, not 1"):
            return None
        self.check("/*HEED_DATA*/" not in html, "the data marker is still in the page")
        self.check("<!--HEED_REFRESH-->" not in html, "the refresh marker is still in the page")
        try:
            data = json.loads(blocks[0])
        except json.JSONDecodeError as e:
            self.check(False, f"the embedded data is not JSON: {e}")
            return None
        self.check("<" not in blocks[0], "a '<' in the embedded data is not escaped as \\u003c")
        self.check(data.get("format") == "heed-report/1", f"format is {data.get('format')!r}")
        if not self.check(isinstance(data.get("runs"), list), "the data has no runs list"):
            return None
        running = any(isinstance(r, dict) and r.get("status") == "running" for r in data["runs"])
        refresh = bool(REFRESH_RE.search(html))
        self.check(refresh == running, "the heed-refresh meta is present" if refresh else
                   "no heed-refresh meta although a run is running")
        for src in re.findall(r'<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)="([^"]*)"', html):
            self.check(False, f"the page loads an external resource: {src}")
        return data

    # --- the page in chromium --------------------------------------------------------------------
    def browser_checks(self, data, shown):
        expected = expected_curves(data)
        with browser.Page(shown) as page:
            page.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            page.pump(0.2)
            snap = page.eval(SNAPSHOT_JS)
            self.check(not browser.is_blank(page.screenshot_png()), "the screenshot is blank")
            self.check_load(page, snap, data)
            errors, requests = len(page.console_errors), len(page.network_requests)
            self.check_charts(snap, expected)
            self.check_header(snap, data)
            self.check_sections(snap, data)
            self.check_legend(page, snap, data, expected)
            self.check_smoothing(page, snap, data)
            self.check_log_toggle(page, snap)
            self.check_hover(page, snap, data)
            self.check_zoom(page, snap)
            page.pump(0.2)
            self.check(len(page.console_errors) == errors, "console errors after interaction: " +
                       "; ".join(page.console_errors[errors:]))
            self.check(len(page.network_requests) == requests, "network requests after interaction: " +
                       ", ".join(page.network_requests[requests:]))

    def check_load(self, page, snap, data):
        self.check(not page.console_errors, "console errors on load: " + "; ".join(page.console_errors))
        self.check(not page.network_requests,
                   "network requests on load: " + ", ".join(page.network_requests))
        self.check(snap["data"] is not None and json.loads(snap["data"]) == data,
                   "window.heedData is not the embedded data")
        title = data.get("title", "")
        self.check(snap["h1"] == title, f"the heading is {snap['h1']!r}, not the title {title!r}")
        self.check(title in snap["title"], f"the document title {snap['title']!r} lacks {title!r}")

    def check_charts(self, snap, expected):
        drawn = {}
        for chart in snap["charts"]:
            m = chart["metric"]
            self.check(len(chart["xTicks"]) >= 2 and all(chart["xTicks"]),
                       f"chart {m}: x axis ticks {chart['xTicks']}")
            self.check(len(chart["yTicks"]) >= 2 and all(chart["yTicks"]),
                       f"chart {m}: y axis ticks {chart['yTicks']}")
            for c in chart["curves"]:
                key = curve_key(chart, c)
                self.check(key not in drawn, f"curve {key} is drawn twice")
                drawn[key] = c["points"]
                commands = len(re.findall(r"[ML]", c["d"]))
                self.check(commands == c["points"],
                           f"curve {key}: data-points {c['points']} but {commands} points in its path")
                self.check(not re.search(r"NaN|Infinity|undefined", c["d"]), f"curve {key}: bad path")
        for key in sorted(set(expected) | set(drawn), key=str):
            if key not in drawn:
                self.check(False, f"curve {key} ({expected[key]} points) is missing")
            elif key not in expected:
                self.check(False, f"curve {key} is drawn but the data has no such series")
            else:
                self.check(drawn[key] == expected[key],
                           f"curve {key}: {drawn[key]} points drawn, {expected[key]} expected")
        metrics = [c["metric"] for c in snap["charts"]]
        self.check(len(metrics) == len(set(metrics)), f"charts drawn twice: {metrics}")
        self.check(set(metrics) == {k[0] for k in expected},
                   f"charts {sorted(metrics)}, expected {sorted({k[0] for k in expected})}")
        # Several runs share each chart's axes.
        runs_with_data = {k[1] for k in expected}
        if len(runs_with_data) > 1:
            shared = any(len({c["run"] for c in chart["curves"]}) > 1 for chart in snap["charts"])
            self.check(shared, "no chart draws more than one run")
            for chart in snap["charts"]:
                by_run = {}
                for c in chart["curves"]:
                    by_run.setdefault(c["run"], set()).add(c["stroke"])
                colours = [next(iter(s)) for s in by_run.values() if len(s) == 1]
                self.check(len(colours) == len(by_run) and len(set(colours)) == len(colours),
                           f"chart {chart['metric']}: the runs' curves do not have one colour each")
        perplexity = next((c for c in snap["charts"] if c["metric"] == "perplexity"), None)
        if perplexity:
            self.check(perplexity["scale"] == "log", "the perplexity chart is not log scale by default")

    def check_header(self, snap, data):
        cards = {c["run"]: c for c in snap["cards"]}
        for i, run in enumerate(data["runs"]):
            card = cards.get(i)
            if not self.check(card is not None, f"run {i}: no .run-card"):
                continue
            text = card["text"]
            stale = is_stale(run, data)
            wants = [run.get("name"), "stopped?" if stale else run.get("status")]
            p = run.get("progress") or {}
            if is_num(p.get("step")) and is_num(p.get("max_steps")) and p["max_steps"] > 0:
                wants.append(f"{p['step']:,} / {p['max_steps']:,}")
                self.check(card["progress"], f"run {i}: no progress bar")
            model = run.get("model") or {}
            wants += [model.get("architecture"), model.get("dtype")]
            if is_num(model.get("parameters")):
                wants.append(fmt_count(model["parameters"]))
            machine = run.get("machine") or {}
            wants.append(machine.get("cpu") or None)
            if is_num(machine.get("threads")):
                wants.append(f"{machine['threads']} thread")
            if is_num(p.get("elapsed_seconds")):
                wants.append("elapsed")
            if stale:
                wants.append("last word")
            elif run.get("status") == "running":
                wants.append("remaining")
            for want in wants:
                if want:
                    self.check(str(want) in text, f"run {i}: the header does not show {want!r}")

    def check_sections(self, snap, data):
        rows = {(r["run"], r["split"]): r["cells"] for r in snap["finalRows"]}
        any_final = False
        for i, run in enumerate(data["runs"]):
            final = run.get("final")
            if not isinstance(final, dict):
                continue
            for split, values in final.items():
                if not isinstance(values, dict):
                    continue
                any_final = True
                cells = rows.get((i, split))
                if not self.check(cells is not None, f"run {i}: no final results row for {split}"):
                    continue
                for metric, value in values.items():
                    if is_num(value):
                        shown = cells.get(metric)
                        self.check(shown is not None and math.isclose(shown, value, rel_tol=1e-12),
                                   f"run {i}: final {split} {metric} shows {shown}, not {value}")
        self.check(snap["finalHidden"] != any_final,
                   "#final-results is shown without final metrics" if not any_final
                   else "#final-results is hidden")
        configs = {c["run"]: c["text"] for c in snap["configs"]}
        for i, run in enumerate(data["runs"]):
            if isinstance(run.get("config_yaml"), str):
                self.check(configs.get(i) == run["config_yaml"],
                           f"run {i}: #config does not show its config_yaml")
        self.check(not snap["configHidden"] or not configs, "#config is hidden")
        examples = {e["run"]: e["text"] for e in snap["examples"]}
        with_examples = [i for i, r in enumerate(data["runs"])
                         if isinstance(r.get("examples"), str) and r["examples"].strip()]
        for i in with_examples:
            self.check(examples.get(i) == data["runs"][i]["examples"],
                       f"run {i}: #examples does not show its examples")
        self.check(set(examples) == set(with_examples), f"examples shown for runs {sorted(examples)}")
        self.check(snap["examplesHidden"] == (not with_examples),
                   "#examples is shown without examples" if not with_examples else "#examples is hidden")

    def check_legend(self, page, snap, data, expected):
        legend = snap["legend"]
        self.check([item["run"] for item in legend] == [str(i) for i in range(len(data["runs"]))],
                   f"legend entries {[item['run'] for item in legend]} for {len(data['runs'])} runs")
        for i, run in enumerate(data["runs"]):
            if i < len(legend):
                self.check(str(run.get("name")) in legend[i]["text"], f"legend entry {i} lacks its name")
        count_js = "document.querySelectorAll('path.curve[data-run=\"{}\"]').length"
        for i in sorted({k[1] for k in expected}):
            before = page.eval(count_js.format(i))
            page.click(f'.legend-item[data-run="{i}"]')
            hidden = page.eval(count_js.format(i))
            pressed = page.eval(f"document.querySelector('.legend-item[data-run=\"{i}\"]')"
                                ".getAttribute('aria-pressed')")
            self.check(hidden == 0 and pressed == "false",
                       f"clicking legend entry {i} leaves {hidden} of its curves (aria-pressed {pressed})")
            others = sum(1 for k in expected if k[1] != i)
            self.check(page.eval("document.querySelectorAll('path.curve').length") == others,
                       f"hiding run {i} changed the other runs' curves")
            page.click(f'.legend-item[data-run="{i}"]')
            self.check(page.eval(count_js.format(i)) == before,
                       f"clicking legend entry {i} again does not bring its curves back")

    def check_smoothing(self, page, snap, data):
        if not self.check(snap["smoothing"] is not None, "no #smoothing slider"):
            return
        weight = float(snap["smoothing"])
        self.check(math.isclose(weight, 0.6), f"the smoothing slider starts at {weight}, not 0.6")
        # In pixels on a linear axis the debiased EMA is the same weighted mean (the scale is
        # affine), so the smoothed path follows from the raw path, unless points were dropped.
        loss = next((c for c in snap["charts"] if c["metric"] == "loss"), None)
        if loss is None:
            return
        if loss["scale"] != "linear":
            page.click('.log-toggle[data-metric="loss"]')
            loss = next(c for c in page.eval(SNAPSHOT_JS)["charts"] if c["metric"] == "loss")
        for raw in [c for c in loss["curves"] if c["series"] == "loss"]:
            smoothed = next((c for c in loss["curves"]
                             if c["series"] == "loss-smoothed" and c["run"] == raw["run"]), None)
            if not self.check(smoothed is not None, f"run {raw['run']}: no smoothed loss curve"):
                continue
            if raw["points"] >= MAX_DRAWN:
                continue
            ys = [y for _, y in path_points(raw["d"])]
            got = [y for _, y in path_points(smoothed["d"])]
            want, last = [], 0.0
            constant = all(y == ys[0] for y in ys)
            for t, y in enumerate(ys, 1):
                last = last * weight + (1 - weight) * y
                want.append(y if constant else last / (1 - weight ** t))
            worst = max((abs(a - b) for a, b in zip(want, got)), default=0.0)
            self.check(len(got) == len(want) and worst < 0.2,
                       f"run {raw['run']}: the smoothed loss is not the debiased EMA of the raw loss "
                       f"at weight {weight} (off by {worst:.2f} px)")
        if not any(c["series"] == "loss-smoothed" and c["points"] > 2 for c in loss["curves"]):
            return
        d_js = ("[...document.querySelectorAll('svg.chart[data-metric=\"loss\"] path.curve')]"
                ".map(p => p.dataset.series + ' ' + p.getAttribute('d'))")
        before = page.eval(d_js)
        page.eval("(() => { const s = document.querySelector('#smoothing'); s.value = '0.95';"
                  " s.dispatchEvent(new Event('input', {bubbles: true})); })()")
        page.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        after = page.eval(d_js)
        changed = [a != b for a, b in zip(before, after)]
        self.check(len(before) == len(after) and any(changed) and all(
            not ch for s, ch in zip(before, changed) if not s.startswith("loss-smoothed ")),
            "moving the smoothing slider does not change the smoothed curves alone")
        stored = page.eval("localStorage.getItem('heed-report/smoothing')")
        self.check(stored is not None and math.isclose(float(stored), 0.95),
                   f"the smoothing choice is not kept in localStorage ({stored!r})")

    def check_log_toggle(self, page, snap):
        toggles = page.eval("[...document.querySelectorAll('.log-toggle:not(:disabled)')]"
                            ".map(b => b.dataset.metric)")
        for metric in toggles:
            scale_js = f"document.querySelector('svg.chart[data-metric=\"{metric}\"]').dataset.scale"
            count_js = (f"document.querySelectorAll('svg.chart[data-metric=\"{metric}\"] "
                        "path.curve').length")
            before, n = page.eval(scale_js), page.eval(count_js)
            page.click(f'.log-toggle[data-metric="{metric}"]')
            after = page.eval(scale_js)
            self.check(before != after and page.eval(count_js) == n,
                       f"the log toggle of {metric} does not switch its scale ({before} -> {after})")
            page.click(f'.log-toggle[data-metric="{metric}"]')
            self.check(page.eval(scale_js) == before, f"the log toggle of {metric} does not switch back")

    def check_hover(self, page, snap, data):
        if not snap["charts"]:
            return
        metric = snap["charts"][0]["metric"]
        page.hover(f'svg.chart[data-metric="{metric}"] .overlay')
        tip = page.eval("(() => { const t = document.querySelector('#tooltip');"
                        " const row = t.querySelector('tr.nearest');"
                        " return {hidden: t.hidden, cells: row ? [...row.cells].map(c => c.textContent) : null};"
                        " })()")
        if not self.check(not tip["hidden"] and tip["cells"], f"hovering chart {metric} shows no tooltip"):
            return
        steps = set()
        for run in data["runs"]:
            for rec in run.get("records") or []:
                if isinstance(rec, dict) and is_num(rec.get("step")) and is_num(rec.get(metric)):
                    steps.add(f"{round(rec['step']):,}")
        step, value = tip["cells"][-2], tip["cells"][-1]
        self.check(step in steps, f"the tooltip of {metric} shows step {step!r}, not a step of the data")
        self.check(bool(re.fullmatch(r"-?[\d,.]+(e-?\d+)?", value)),
                   f"the tooltip of {metric} shows value {value!r}")

    def check_zoom(self, page, snap):
        if not snap["charts"]:
            return
        metric = snap["charts"][0]["metric"]
        ticks_js = (f"[...document.querySelectorAll('svg.chart[data-metric=\"{metric}\"] .x-axis .tick text')]"
                    ".map(t => t.textContent)")
        before = page.eval(ticks_js)
        # A drag over the middle fifth of the plot, as synthetic mouse events.
        page.eval(f"""(() => {{
            const box = document.querySelector('svg.chart[data-metric="{metric}"] .overlay')
                .getBoundingClientRect();
            const y = box.top + box.height / 2;
            const at = (type, x, target) => target.dispatchEvent(new MouseEvent(type,
                {{clientX: x, clientY: y, button: 0, bubbles: true}}));
            at('mousedown', box.left + box.width * 0.4,
               document.querySelector('svg.chart[data-metric="{metric}"] .overlay'));
            at('mousemove', box.left + box.width * 0.6, window);
            at('mouseup', box.left + box.width * 0.6, window);
        }})()""")
        zoomed = page.eval(ticks_js)
        self.check(zoomed != before, f"dragging across chart {metric} does not zoom its steps")
        page.click(f'svg.chart[data-metric="{metric}"] .overlay', double=True)
        self.check(page.eval(ticks_js) == before, f"double-clicking chart {metric} does not reset the zoom")

    def run(self):
        data = self.static_checks()
        if data is None:
            return
        # chromium sees a copy without the heed-refresh meta (checked above): a slow check must not
        # have the page reload under it.
        with tempfile.TemporaryDirectory(prefix="heed-report-page-") as tmp:
            shown = Path(tmp) / self.path.name
            html = self.path.read_text(encoding="utf-8")
            shown.write_text(REFRESH_TAG_RE.sub("", html), encoding="utf-8")
            try:
                self.browser_checks(data, shown)
            except browser.BrowserError as e:
                self.check(False, f"chromium: {e}".replace("\n", " "))


def sample_pages(out_dir):
    """sample_report.py's pages, filled from the template beside this repository's tests."""
    import sample_report

    template = sample_report.TEMPLATE.read_text(encoding="utf-8")
    paths = []
    for name, data in sample_report.samples().items():
        path = Path(out_dir) / f"{name}.html"
        path.write_text(sample_report.fill(template, data), encoding="utf-8")
        paths.append(path)
    return paths


def main(argv):
    browser.reexec_with_system_python_if_needed()
    pages = [a for a in argv[1:] if a != "--samples"]
    samples = "--samples" in argv[1:]
    if not pages and not samples:
        print(next(l.strip() for l in __doc__.splitlines() if "PAGE.html" in l), file=sys.stderr)
        return 2
    if browser.find_chromium() is None:
        print("chromium not found; the page test is skipped")
        return 77
    try:
        import websocket  # noqa: F401
        import PIL  # noqa: F401
    except ImportError as e:
        print(f"the page test needs python3-websocket and python3-pil: {e}")
        return 1
    with tempfile.TemporaryDirectory(prefix="heed-report-pages-") as tmp:
        if samples:
            pages += sample_pages(tmp)
        failures, count = [], 0
        for path in pages:
            checker = Checker(path)
            checker.run()
            failures += checker.failures
            count += checker.count
    for line in failures:
        print(line)
    if failures:
        return 1
    print(f"ok: {count} checks on {len(pages)} page(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
