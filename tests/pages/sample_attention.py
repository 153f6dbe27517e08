#!/usr/bin/python3
"""Fake attention data (format heed-attention/1) and filled pages, for developing and
testing viz/attention.html without a model.

    sample_attention.py OUTDIR [--template viz/attention.html] [--big]

writes OUTDIR/{bert,gpt2,bart}.json and .html (and big.json/.html with --big: 512 tokens,
4 layers x 4 heads). fill_template() fills the template the way `infer attention` does
(viz/page.cpp): /*HEED_SCRIPT_HASHES*/, in the page's Content-Security-Policy, becomes
'sha256-...' of each <script> element written with no attributes (the base64 SHA-256 of the
exact text up to its </script>), without which the browser runs none of the page's script;
then the data replaces its placeholder.
"""

import argparse
import json
import math
import random
from pathlib import Path

from sample_report import script_hashes  # the one substitution both pages' fill() make

PLACEHOLDER = "/*HEED_DATA*/"
HASHES_MARKER = "/*HEED_SCRIPT_HASHES*/"
SPECIAL = {"[CLS]", "[SEP]", "[PAD]", "[BOS]", "[EOS]", "<s>", "</s>", "<pad>"}


def fill_template(template_text, data):
    """The page for `data`: the script hashes in its policy, and the placeholder replaced by the
    JSON (last, as the data may hold the hashes marker's text), every '<' escaped so that no
    '</script>' can end the data block early (JSON.parse reads \\u003c back as '<')."""
    for marker in (PLACEHOLDER, HASHES_MARKER):
        if template_text.count(marker) != 1:
            raise ValueError(f"the template must hold {marker} exactly once")
    page = template_text.replace(HASHES_MARKER, script_hashes(template_text))
    return page.replace(PLACEHOLDER, json.dumps(data, separators=(",", ":")).replace("<", "\\u003c"))


def _matrix(rng, nq, nk, causal, layer, head, decimals=None, peak=3.0, noise=1.0, locality=0.0):
    """One head's attention: a pattern per head (diagonal, previous token, first token,
    broad) plus noise, softmaxed per row; zeros above the diagonal when causal."""
    rows = []
    for q in range(nq):
        last = q if causal else nk - 1
        logits = []
        for k in range(last + 1):
            kind = (layer + head) % 4
            if kind == 0:
                x = peak * (k == min(q, nk - 1))
            elif kind == 1:
                x = peak * (k == max(0, min(q, nk - 1) - 1))
            elif kind == 2:
                x = peak * (k == 0)
            else:
                x = -abs(k - q) * 0.3
            logits.append(x + rng.gauss(0, noise) - locality * abs(k - q))
        top = max(logits)
        w = [math.exp(x - top) for x in logits]
        s = sum(w)
        w = [x / s for x in w]
        if decimals is not None:
            # Rounded to keep a 512-token file near 10 MB; the largest weight takes the
            # rounding error so that the row still sums to 1 (within float precision).
            w = [round(x, decimals) for x in w]
            i = max(range(len(w)), key=w.__getitem__)
            w[i] = round(1.0 - (sum(w) - w[i]), decimals + 2)
            w = [x if x else 0 for x in w]
        rows.append(w + [0] * (nk - len(w)))
    return rows


def _view(rng, name, qtok, ktok, layers, heads, causal=False, pair_start=None, **shape):
    return {
        "name": name,
        "query_tokens": qtok,
        "key_tokens": ktok,
        "query_special": [t in SPECIAL for t in qtok],
        "key_special": [t in SPECIAL for t in ktok],
        "pair_start": pair_start,
        "causal": causal,
        "attention": [[_matrix(rng, len(qtok), len(ktok), causal, l, h, **shape) for h in range(heads)]
                      for l in range(layers)],
    }


def bert(seed=1):
    rng = random.Random(seed)
    toks = ["[CLS]", "the", "cat", "sat", "[SEP]", "it", "<slept>", ".", "[SEP]"]
    return {
        "format": "heed-attention/1",
        "model_type": "bert",
        "checkpoint": "runs/bert_mlm/checkpoint-4000",
        "texts": {"text": "the cat sat", "text_pair": "it <slept>.", "target": None},
        "views": [_view(rng, "self-attention", toks, toks, 2, 3, pair_start=5)],
    }


def gpt2(seed=2):
    rng = random.Random(seed)
    toks = ["The", "\u0120cat", "\u0120sat", "\u0120on", "\u0120the", "\u0120mat", "."]
    return {
        "format": "heed-attention/1",
        "model_type": "gpt2",
        "checkpoint": "runs/gpt2_clm/checkpoint-1000",
        "texts": {"text": "The cat sat on the mat.", "text_pair": None, "target": None},
        "views": [_view(rng, "causal self-attention", toks, toks, 3, 2, causal=True)],
    }


def bart(seed=3):
    rng = random.Random(seed)
    enc = ["<s>", "the", "cat", "sat", "on", "the", "mat", "</s>"]
    dec = ["</s>", "<s>", "a", "cat", "sat", "down"]
    return {
        "format": "heed-attention/1",
        "model_type": "bart",
        "checkpoint": "runs/bart_s2s/checkpoint-2000",
        "texts": {"text": "the cat sat on the mat", "text_pair": None, "target": "a cat sat down"},
        "views": [
            _view(rng, "encoder self-attention", enc, enc, 2, 2),
            _view(rng, "decoder self-attention", dec, dec, 2, 2, causal=True),
            _view(rng, "cross-attention", dec, enc, 2, 2),
        ],
    }


def big(seed=4, n=512, layers=4, heads=4):
    rng = random.Random(seed)
    words = ["the", "cat", "sat", "on", "mat", "and", "a", "dog", "ran", "far", "##ing", ",", "."]
    toks = ["[CLS]"] + [rng.choice(words) for _ in range(n - 2)] + ["[SEP]"]
    return {
        "format": "heed-attention/1",
        "model_type": "bert",
        "checkpoint": "runs/bert_mlm/checkpoint-4000",
        "texts": {"text": " ".join(toks[1:-1]), "text_pair": None, "target": None},
        "views": [_view(rng, "self-attention", toks, toks, layers, heads,
                                decimals=4, peak=8.0, noise=1.5, locality=0.1)],
    }


SAMPLES = {"bert": bert, "gpt2": gpt2, "bart": bart}


def main():
    here = Path(__file__).resolve()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--template", default=str(here.parents[2] / "viz" / "attention.html"))
    ap.add_argument("--big", action="store_true", help="also write big.json/.html (512 tokens, 4x4)")
    args = ap.parse_args()
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    template = Path(args.template).read_text(encoding="utf-8")
    makers = dict(SAMPLES, **({"big": big} if args.big else {}))
    for name, make in makers.items():
        data = make()
        (out / f"{name}.json").write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        (out / f"{name}.html").write_text(fill_template(template, data), encoding="utf-8")
        print(out / f"{name}.html")


if __name__ == "__main__":
    main()
