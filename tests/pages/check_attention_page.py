#!/usr/bin/python3
"""Check an attention page (viz/attention.html filled by `infer attention`) in headless chromium.

    check_attention_page.py PAGE.html DATA.json [-v]

DATA.json is what `infer attention --json` writes for the same input. Exit status: 0 when
every check passes; 1 with one line per failed check; 77 when chromium is absent (ctest's
"skipped"). The line counts expected after each action are computed here from DATA.json,
independently of the page's own code: a line is drawn for each shown head, shown query q and
shown key k with weight >= the page's minimum (1/255), and k <= q in a causal view.
"""

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser  # noqa: E402

SKIP = 77


class Checker:
    def __init__(self, page, data, verbose=False):
        self.page = page
        self.data = data
        self.verbose = verbose
        self.failures = []
        self.passed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
            if self.verbose:
                print(f"ok   {what}")
        else:
            self.failures.append(what)
            if self.verbose:
                print(f"FAIL {what}")
        return ok

    def equal(self, got, want, what):
        return self.check(got == want, f"{what}: got {short(got)}, expected {short(want)}")

    # --- page access ---------------------------------------------------------------

    def canvas(self):
        """The head-view canvas's data attributes and a checksum of its pixels, once drawn."""
        return self.page.eval("""(async () => {
            await heedPage.settled();
            const c = document.getElementById('head-canvas');
            const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let sum = 0;
            for (let i = 0; i < px.length; i++) sum = (Math.imul(sum, 31) + px[i]) >>> 0;
            return {...c.dataset, checksum: sum, size: [c.width, c.height]};
        })()""")

    def labels(self, side):
        """The (index, text) of each token label in a column, top to bottom."""
        return [tuple(x) for x in self.page.eval(f"""[...document.querySelectorAll('.token.{side}')]
            .map(e => [Number(e.dataset.index), e.textContent])""")]

    def set_value(self, selector, value, event):
        """Set a form control's value as a person would and fire the event the page listens to."""
        self.page.eval(f"""(() => {{
            const el = document.querySelector({json.dumps(selector)});
            el.value = {json.dumps(str(value))};
            el.dispatchEvent(new Event({json.dumps(event)}, {{bubbles: true}}));
        }})()""")

    # --- expectations from DATA.json ------------------------------------------------

    @staticmethod
    def visible(view, side, hide_special=False, lo=0, hi=None, pair="all"):
        tokens = view["query_tokens" if side == "left" else "key_tokens"]
        special = view["query_special" if side == "left" else "key_special"]
        hi = len(tokens) - 1 if hi is None else min(hi, len(tokens) - 1)
        if pair != "all" and view.get("pair_start") is not None:
            seg = pair[0 if side == "left" else 1]
            if seg == "a":
                hi = min(hi, view["pair_start"] - 1)
            else:
                lo = max(lo, view["pair_start"])
        return [i for i in range(lo, hi + 1) if not (hide_special and special[i])]

    @staticmethod
    def expected_drawing(view, layer, heads, qs, ks, min_w, hover=None):
        """The lines the page should draw: (head, query row, key row, 8-bit opacity) each."""
        lines = []
        if hover and hover[0] == "left":
            qs = [q for q in qs if q == hover[1]]
        if hover and hover[0] == "right":
            ks = [k for k in ks if k == hover[1]]
        for h in heads:
            m = view["attention"][layer][h]
            for qp, q in enumerate(qs):
                row = m[q]
                for kp, k in enumerate(ks):
                    if view["causal"] and k > q:
                        continue
                    if row[k] >= min_w:
                        lines.append((h, qp, kp, min(255, int(row[k] * 255 + 0.5))))
        return lines

    # --- the checks -------------------------------------------------------------------

    def run(self, data_path_name):
        page, data = self.page, self.data
        self.check(page.eval("document.body.dataset.ready") == "1", "the page finished its first render (body[data-ready])")
        self.check(not browser.is_blank(page.screenshot_png()), "a screenshot of the page is not blank")
        title = page.eval("document.title")
        self.check(data["model_type"] in title, f"the title {title!r} names the model type {data['model_type']!r}")

        # The data in the page is DATA.json's, exactly (floats compared as doubles).
        embedded = json.loads(page.eval("JSON.stringify(window.heedData)"))
        self.check(embedded == data, f"window.heedData equals {data_path_name}")
        for vi, v in enumerate(data["views"]):
            self.check(embedded["views"][vi]["attention"] == v["attention"] if vi < len(embedded.get("views", [])) else False,
                       f"view {vi}: the attention values in the page equal {data_path_name}'s")

        n_views = len(data["views"])
        self.equal(page.eval("document.querySelectorAll('#view-select option').length"), n_views,
                   "view selector options")
        for vi in range(n_views):
            if n_views > 1:
                before = self.labels("left"), self.labels("right")
                self.set_value("#view-select", vi, "change")
                after = self.labels("left"), self.labels("right")
                v = data["views"][vi]
                prev = data["views"][vi - 1] if vi > 0 else None
                if vi > 0 and (prev["query_tokens"], prev["key_tokens"]) != (v["query_tokens"], v["key_tokens"]):
                    self.check(before != after, f"view {vi}: switching the view changes the token labels")
            self.check_view(vi)
        if n_views > 1:
            self.set_value("#view-select", 0, "change")

        self.check_model_view()
        page.pump(0.2)
        self.check(not page.console_errors, f"no console errors (got {short(page.console_errors)})")
        self.check(not page.network_requests, f"no network requests (got {short(page.network_requests)})")

    def check_view(self, vi):
        page, v = self.page, self.data["views"][vi]
        tag = f"view {vi} ({v['name']})"
        L, H = len(v["attention"]), len(v["attention"][0])
        self.set_value("#layer-select", 0, "change")
        self.equal(page.eval("document.querySelectorAll('#layer-select option').length"), L, f"{tag}: layer options")
        self.equal(page.eval("document.querySelectorAll('.head-swatch').length"), H, f"{tag}: head swatches")
        nq, nk = len(v["query_tokens"]), len(v["key_tokens"])
        self.equal(self.labels("left"), list(enumerate(v["query_tokens"])), f"{tag}: query token labels (left)")
        self.equal(self.labels("right"), list(enumerate(v["key_tokens"])), f"{tag}: key token labels (right)")

        c0 = self.canvas()
        min_w = float(c0.get("minWeight", "nan"))
        self.check(abs(min_w - 1 / 255) < 1e-12, f"{tag}: data-min-weight is 1/255 (got {c0.get('minWeight')})")
        all_heads = list(range(H))
        qs, ks = list(range(nq)), list(range(nk))
        drawing = lambda heads, layer=0, q=qs, k=ks, hover=None: \
            self.expected_drawing(v, layer, heads, q, k, min_w, hover)
        expect = lambda *a, **kw: str(len(drawing(*a, **kw)))
        # Pixels must change when what should be drawn changes (near-uniform attention,
        # e.g. an untrained model's, can draw two layers alike).
        differs = lambda *a, **kw: set(drawing(*a, **kw)) != set(drawing(all_heads))
        self.equal(c0.get("drawnHeads"), ",".join(map(str, all_heads)), f"{tag}: all heads drawn at first")
        self.equal(c0.get("drawnLines"), expect(all_heads), f"{tag}: lines drawn at first")
        self.equal(c0.get("view"), str(vi), f"{tag}: data-view")
        self.equal(c0.get("layer"), "0", f"{tag}: data-layer")

        # Clicking a head toggles it.
        page.click('.head-swatch[data-head="0"]')
        c = self.canvas()
        rest = all_heads[1:]
        self.equal(c.get("drawnHeads"), ",".join(map(str, rest)), f"{tag}: after clicking head 0, data-drawn-heads")
        self.equal(c.get("drawnLines"), expect(rest), f"{tag}: after clicking head 0, lines drawn")
        self.check(not page.eval("document.querySelector('.head-swatch[data-head=\"0\"]').classList.contains('active')"),
                   f"{tag}: head 0's swatch is inactive after a click")
        if differs(rest):
            self.check(c["checksum"] != c0["checksum"], f"{tag}: clicking head 0 changes the canvas pixels")
        page.click('.head-swatch[data-head="0"]')
        c = self.canvas()
        self.equal(c.get("drawnHeads"), ",".join(map(str, all_heads)), f"{tag}: a second click on head 0 brings it back")
        self.check(c["checksum"] == c0["checksum"], f"{tag}: ... and the canvas is as it was")

        # Double-clicking a head shows it alone; again, all heads.
        last = H - 1
        page.click(f'.head-swatch[data-head="{last}"]', double=True)
        c = self.canvas()
        self.equal(c.get("drawnHeads"), str(last), f"{tag}: double-clicking head {last} shows it alone")
        self.equal(c.get("drawnLines"), expect([last]), f"{tag}: lines drawn for head {last} alone")
        self.equal(page.eval("document.querySelectorAll('.head-swatch.active').length"), 1,
                   f"{tag}: one active swatch after a double-click")
        if H > 1:
            page.click(f'.head-swatch[data-head="{last}"]', double=True)
            c = self.canvas()
            self.equal(c.get("drawnHeads"), ",".join(map(str, all_heads)),
                       f"{tag}: double-clicking the lone head shows all heads again")

        # Hovering a token shows only its lines.
        q = pick_token(v["query_special"])
        page.hover(f'.token.left[data-index="{q}"]')
        c = self.canvas()
        self.equal(c.get("hover"), f"left:{q}", f"{tag}: hovering query {q} (data-hover)")
        self.equal(c.get("drawnLines"), expect(all_heads, hover=("left", q)), f"{tag}: hovering query {q}, lines drawn")
        if differs(all_heads, hover=("left", q)):
            self.check(c["checksum"] != c0["checksum"], f"{tag}: hovering query {q} changes the canvas pixels")
        k = pick_token(v["key_special"])
        page.hover(f'.token.right[data-index="{k}"]')
        c = self.canvas()
        self.equal(c.get("hover"), f"right:{k}", f"{tag}: hovering key {k} (data-hover)")
        self.equal(c.get("drawnLines"), expect(all_heads, hover=("right", k)), f"{tag}: hovering key {k}, lines drawn")
        page.hover("#model-type")
        c = self.canvas()
        self.equal(c.get("hover"), "", f"{tag}: leaving the tokens ends the hover")
        self.check(c["checksum"] == c0["checksum"], f"{tag}: ... and all lines are back")

        # Another layer draws something else.
        if L > 1:
            self.set_value("#layer-select", L - 1, "change")
            c = self.canvas()
            self.equal(c.get("layer"), str(L - 1), f"{tag}: choosing layer {L - 1} (data-layer)")
            self.equal(c.get("drawnLines"), expect(all_heads, layer=L - 1), f"{tag}: layer {L - 1}, lines drawn")
            if differs(all_heads, layer=L - 1):
                self.check(c["checksum"] != c0["checksum"], f"{tag}: choosing layer {L - 1} changes the canvas pixels")
            self.set_value("#layer-select", 0, "change")

        # Hiding special tokens removes their labels and lines; the rows are not renormalised.
        if any(v["query_special"]) or any(v["key_special"]):
            page.click("#hide-special")
            vq, vk = self.visible(v, "left", True), self.visible(v, "right", True)
            self.equal(self.labels("left"), [(i, v["query_tokens"][i]) for i in vq],
                       f"{tag}: query labels with special tokens hidden")
            self.equal(self.labels("right"), [(i, v["key_tokens"][i]) for i in vk],
                       f"{tag}: key labels with special tokens hidden")
            c = self.canvas()
            self.equal(c.get("drawnLines"), expect(all_heads, q=vq, k=vk), f"{tag}: lines with special tokens hidden")
            self.check(page.eval("!document.getElementById('special-note').hidden"),
                       f"{tag}: the note that rows are not renormalised shows")
            page.click("#hide-special")
            self.equal(len(self.labels("left")), nq, f"{tag}: showing special tokens again")

        # The token range filter.
        n = max(nq, nk)
        lo, hi = min(1, n - 1), min(n - 1, 4)
        self.set_value("#range-from", lo, "input")
        self.set_value("#range-to", hi, "input")
        vq, vk = self.visible(v, "left", lo=lo, hi=hi), self.visible(v, "right", lo=lo, hi=hi)
        self.equal(self.labels("left"), [(i, v["query_tokens"][i]) for i in vq], f"{tag}: query labels for tokens {lo}..{hi}")
        self.equal(self.labels("right"), [(i, v["key_tokens"][i]) for i in vk], f"{tag}: key labels for tokens {lo}..{hi}")
        self.equal(self.canvas().get("drawnLines"), expect(all_heads, q=vq, k=vk), f"{tag}: lines for tokens {lo}..{hi}")
        page.click("#range-reset")
        self.equal(len(self.labels("left")), nq, f"{tag}: 'all tokens' restores the range")

        # A BERT pair: sentence A's queries to sentence B's keys.
        if v.get("pair_start") is not None:
            self.set_value("#pair-select", "ab", "change")
            vq, vk = self.visible(v, "left", pair="ab"), self.visible(v, "right", pair="ab")
            self.equal([i for i, _ in self.labels("left")], vq, f"{tag}: sentence A's queries (A → B)")
            self.equal([i for i, _ in self.labels("right")], vk, f"{tag}: sentence B's keys (A → B)")
            self.equal(self.canvas().get("drawnLines"), expect(all_heads, q=vq, k=vk), f"{tag}: lines A → B")
            self.set_value("#pair-select", "all", "change")

        self.check(self.canvas()["checksum"] == c0["checksum"], f"{tag}: after all this, the first drawing is back")

    def check_model_view(self):
        page = self.page
        for vi, v in enumerate(self.data["views"]):
            tag = f"model view {vi} ({v['name']})"
            if len(self.data["views"]) > 1:
                self.set_value("#view-select", vi, "change")
            page.click("#tab-model")
            L, H = len(v["attention"]), len(v["attention"][0])
            thumbs = page.eval("""[...document.querySelectorAll('#model-view .thumb')]
                .map(t => [Number(t.dataset.layer), Number(t.dataset.head)])""")
            self.equal(sorted(map(tuple, thumbs)), [(l, h) for l in range(L) for h in range(H)],
                       f"{tag}: one thumbnail per layer × head")
            # A thumbnail is all white only when its map has no weight worth a shade.
            white = page.eval("""[...document.querySelectorAll('#model-view .thumb')].filter(t => {
                const c = t.querySelector('canvas');
                const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                for (let i = 0; i < d.length; i += 4)   // unpainted (transparent) counts as white
                    if (d[i + 3] !== 0 && (d[i] !== 255 || d[i + 1] !== 255 || d[i + 2] !== 255)) return false;
                return true; }).map(t => [Number(t.dataset.layer), Number(t.dataset.head)])""")
            shaded = [(l, h) for l in range(L) for h in range(H)
                      if max(max(row) for row in v["attention"][l][h]) >= 2 / 255]
            self.equal([tuple(x) for x in white if tuple(x) in shaded], [],
                       f"{tag}: thumbnails left white although their map has weights")
            l, h = L - 1, H - 1
            sel = f'#model-view .thumb[data-layer="{l}"][data-head="{h}"]'
            page.click(sel)
            self.check(page.eval("!document.getElementById('detail').hidden"), f"{tag}: clicking thumbnail {l},{h} enlarges it")
            self.equal(page.eval("[document.getElementById('detail').dataset.layer, document.getElementById('detail').dataset.head]"),
                       [str(l), str(h)], f"{tag}: the enlarged map is layer {l}, head {h}")
            if page.eval("document.getElementById('detail').dataset.labels") == "1":
                self.equal(page.eval("[...document.querySelectorAll('.detail-label.query')].map(e => e.textContent)"),
                           v["query_tokens"], f"{tag}: the enlarged map's query labels")
                self.equal(page.eval("[...document.querySelectorAll('.detail-label.key')].map(e => e.textContent)"),
                           v["key_tokens"], f"{tag}: the enlarged map's key labels")
            page.press_key("Escape", "Escape", 27)
            self.check(page.eval("document.getElementById('detail').hidden"), f"{tag}: Esc closes the enlarged map")
            page.click(sel)
            page.click("#detail-title")
            self.check(page.eval("document.getElementById('detail').hidden"), f"{tag}: a click closes the enlarged map")
            page.click("#tab-head")
        if len(self.data["views"]) > 1:
            self.set_value("#view-select", 0, "change")


def pick_token(special):
    """A token in the middle that is not special (the hover target)."""
    n = len(special)
    for i in sorted(range(n), key=lambda i: abs(i - n // 2)):
        if not special[i]:
            return i
    return n // 2


def short(x, limit=160):
    s = repr(x)
    return s if len(s) <= limit else s[:limit] + "…"


def main(argv):
    browser.reexec_with_system_python_if_needed()
    args = [a for a in argv[1:] if not a.startswith("-")]
    verbose = "-v" in argv[1:]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    page_path, data_path = map(Path, args)
    if browser.find_chromium() is None:
        print("chromium not found; the page test is skipped")
        return SKIP
    try:
        import websocket  # noqa: F401
        import PIL  # noqa: F401
    except ImportError as e:
        print(f"the page test needs python3-websocket and python3-pil: {e}")
        return 1
    data = json.loads(data_path.read_text(encoding="utf-8"))
    t0 = time.monotonic()
    try:
        with browser.Page(page_path) as page:
            load_s = time.monotonic() - t0
            checker = Checker(page, data, verbose)
            checker.run(data_path.name)
            if verbose:
                print(f"load {load_s:.2f}s, last draw {page.eval('heedPage.lastDrawMs'):.0f} ms")
    except browser.BrowserError as e:
        print(f"FAIL the page could not be checked: {e}")
        return 1
    if checker.failures:
        for f in checker.failures:
            print(f"FAIL {f}")
        return 1
    print(f"ok: {checker.passed} checks passed ({page_path.name}, {time.monotonic() - t0:.1f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
