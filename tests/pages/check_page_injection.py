#!/usr/bin/env python3
"""No script from the data in heed's pages (issue 56): a run's name, a metric's name, a split,
a config, a token... is data, shown as text, and the page's Content-Security-Policy would stop
any script or request that slipped through anyway. This test loads pages whose data is made of
injection payloads in headless chromium and checks that no payload ran, added an element, gave
an element an unsafe class or reached the network (before and after hovering and clicking
everything), that each payload is shown as the text it is (escaped, not dropped), and that the
policy is in the page, allows exactly its scripts and is in force.

    python3 tests/pages/check_page_injection.py --samples [--out DIR] [--templates DIR]
    python3 tests/pages/check_page_injection.py --pages DIR
    python3 tests/pages/check_page_injection.py --write-inputs DIR

--samples fills viz/report.html and viz/attention.html (or report.html and attention.html of
--templates DIR, e.g. copies changed on purpose to see the checks fail) with payload data the
way the programs do (sample_report.fill, sample_attention.fill_template), in a temporary
directory or --out DIR.

--pages checks every *.html in DIR: pages the real programs wrote from the inputs that
--write-inputs DIR makes, which are
    DIR/runs/<payload>/  two run directories named by payloads (without '/'), each holding
        metrics.jsonl, final_metrics.json, run_info.json and examples.txt with payloads in every
        field; their paths are printed, one a line;
    DIR/text.txt, DIR/text_pair.txt, DIR/target.txt  short payload texts for `infer attention`;
    DIR/checkpoint_parent.txt  a payload to name a directory by, for links to checkpoints (the
        page shows the checkpoint's path).
For example, in make_pages.sh:
    mapfile -t runs < <(python3 tests/pages/check_page_injection.py --write-inputs "$in")
    mkdir "$in/pages"
    report "${runs[0]}" --out "$in/pages/report_one.html"
    report "${runs[@]}" --out "$in/pages/report_two.html"
    parent="$in/$(cat "$in/checkpoint_parent.txt")"
    mkdir "$parent" && ln -s "$(realpath "$bert_checkpoint")" "$parent/bert"
    infer attention --checkpoint "$parent/bert" --text "$(cat "$in/text.txt")" \\
        --text-pair "$(cat "$in/text_pair.txt")" --out "$in/pages/attention_bert.html"
    python3 tests/pages/check_page_injection.py --pages "$in/pages"
Whatever the pages are, the expectations come from the data embedded in each one; a page whose
data holds no payload fails, since it would prove nothing.

Exit 0 when every check passes; 1 with one line per failed check; 77 when chromium is absent.
"""
import argparse
import base64
import hashlib
import json
import math
import random
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser  # noqa: E402

# Each payload tries one way out of the context a value lands in (text, a quoted attribute, a
# class, a style, a URL, SVG, a template engine, the script block holding the data, the page's
# own markers) and marks what it would create (data-pwned, #pwned, window.__pwned) for the checks.
PAYLOADS = [
    '"><img src=x onerror="window.__pwned=1" data-pwned="1">',
    "<script>window.__pwned=1</script>",
    "</script><script>window.__pwned=1</script>",
    "javascript:window.__pwned=1",
    "' onmouseover='window.__pwned=1' data-pwned='1",
    '<svg onload="window.__pwned=1" data-pwned="1">',
    'x" style="background:url(http://127.0.0.1:9/x)" data-pwned="1',
    "{{constructor.constructor('window.__pwned=1')()}}",
    '<div id="pwned" data-pwned="1" onmouseover="window.__pwned=1">pwned</div>',
    '<iframe srcdoc="<script>parent.__pwned=1</script>" data-pwned="1"></iframe>',
    "<style>*{background:url(http://127.0.0.1:9/css)}</style><!--",
    "]]> --> &lt;b&gt; &amp; &#39; \u2028 <b data-pwned=1>bold</b>",
    "valid test",  # a name with a space must not become two classes
    "/*HEED_DATA*/ /*HEED_SCRIPT_HASHES*/ <!--HEED_REFRESH-->",
    "__proto__",
    "constructor",
]
TEMPLATES = Path(__file__).resolve().parents[2] / "viz"
MARK = "__pwned"  # every page of this test holds it somewhere in its data
# Payloads that can name a directory (no '/'): the real runs' names, a checkpoint's parent's.
RUN_NAMES = [PAYLOADS[0], PAYLOADS[5]]
CHECKPOINT_PARENT = PAYLOADS[4]
# Texts for `infer attention` on the tiny models, which read 32 positions: short enough for a
# BERT pair even at a token a character.
ATTENTION_TEXTS = {"text.txt": "<b id=pwned>", "text_pair.txt": "'><i id=x>",
                   "target.txt": '<svg onload=__pwned=1> "><b>'}

DATA_RE = re.compile(r'<script id="heed-data" type="application/json">(.*?)</script>', re.S)
REFRESH_TAG_RE = re.compile(r'<meta\s+name="heed-refresh"[^>]*>', re.I)
CSP_RE = re.compile(r'<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"\s*/?>', re.I)
MARKERS = ("/*HEED_DATA*/", "/*HEED_SCRIPT_HASHES*/", "<!--HEED_REFRESH-->")
# What a policy may allow, directive by directive; anything else (a host, *, 'self', a scheme
# that reaches the network, 'unsafe-eval', 'unsafe-inline' scripts) is a failure.
ALLOWED_SOURCES = {"style-src": {"'unsafe-inline'"}, "img-src": {"data:", "blob:"},
                   "font-src": {"data:"}}
HASH_SOURCE_RE = re.compile(r"'sha256-[A-Za-z0-9+/]{43}='")
# Metrics the report titles from its own table; any other name is titled from the name itself.
KNOWN_METRICS = {"loss", "lr", "grad_norm", "tokens_per_second", "perplexity", "accuracy", "f1",
                 "spam_f1", "wer", "cer", "bleu", "sequence_error_rate", "token_error_rate"}

# Runs before the page's own scripts: counts the policy's refusals from the very start.
BEFORE_LOAD_JS = r"""
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push(`${e.effectiveDirective} ${e.blockedURI}`);
});
"""

# What a payload would leave behind in the DOM.
INJECTED_JS = r"""(() => {
  const found = [];
  const say = (el, why) => found.push(`${why}: ${el.outerHTML.slice(0, 90)}`);
  const suspects = '[data-pwned], #pwned, img, iframe, frame, object, embed, a[href], form, ' +
    'base, body style, body link, body meta, svg script, foreignObject, animate, set';
  for (const el of document.querySelectorAll(suspects)) say(el, 'an element from the data');
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      if (/^on/i.test(a.name)) say(el, `an event handler attribute ${a.name}`);
      if (/^\s*javascript:/i.test(a.value) && /(href|src|action)$/i.test(a.name)) {
        say(el, 'a javascript: URL');
      }
      if (a.name === 'style' && /url\(/i.test(a.value)) say(el, 'a url() in a style attribute');
    }
  }
  const classes = [...document.querySelectorAll('[class]')]
    .flatMap((el) => [...el.classList]).filter((c) => !/^[A-Za-z0-9_-]+$/.test(c));
  return {
    found: found.slice(0, 5), count: found.length, classes: [...new Set(classes)].slice(0, 5),
    scripts: document.scripts.length,
    pwned: window.__pwned === undefined ? null : String(window.__pwned),
    violations: window.__violations || null,
  };
})()"""

# The policy in force: a new image, inline handler, inline script and fetch must all be refused.
CSP_PROBE_JS = r"""(async () => {
  const before = window.__violations.length;
  const box = document.createElement('div');
  box.innerHTML = '<img src="http://127.0.0.1:9/csp-probe.png" onerror="window.__pwned=\'probe\'">' +
    '<div style="width:9px;height:9px;background:url(http://127.0.0.1:9/csp-probe-bg.png)"></div>';
  document.body.append(box);
  const script = document.createElement('script');
  script.textContent = "window.__pwned = 'probe script'";
  document.body.append(script);
  let fetched = 'fetched';
  try { await fetch('http://127.0.0.1:9/csp-probe'); } catch { fetched = 'refused'; }
  await new Promise((r) => setTimeout(r, 300));
  box.remove();
  script.remove();
  return { fetched, pwned: window.__pwned === undefined ? null : String(window.__pwned),
           directives: [...new Set(window.__violations.slice(before).map((v) => v.split(' ')[0]))] };
})()"""

REPORT_JS = r"""(() => {
  const text = (el) => el ? el.textContent : null;
  const all = (sel, root = document) => [...root.querySelectorAll(sel)];
  return {
    ready: window.heedData !== undefined,
    title: document.title, h1: text(document.querySelector('h1')),
    subtitle: text(document.querySelector('#subtitle')),
    footer: text(document.querySelector('#footer')),
    message: document.querySelector('#message').hidden ? null : text(document.querySelector('#message')),
    cards: all('.run-card').map((c) => ({ run: Number(c.dataset.run), text: c.textContent })),
    legend: all('.legend-item').map((b) => ({ run: Number(b.dataset.run), text: b.textContent,
                                              title: b.title })),
    finalHeads: all('#final-results th[data-metric]')
      .map((th) => [th.dataset.metric ?? null, th.textContent]),
    finalRows: all('#final-results tr[data-run]').map((tr) => ({
      run: Number(tr.dataset.run), split: tr.dataset.split ?? null, text: tr.textContent,
      metrics: all('td[data-metric]', tr).map((td) => td.dataset.metric) })),
    configs: all('#config details[data-run]').map((d) => ({ run: Number(d.dataset.run),
      summary: text(d.querySelector('summary')), text: text(d.querySelector('pre')) })),
    examples: all('#examples pre[data-run]').map((p) => ({ run: Number(p.dataset.run),
                                                          text: p.textContent })),
    examplesText: text(document.querySelector('#examples')),
    charts: all('figure.chart-card').map((f) => ({
      metric: f.dataset.metric ?? null, h3: text(f.querySelector('h3')),
      svgMetric: f.querySelector('svg.chart')?.dataset.metric ?? null,
      keys: all('.key > span', f).map((s) => s.textContent),
      curves: all('path.curve', f).map((p) => ({ run: Number(p.dataset.run), series: p.dataset.series ?? null,
        dashed: getComputedStyle(p).strokeDasharray !== 'none' })) })),
  };
})()"""

TOOLTIP_JS = r"""(() => {
  const tip = document.querySelector('#tooltip');
  if (tip.hidden) return null;
  return [...tip.querySelectorAll('tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent));
})()"""

ATTENTION_JS = r"""(() => {
  const text = (id) => document.getElementById(id)?.textContent ?? null;
  return {
    ready: document.body.dataset.ready === '1',
    error: document.getElementById('error').hidden ? null : text('error'),
    title: document.title, modelType: text('model-type'), titleViews: text('title-views'),
    meta: [...document.querySelectorAll('#meta > div')].map((d) => [d.firstChild.textContent,
                                                                   d.querySelector('.text').textContent]),
    options: [...document.querySelectorAll('#view-select option')].map((o) => o.textContent),
  };
})()"""

LABELS_JS = r"""[...document.querySelectorAll('.token.%s')].map((e) =>
  [Number(e.dataset.index), e.textContent, e.title])"""


def script_hashes(html):
    """'sha256-…' of each <script> element written without attributes: the scripts the policy
    must allow (the data block has attributes and is not run). Computed here, not by the fill()
    of the samples, so that the check is a second opinion on the programs' pages too."""
    hashes, at = [], 0
    while (start := html.find("<script>", at)) >= 0:
        end = html.find("</script>", start)
        digest = hashlib.sha256(html[start + len("<script>"):end].encode("utf-8")).digest()
        hashes.append(f"'sha256-{base64.b64encode(digest).decode()}'")
        at = end
    return hashes


def contains_mark(value):
    if isinstance(value, str):
        return MARK in value
    if isinstance(value, dict):
        return any(contains_mark(k) or contains_mark(v) for k, v in value.items())
    if isinstance(value, list):
        return any(contains_mark(v) for v in value)
    return False


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def js_string(v):
    """String(v) as the pages write it, for the values this test's data holds."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return v if isinstance(v, str) else json.dumps(v)


def title_of(metric):
    """report.html's titleOf for a name outside its table of titles."""
    spaced = metric.replace("_", " ")
    return spaced[:1].upper() + spaced[1:] if spaced[:1] not in "\n\r\u2028\u2029" else spaced


def fmt_timestamp(iso):
    """report.html's fmtTimestamp."""
    s = re.sub(r"\.\d+", "", iso.replace("T", " ", 1), count=1)
    return re.sub(r"Z\Z", " UTC", s)


def short(x, limit=140):
    s = repr(x)
    return s if len(s) <= limit else s[:limit] + "…"


# --- payload data ----------------------------------------------------------------------------

def run_files(main, metrics, splits):
    """The files of a run directory (name -> content) whose every field holds the payload
    `main`, with the metrics and evaluation splits named so. (A split named as a metric would
    share its series: the names differ.)"""
    rng = random.Random(len(main))
    # Records with nothing to draw, first: their step is no number (the programs leave them out
    # of the page, the page skips them), their values are no numbers.
    records = [{"step": main, "split": main, "loss": 1.0, main: 2.0},
               {"step": main, "loss": 1.0, main: 2.0},
               {"step": 1, "split": main, "loss": main, main: main}]
    for step in range(1, 9):
        train = {"step": step, "loss": round(3 - 0.25 * step + rng.random() * 0.1, 4),
                 "elapsed_seconds": float(step)}
        train.update({key: round(rng.random() + 0.5, 4) for key in metrics})
        records.append(train)
        if step % 2 == 0:
            for split in splits:
                records.append({"step": step, "split": split, "loss": round(3.2 - 0.25 * step, 4),
                                **{key: round(rng.random() + 0.5, 4) for key in metrics}})
    # The best model evaluated again at the end: the final results, no point of a curve.
    records.append({"step": 9, "split": main, "model_step": 8, "loss": 1.5, main: 0.5})
    final = {"step": 8, "elapsed_seconds": 8.0, "checkpoint": main, "best_model_checkpoint": main,
             "metric_for_best_model": main, "best_metric": 0.5, "best_global_step": 8,
             "greater_is_better": main, "tokens_seen": main,
             main: {main: 1.25, "loss": 2.5, "note": main, "nested": {main: main}},
             "valid": {"loss": 1.0, main: 0.75}}
    info = {"task": main, "max_steps": main,
            "config_yaml": f"task: {main}\noutput_dir: {main}\n" + "\n".join(PAYLOADS) + "\n",
            "model": {"architecture": main, "parameters": main, "dtype": main},
            "machine": {"cpu": main, "threads": main}}
    return {"metrics.jsonl": "".join(json.dumps(r) + "\n" for r in records),
            "final_metrics.json": json.dumps(final, indent=2),
            "run_info.json": json.dumps(info, indent=2),
            "examples.txt": f"{main}\n" + "\n".join(PAYLOADS) + "\n"}


def run_data(name, files, status, progress):
    """The page's data for a run directory, as train/reporting/run_report.cpp's run_report_data builds it."""
    info = json.loads(files["run_info.json"])
    return {"name": name, "status": status, "task": info.get("task", ""),
            "config_yaml": info.get("config_yaml", ""), "model": info.get("model", {}),
            "machine": info.get("machine", {}), "progress": progress,
            "records": [json.loads(line) for line in files["metrics.jsonl"].splitlines()],
            "final": json.loads(files["final_metrics.json"]), "examples": files["examples.txt"]}


def sample_report_data():
    """A run per payload, each payload in every field: also those the programs compute (status,
    progress, title, generation time, format), which a real run cannot hold."""
    runs = []
    for i, p in enumerate(PAYLOADS):
        splits = [PAYLOADS[(i + 1) % len(PAYLOADS)]] + (["valid", "test"] if i == 0 else [])
        progress = ({"step": 8, "max_steps": 10, "elapsed_seconds": 8.0, "remaining_seconds": 2.0}
                    if i % 2 else {"step": p, "max_steps": p, "elapsed_seconds": p,
                                   "remaining_seconds": p})
        status = "running" if i == 1 else p
        files = run_files(p, [p], splits)
        runs.append(run_data(p, files, status, progress))
    return {"format": PAYLOADS[1], "generated": " ".join(PAYLOADS), "title": " ".join(PAYLOADS),
            "runs": runs}


def sample_attention_data():
    import sample_attention

    rng = random.Random(56)
    tokens = ["[CLS]"] + PAYLOADS[:8] + ["[SEP]"] + PAYLOADS[8:] + ["[SEP]"]
    decoder = ["</s>"] + PAYLOADS[::2]
    return {
        "format": "heed-attention/1",
        "model_type": PAYLOADS[0],
        "checkpoint": PAYLOADS[5],
        "texts": {"text": " ".join(PAYLOADS[:8]), "text_pair": " ".join(PAYLOADS[8:]),
                  "target": PAYLOADS[6]},
        "views": [
            sample_attention._view(rng, PAYLOADS[2], tokens, tokens, 2, 2, pair_start=10),
            sample_attention._view(rng, PAYLOADS[3], decoder, decoder, 2, 2, causal=True),
            sample_attention._view(rng, PAYLOADS[4], decoder, tokens, 2, 2),
        ],
    }


def write_samples(out_dir, templates):
    """The payload pages, filled from the templates as the programs fill them."""
    import sample_attention
    import sample_report

    report = (templates / "report.html").read_text(encoding="utf-8")
    attention = (templates / "attention.html").read_text(encoding="utf-8")
    invalid = dict(sample_attention_data(), format=PAYLOADS[0])  # shown as an error message
    pages = {"report.html": sample_report.fill(report, sample_report_data()),
             "attention.html": sample_attention.fill_template(attention, sample_attention_data()),
             "attention_invalid.html": sample_attention.fill_template(attention, invalid)}
    paths = []
    for name, html in pages.items():
        path = Path(out_dir) / name
        path.write_text(html, encoding="utf-8")
        paths.append(path)
    return paths


def write_inputs(out_dir):
    """The real programs' inputs (see the docstring); prints the run directories."""
    out = Path(out_dir)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    for k, name in enumerate(RUN_NAMES):
        run = out / "runs" / name
        run.mkdir(exist_ok=True)
        # The first run has every payload as a metric and in a split's name.
        metrics = PAYLOADS if k == 0 else [name]
        splits = [f"{p} split" for p in PAYLOADS] + ["valid", "test"] if k == 0 else [PAYLOADS[1]]
        files = run_files(name, metrics, splits)
        for file, text in files.items():
            (run / file).write_text(text, encoding="utf-8")
        print(run)
    for file, text in ATTENTION_TEXTS.items():
        (out / file).write_text(text, encoding="utf-8")
    (out / "checkpoint_parent.txt").write_text(CHECKPOINT_PARENT, encoding="utf-8")


# --- the checks --------------------------------------------------------------------------------

class Checker:
    def __init__(self, path):
        self.path = Path(path)
        self.failures = []
        self.count = 0
        self.quiet = True  # whether a console error is a failure

    def check(self, ok, message):
        self.count += 1
        line = f"{self.path.name}: {message}"
        if not ok and line not in self.failures:  # a check repeated on each hover says it once
            self.failures.append(line)
        return ok

    def run(self):
        html = self.path.read_text(encoding="utf-8")
        blocks = DATA_RE.findall(html)
        if not self.check(len(blocks) == 1, f"{len(blocks)} heed-data script elements, not 1"):
            return
        try:
            data = json.loads(blocks[0])
        except json.JSONDecodeError as e:
            self.check(False, f"the embedded data is not JSON: {e}")
            return
        self.check(contains_mark(data), f"the data holds no payload ({MARK}): this page proves nothing")
        kind = "attention" if 'id="head-canvas"' in html else "report" if 'id="charts"' in html else None
        if not self.check(kind is not None, "neither the report nor the attention page"):
            return
        self.static_checks(html)
        # A copy without the heed-refresh meta: the page must not reload under the checks.
        with tempfile.TemporaryDirectory(prefix="heed-injection-page-") as tmp:
            shown = Path(tmp) / self.path.name
            shown.write_text(REFRESH_TAG_RE.sub("", html), encoding="utf-8")
            try:
                with browser.Page(shown, before_load=BEFORE_LOAD_JS) as page:
                    page.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                    page.pump(0.2)
                    scripts = len(re.findall(r"<script\b", html))
                    # The attention page logs the error that data it refuses makes.
                    self.quiet = not (kind == "attention" and data.get("format") != "heed-attention/1")
                    self.check_clean(page, "on load", scripts)
                    if kind == "report":
                        self.check_report(page, data)
                    else:
                        self.check_attention(page, data)
                    page.pump(0.2)
                    self.check_clean(page, "after hovering and clicking", scripts)
                    self.check_policy_in_force(page)
            except browser.BrowserError as e:
                self.check(False, f"chromium: {e}".replace("\n", " "))
            except (AttributeError, KeyError, IndexError, TypeError, ValueError) as e:
                # A page broken enough to break the checks' reading of it.
                self.check(False, f"the page's DOM is not as the checks expect: {type(e).__name__}: {e}")

    # --- the file --------------------------------------------------------------------------------
    def static_checks(self, html):
        outside_data = DATA_RE.sub("", html)
        for marker in MARKERS:
            self.check(marker not in outside_data, f"the marker {marker} is still in the page")
        metas = list(CSP_RE.finditer(html))
        if not self.check(len(metas) == 1, f"{len(metas)} Content-Security-Policy meta elements, not 1"):
            return
        at = metas[0].start()
        first_script = html.find("<script")
        self.check(first_script < 0 or at < first_script,
                   "the Content-Security-Policy comes after a script, which runs unrestricted")
        self.check(at < html.find("</head>"), "the Content-Security-Policy is not in <head>")
        policy = {}
        for part in metas[0].group(1).split(";"):
            words = part.split()
            if words:
                policy[words[0].lower()] = words[1:]
        for name in ("default-src", "base-uri", "form-action"):
            self.check(policy.get(name) == ["'none'"],
                       f"the policy's {name} is {policy.get(name)}, not 'none'")
        want = set(script_hashes(html))
        got = policy.get("script-src", [])
        self.check(set(got) == want and all(HASH_SOURCE_RE.fullmatch(s) for s in got),
                   f"script-src is {got}, not the hashes of the page's scripts {sorted(want)}")
        for name, sources in policy.items():
            if name == "script-src":
                continue
            allowed = ALLOWED_SOURCES.get(name, set())
            for source in sources:
                self.check(source == "'none'" or source in allowed,
                           f"the policy allows {name} {source}")

    # --- the page in chromium --------------------------------------------------------------------
    def check_clean(self, page, when, scripts):
        state = page.eval(INJECTED_JS)
        self.check(state["count"] == 0, f"{when}: {state['count']} injected thing(s): "
                   + "; ".join(state["found"]))
        self.check(not state["classes"], f"{when}: class names outside [A-Za-z0-9_-]: {state['classes']}")
        self.check(state["scripts"] == scripts, f"{when}: {state['scripts']} script elements, not {scripts}")
        self.check(state["pwned"] is None, f"{when}: a payload ran (window.__pwned = {state['pwned']!r})")
        self.check(state["violations"] == [], f"{when}: the policy refused {short(state['violations'])}"
                   if state["violations"] else f"{when}: no securitypolicyviolation listener")
        self.check(not page.network_requests, f"{when}: network requests {short(page.network_requests)}")
        if self.quiet:
            self.check(not page.console_errors, f"{when}: console errors {short(page.console_errors)}")

    def check_policy_in_force(self, page):
        requests = len(page.network_requests)
        probe = page.eval(CSP_PROBE_JS)
        page.pump(0.2)
        self.check(probe["pwned"] is None,
                   f"an inline handler or script added after load ran ({probe['pwned']!r}): "
                   "no Content-Security-Policy in force")
        self.check(probe["fetched"] == "refused", "fetch() reached the network")
        for directive in ("img-src", "connect-src", "script-src-elem", "script-src-attr"):
            self.check(directive in probe["directives"],
                       f"the policy refused nothing under {directive} (refused: {probe['directives']})")
        blocked = {b.split(" (blocked")[0] for b in page.blocked_requests}
        made = [u for u in page.network_requests[requests:] if u not in blocked]
        self.check(not made, f"requests went out although the policy forbids them: {made}")

    # --- the report ------------------------------------------------------------------------------
    def check_report(self, page, data):
        snap = page.eval(REPORT_JS)
        if not self.check(snap["ready"] and snap["message"] is None,
                          f"the report did not render its data (message: {snap['message']!r})"):
            return
        title = data.get("title")
        title = title if isinstance(title, str) and title else "heed report"
        self.check(snap["h1"] == title, f"the heading shows {short(snap['h1'])}, not the title")
        self.check(title in snap["title"], "the document title lacks the title")
        self.check(snap["footer"] == f"{js_string(data.get('format') or '')} · heed",
                   f"the footer shows {short(snap['footer'])}")
        generated = data.get("generated")
        if isinstance(generated, str) and generated:
            self.check(fmt_timestamp(generated) in snap["subtitle"],
                       f"the subtitle {short(snap['subtitle'])} lacks the time written")
        runs = [r if isinstance(r, dict) else {} for r in data["runs"]]
        names = [js_string(r["name"]) if r.get("name") is not None else f"run {i}"
                 for i, r in enumerate(runs)]
        self.check_run_cards(snap, runs, names)
        self.check_final(snap, runs, names)
        for i, run in enumerate(runs):
            config = run.get("config_yaml")
            if isinstance(config, str):
                shown = next((c for c in snap["configs"] if c["run"] == i), None)
                self.check(shown is not None and shown["text"] == config,
                           f"run {i}: #config does not show its config_yaml as text")
                self.check(shown is not None and names[i] in shown["summary"],
                           f"run {i}: the config's summary lacks the run's name")
            examples = run.get("examples")
            if isinstance(examples, str) and examples.strip():
                shown = next((e["text"] for e in snap["examples"] if e["run"] == i), None)
                self.check(shown == examples, f"run {i}: #examples does not show its examples as text")
                if len(runs) > 1:
                    self.check(names[i] in snap["examplesText"], f"run {i}: #examples lacks the run's name")
        self.check_charts(snap, data, runs)
        self.exercise_report(page, snap, names)

    def check_run_cards(self, snap, runs, names):
        cards = {c["run"]: c["text"] for c in snap["cards"]}
        legend = {item["run"]: item for item in snap["legend"]}
        for i, run in enumerate(runs):
            text = cards.get(i)
            if not self.check(text is not None, f"run {i}: no .run-card"):
                continue
            wants = {"name": names[i], "status": js_string(run.get("status", "unknown"))}
            if run.get("task"):
                wants["task"] = js_string(run["task"])
            model = run.get("model") if isinstance(run.get("model"), dict) else {}
            machine = run.get("machine") if isinstance(run.get("machine"), dict) else {}
            for field, value in (("model.architecture", model.get("architecture")),
                                 ("model.dtype", model.get("dtype")), ("machine.cpu", machine.get("cpu"))):
                if isinstance(value, str) and value:
                    wants[field] = value
            final = run.get("final") if isinstance(run.get("final"), dict) else {}
            if isinstance(final.get("checkpoint"), str) and final["checkpoint"]:
                wants["final.checkpoint"] = final["checkpoint"]
            if is_num(final.get("best_metric")) and isinstance(final.get("metric_for_best_model"), str):
                wants["final.metric_for_best_model"] = final["metric_for_best_model"]
            for split in last_eval_splits(run):
                wants[f"the last {split!r} evaluation"] = f"last {split}"
            for what, want in wants.items():
                self.check(want in text, f"run {i}: the header does not show its {what} {short(want)}")
            item = legend.get(i)
            if self.check(item is not None, f"run {i}: no legend entry"):
                self.check(names[i] in item["text"], f"run {i}: the legend entry lacks the run's name")
                self.check(item["title"].startswith(f"{names[i]}: "),
                           f"run {i}: the legend entry's tooltip does not start with the run's name")

    def check_final(self, snap, runs, names):
        rows = {(r["run"], r["split"]): r for r in snap["finalRows"]}
        heads = dict(snap["finalHeads"])
        for i, run in enumerate(runs):
            final = run.get("final")
            if not isinstance(final, dict):
                continue
            for split, values in final.items():
                if not isinstance(values, dict):
                    continue
                row = rows.get((i, split))
                if not self.check(row is not None, f"run {i}: no final results row for split {short(split)}"):
                    continue
                self.check(split in row["text"], f"run {i}: the final row does not show split {short(split)}")
                if len(runs) > 1:
                    self.check(names[i] in row["text"], f"run {i}: the final row lacks the run's name")
                for metric in values:
                    self.check(metric in row["metrics"] and heads.get(metric) == metric,
                               f"run {i}: final {short(split)}: metric {short(metric)} is not a column "
                               f"headed by its name")

    def check_charts(self, snap, data, runs):
        import check_report_page

        expected = {}
        for metric, run, series in check_report_page.expected_curves(data):
            expected.setdefault(metric, set()).add((run, series))
        charts = {c["metric"]: c for c in snap["charts"]}
        odd = sorted(set(charts) ^ set(expected), key=str)
        self.check(not odd, f"charts for {short(odd)} differ from the data's metrics")
        for metric, chart in charts.items():
            self.check(chart["svgMetric"] == metric, f"chart {short(metric)}: svg data-metric differs")
            if metric not in KNOWN_METRICS:
                self.check(chart["h3"] == title_of(metric), f"chart {short(metric)} is titled "
                           f"{short(chart['h3'])}, not {short(title_of(metric))}")
            drawn = {(c["run"], c["series"]) for c in chart["curves"]}
            odd = sorted(drawn ^ expected.get(metric, set()), key=str)
            self.check(not odd, f"chart {short(metric)}: curves {short(odd)} differ from the data's series")
            series = {s for _, s in expected.get(metric, set())}
            keys = {"raw", "smoothed"} | series
            odd = sorted(set(chart["keys"]) - keys, key=str)
            self.check(not odd, f"chart {short(metric)}: its key shows {short(odd)}")
            for c in chart["curves"]:
                run = c["run"]
                if isinstance(run, int) and 0 <= run < len(runs) and c["series"] in eval_splits(runs[run]):
                    self.check(c["dashed"] == (c["series"] == "test"),
                               f"chart {short(metric)}: split {short(c['series'])} is "
                               f"{'dashed' if c['dashed'] else 'solid'}; only 'test' is dashed")

    def exercise_report(self, page, snap, names):
        """Every hover and click the report answers, with the payloads under the pointer."""
        labels = {c["metric"]: {s["series"] for s in c["curves"]} for c in snap["charts"]}
        for i in range(page.eval("document.querySelectorAll('svg.chart .overlay').length")):
            box = page.eval(f"""(() => {{
                const o = document.querySelectorAll('svg.chart .overlay')[{i}];
                o.scrollIntoView({{block: 'center'}});
                const r = o.getBoundingClientRect();
                return [r.left, r.top, r.width, r.height, o.closest('svg.chart').dataset.metric]; }})()""")
            page.eval("new Promise(r => requestAnimationFrame(() => r(0)))")
            metric = box[4]
            seen = False
            for f in (0.05, 0.3, 0.5, 0.7, 0.95):
                page.move_to(box[0] + box[2] * f, box[1] + box[3] / 2)
                for cells in page.eval(TOOLTIP_JS) or []:
                    seen = True
                    if not self.check(len(cells) in (3, 4), f"a tooltip row has cells {short(cells)}"):
                        continue
                    label = cells[-3][1:]  # after the line sample's space
                    ok = any(label in (s, f"{s} (raw)", f"{s} (smoothed)") for s in labels.get(metric, ()))
                    self.check(ok, f"chart {short(metric)}: the tooltip shows series {short(label)}")
                    if len(cells) == 4:
                        self.check(cells[0] in names, f"the tooltip shows run {short(cells[0])}")
            self.check(seen, f"hovering chart {short(metric)} shows no tooltip")
        for sel in (".run-card", ".legend-item", "#final-results tr", "#config summary",
                    "#examples pre", ".chart-head h3", ".chart-head .key > span"):
            for k in range(page.eval(f"document.querySelectorAll({json.dumps(sel)}).length")):
                page.move_to(*page.centre(f"document.querySelectorAll({json.dumps(sel)})[{k}]"))
        for k in range(len(snap["legend"])):
            for _ in range(2):
                page.click(f'.legend-item[data-run="{k}"]')
        if snap["legend"]:
            page.click('.legend-item[data-run="0"]', double=True)
            page.click('.legend-item[data-run="0"]', double=True)
        for k in range(page.eval("document.querySelectorAll('.log-toggle:not(:disabled)').length")):
            for _ in range(2):
                page.click_at(*page.centre(f"document.querySelectorAll('.log-toggle:not(:disabled)')[{k}]"))
        for k in range(len(snap["configs"])):
            for _ in range(2):
                page.click_at(*page.centre(f"document.querySelectorAll('#config summary')[{k}]"))
        if snap["charts"]:
            x, y = page.centre("document.querySelector('svg.chart .overlay')")
            page.drag(x - 60, y, x + 60, y)
            self.check(page.eval("!document.querySelector('#reset-zoom').hidden"),
                       "dragging across a chart does not zoom")
            page.click_at(*page.centre("document.querySelector('svg.chart .overlay')"), double=True)
        page.eval("(() => { const s = document.querySelector('#smoothing'); s.value = '0.9';"
                  " s.dispatchEvent(new Event('input', {bubbles: true})); })()")
        page.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")

    # --- the attention page ----------------------------------------------------------------------
    def check_attention(self, page, data):
        snap = page.eval(ATTENTION_JS)
        if data.get("format") != "heed-attention/1":
            self.check(snap["error"] is not None and json.dumps(data.get("format")) in snap["error"],
                       f"the error message {short(snap['error'])} does not show the data's format as text")
            return
        if not self.check(snap["ready"] and snap["error"] is None,
                          f"the attention page did not render its data (error: {short(snap['error'])})"):
            return
        model_type = js_string(data.get("model_type"))
        self.check(snap["modelType"] == f"{model_type} attention",
                   f"the heading shows {short(snap['modelType'])}, not the model type")
        self.check(snap["title"].startswith(f"{model_type} attention: "),
                   "the document title lacks the model type")
        views = data["views"]
        names = [js_string(v.get("name")) for v in views]
        self.check(snap["options"] == names, f"the view selector shows {short(snap['options'])}")
        if len(views) > 1:
            self.check(snap["titleViews"] == f"({' · '.join(names)})", "the heading lacks the views' names")
        texts = data.get("texts") or {}
        meta = [[f"{label}: ", js_string(value)] for label, value in
                (("text", texts.get("text")), ("text pair", texts.get("text_pair")),
                 ("target", texts.get("target")), ("checkpoint", data.get("checkpoint") or None))
                if value is not None]
        self.check(snap["meta"] == meta, f"the texts shown are {short(snap['meta'])}, not {short(meta)}")
        for vi, v in enumerate(views):
            if len(views) > 1:
                page.eval(f"(() => {{ const s = document.getElementById('view-select'); s.value = '{vi}';"
                          " s.dispatchEvent(new Event('change', {bubbles: true})); })()")
            self.exercise_view(page, vi, v)
        self.exercise_model_view(page, views)

    def exercise_view(self, page, vi, v):
        for side, tokens, role in (("left", v["query_tokens"], "query"), ("right", v["key_tokens"], "key")):
            labels = page.eval(LABELS_JS % side)
            self.check([[i, js_string(t)] for i, t in enumerate(tokens)] == [l[:2] for l in labels],
                       f"view {vi}: the {role} tokens are not shown as their text")
            self.check(all(title.startswith(f"{role} {i}: {text}") for i, text, title in labels),
                       f"view {vi}: a {role} token's tooltip does not hold its text")
            for k in range(min(len(labels), 40)):
                page.move_to(*page.centre(f"document.querySelectorAll('.token.{side}')[{k}]"))
        page.move_to(*page.centre("document.getElementById('model-type')"))
        for k in range(page.eval("document.querySelectorAll('.head-swatch').length")):
            for _ in range(2):
                page.click(f'.head-swatch[data-head="{k}"]')
        page.click('.head-swatch[data-head="0"]', double=True)
        page.click('.head-swatch[data-head="0"]', double=True)
        page.click("#hide-special")
        page.click("#hide-special")
        if v.get("pair_start") is not None:
            for pair in ("ab", "ba", "all"):
                page.eval(f"(() => {{ const s = document.getElementById('pair-select'); s.value = '{pair}';"
                          " s.dispatchEvent(new Event('change', {bubbles: true})); })()")

    def exercise_model_view(self, page, views):
        for vi, v in enumerate(views):
            if len(views) > 1:
                page.eval(f"(() => {{ const s = document.getElementById('view-select'); s.value = '{vi}';"
                          " s.dispatchEvent(new Event('change', {bubbles: true})); })()")
            page.click("#tab-model")
            page.click('#model-view .thumb[data-layer="0"][data-head="0"]')
            title = page.eval("document.getElementById('detail-title').textContent")
            name = js_string(v.get("name"))
            self.check(title == f"{name}: layer 0, head 0",
                       f"view {vi}: the enlarged map is titled {short(title)}")
            if page.eval("document.getElementById('detail').dataset.labels") == "1":
                for cls, tokens in (("query", v["query_tokens"]), ("key", v["key_tokens"])):
                    shown = page.eval(f"[...document.querySelectorAll('.detail-label.{cls}')]"
                                      ".map((e) => [e.textContent, e.title])")
                    want = [[js_string(t), js_string(t)] for t in tokens]
                    self.check(shown == want,
                               f"view {vi}: the enlarged map's {cls} labels are not the tokens' text")
            box = page.eval("(() => { const c = document.getElementById('detail-canvas');"
                            " const r = c.getBoundingClientRect();"
                            " return [r.left, r.top, Number(c.dataset.cell)]; })()")
            last_q, last_k = len(v["query_tokens"]) - 1, len(v["key_tokens"]) - 1
            for q, k in ((0, 0), (last_q, last_k), (last_q, 0)):
                x, y = box[0] + (k + 0.5) * box[2], box[1] + (q + 0.5) * box[2]
                if not (0 <= x < page.width and 0 <= y < page.height):
                    continue  # a map of hundreds of tokens runs past the window
                page.move_to(x, y)
                readout = page.eval("document.getElementById('detail-readout').textContent")
                want = (f"query {q} {json.dumps(v['query_tokens'][q], ensure_ascii=False)} → key {k} "
                        f"{json.dumps(v['key_tokens'][k], ensure_ascii=False)}: ")
                self.check(readout.startswith(want),
                           f"view {vi}: hovering cell {q},{k} reads {short(readout)}")
            page.press_key("Escape", "Escape", 27)
            page.click("#tab-head")


NOT_EVAL_METRIC = {"step", "split", "model_step", "elapsed_seconds"}


def last_eval_splits(run):
    """The splits whose last in-training evaluation the run's header shows: those with a
    number in it (report.html's prepareRun and runCard)."""
    last = {}
    for rec in run.get("records") or []:
        if (isinstance(rec, dict) and is_num(rec.get("step")) and isinstance(rec.get("split"), str)
                and "model_step" not in rec):
            last[rec["split"]] = rec
    return [split for split, rec in last.items()
            if any(k not in NOT_EVAL_METRIC and is_num(v) for k, v in rec.items())]


def eval_splits(run):
    """The names of a run's evaluation series."""
    return {rec["split"] for rec in run.get("records") or []
            if isinstance(rec, dict) and isinstance(rec.get("split"), str)}


def main(argv):
    browser.reexec_with_system_python_if_needed()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--samples", action="store_true", help="check the templates filled with payload data")
    mode.add_argument("--pages", type=Path, metavar="DIR", help="check every *.html in DIR")
    mode.add_argument("--write-inputs", type=Path, metavar="DIR", help="write the real programs' inputs")
    parser.add_argument("--out", type=Path, metavar="DIR", help="with --samples: keep the pages in DIR")
    parser.add_argument("--templates", type=Path, metavar="DIR", default=TEMPLATES,
                        help="with --samples: the templates' directory (viz/)")
    args = parser.parse_args(argv[1:])
    if args.write_inputs:
        write_inputs(args.write_inputs)
        return 0
    if browser.find_chromium() is None:
        print("chromium not found; the page test is skipped")
        return 77
    try:
        import websocket  # noqa: F401
        import PIL  # noqa: F401
    except ImportError as e:
        print(f"the page test needs python3-websocket and python3-pil: {e}")
        return 1
    with tempfile.TemporaryDirectory(prefix="heed-injection-pages-") as tmp:
        if args.samples:
            out = args.out or Path(tmp)
            out.mkdir(parents=True, exist_ok=True)
            pages = write_samples(out, args.templates)
        else:
            pages = sorted(args.pages.glob("*.html"))
            if not pages:
                print(f"{args.pages}: no *.html pages to check")
                return 1
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
