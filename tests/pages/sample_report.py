#!/usr/bin/env python3
"""Sample data for the training report page (viz/report.html), filled in as `train` does.

    python3 tests/pages/sample_report.py OUT_DIR [--template viz/report.html]

writes OUT_DIR/running.html (an MLM run mid-training, with evaluations and a few null values),
OUT_DIR/finished.html (a seq2seq run with final metrics, a best model and examples),
OUT_DIR/compare.html (two CLM runs of 3,000 and 2,200 training records on the same axes: one finished, one
stopped), OUT_DIR/single.html (a run with one record) and OUT_DIR/empty.html (a run with no
record yet), and prints their paths.

fill() is the substitution the C++ side (viz/page.cpp) makes: the refresh marker becomes a meta
refresh tag while a run is going; /*HEED_SCRIPT_HASHES*/, in the page's Content-Security-Policy,
becomes 'sha256-...' of each <script> element written with no attributes (the base64 SHA-256 of
the exact text up to its </script>), without which the browser runs none of the page's script;
and, last, since the data may hold the other markers' text, the JSON replaces /*HEED_DATA*/ with
every '<' escaped (so no '</script>' can end the data early, and JSON.parse reads it unchanged).
"""
import argparse
import base64
import hashlib
import json
import math
import random
from pathlib import Path

DATA_MARKER = "/*HEED_DATA*/"
REFRESH_MARKER = "<!--HEED_REFRESH-->"
HASHES_MARKER = "/*HEED_SCRIPT_HASHES*/"
REFRESH_TAG = '<meta name="heed-refresh" content="30">'
TEMPLATE = Path(__file__).resolve().parents[2] / "viz" / "report.html"


def script_hashes(template: str) -> str:
    """The Content-Security-Policy sources that let the template's own scripts run."""
    sources, at = [], 0
    while (start := template.find("<script>", at)) >= 0:
        end = template.find("</script>", start)
        digest = hashlib.sha256(template[start + len("<script>"):end].encode("utf-8")).digest()
        sources.append(f"'sha256-{base64.b64encode(digest).decode()}'")
        at = end
    return " ".join(sources)


def fill(template: str, data: dict) -> str:
    for marker in (DATA_MARKER, REFRESH_MARKER, HASHES_MARKER):
        assert template.count(marker) == 1, f"the template holds {marker} once"
    # allow_nan=False: JSON has no NaN; nlohmann writes a non-finite double as null, and so must we.
    payload = json.dumps(data, allow_nan=False).replace("<", "\\u003c")
    running = any(isinstance(run, dict) and run.get("status") == "running" for run in data["runs"])
    page = template.replace(REFRESH_MARKER, REFRESH_TAG if running else "")
    page = page.replace(HASHES_MARKER, script_hashes(template))
    return page.replace(DATA_MARKER, payload)


def training_records(rng, steps, every, loss0, loss_end, lr_peak, warmup, tokens_per_s, nulls=()):
    """Records of the mean loss each `every` steps: an exponential fall with noise, linear warmup
    and decay of the learning rate, `nulls` the steps whose grad_norm is not finite."""
    records = []
    t = 0.0
    for step in range(every, steps + 1, every):
        loss = loss_end + (loss0 - loss_end) * math.exp(-step / (steps / 6)) + rng.gauss(0, 0.12)
        lr = lr_peak * (step / warmup if step < warmup else max(0.0, 1 - (step - warmup) / steps))
        tps = tokens_per_s * (1 + rng.gauss(0, 0.03))
        t += every * 2048 / tps
        grad = None if step in nulls else abs(1.0 + 2.5 * math.exp(-step / 400) + rng.gauss(0, 0.2))
        records.append({"step": step, "loss": round(loss, 5), "lr": lr, "grad_norm": grad,
                        "tokens_per_second": round(tps, 1), "elapsed_seconds": round(t, 2)})
    return records


def mlm_config(output_dir, lr="1.0e-3"):
    return (f"task: mlm\nmodel:\n  arch: bert\n  hidden_size: 256\n  num_hidden_layers: 4\n"
            f"  num_attention_heads: 4\n  intermediate_size: 1024\ntokenizer:\n  type: wordpiece\n"
            f"  vocab: datasets/pretrain_vocab.txt\ndata:\n  train: datasets/pretrain/train.txt\n"
            f"  valid: datasets/pretrain/valid.txt\n  max_seq_length: 128\noptim:\n  name: adamw\n"
            f"  lr: {lr}\ntrain:\n  batch_size: 16\n  max_steps: 4000\n  output_dir: {output_dir}\n"
            f"eval:\n  every_steps: 250\n")


def running_run(rng):
    records = []
    train = training_records(rng, 1200, 10, 9.2, 4.0, 1e-3, 300, 8100.0, nulls={370, 380})
    train[57]["loss"] = None  # a non-finite loss the page must skip
    for r in train:
        records.append(r)
        if r["step"] % 250 == 0:
            loss = 4.0 + 5.0 * math.exp(-r["step"] / 200) + 0.2
            records.append({"step": r["step"], "split": "valid", "accuracy": 0.05 + r["step"] / 4000,
                            "loss": loss, "perplexity": math.exp(loss)})
    return {
        "name": "runs/bert_mlm", "status": "running", "task": "mlm",
        "config_yaml": mlm_config("runs/bert_mlm") + "# a <tag> & \"quotes\" survive the escaping\n",
        "model": {"architecture": "BertForMaskedLM", "parameters": 4385792, "dtype": "f32"},
        "machine": {"cpu": "AMD EPYC 9R14", "threads": 2},
        "progress": {"step": 1200, "max_steps": 4000, "elapsed_seconds": 312.5,
                     "remaining_seconds": 728.0},
        "records": records, "final": None, "examples": "",
    }


def finished_run(rng):
    records = []
    train = training_records(rng, 2000, 50, 4.2, 0.9, 1e-3, 300, 5200.0)
    for r in train:
        records.append(r)
        if r["step"] % 500 == 0:
            s = r["step"]
            loss = 0.95 + 2.5 * math.exp(-s / 400)
            records.append({"step": s, "split": "valid", "loss": loss, "perplexity": math.exp(loss),
                            "sequence_error_rate": 0.28 + 0.6 * math.exp(-s / 500),
                            "token_error_rate": 0.065 + 0.2 * math.exp(-s / 500)})
    # The best model (step 1500) loaded at the end and evaluated again: the final table's rows,
    # not points of the curves.
    best = {"loss": 1.01, "perplexity": math.exp(1.01), "sequence_error_rate": 0.2742,
            "token_error_rate": 0.0651}
    records.append({"step": 2000, "split": "valid", "model_step": 1500, **best})
    test = {"loss": 1.03, "perplexity": math.exp(1.03), "sequence_error_rate": 0.2791,
            "token_error_rate": 0.0668}
    records.append({"step": 2000, "split": "test", "model_step": 1500, **test})
    examples = ("outputs on held-out sources (output | reference):\n"
                "  ABANDON -> AH0 B AE1 N D AH0 N | AH0 B AE1 N D AH0 N\n"
                "  <ZYGOTE> -> Z AY1 G OW2 T | Z AY1 G OW0 T\n"
                "  QUIXOTIC -> K W IH0 K S AA1 T IH0 K | K W IH0 K S AA1 T IH0 K")
    return {
        "name": "runs/seq2seq_g2p", "status": "finished", "task": "seq2seq",
        "config_yaml": ("task: seq2seq\nmodel:\n  arch: bart\n  d_model: 256\ntrain:\n"
                        "  max_steps: 2000\n  output_dir: runs/seq2seq_g2p\neval:\n"
                        "  every_steps: 500\n  metric_for_best_model: sequence_error_rate\n"
                        "  load_best_model_at_end: true\n"),
        "model": {"architecture": "BartForConditionalGeneration", "parameters": 7_934_208,
                  "dtype": "bf16"},
        "machine": {"cpu": "Intel Xeon Platinum 8488C", "threads": 2},
        "progress": {"step": 2000, "max_steps": 2000, "elapsed_seconds": 5021.0,
                     "remaining_seconds": 0},
        "records": records,
        "final": {"step": 2000, "tokens_seen": 2000 * 128 * 40, "elapsed_seconds": 5021.0,
                  "checkpoint": "runs/seq2seq_g2p/checkpoint-1500",
                  "metric_for_best_model": "sequence_error_rate", "greater_is_better": False,
                  "best_metric": 0.2742, "best_global_step": 1500,
                  "best_model_checkpoint": "runs/seq2seq_g2p/checkpoint-1500",
                  "valid": best, "test": test},
        "examples": examples,
    }


def clm_run(rng, name, lr, lr_text, status, steps, loss_end):
    records = []
    for r in training_records(rng, steps, 5, 9.0, loss_end, lr, 500, 15000.0):
        records.append(r)
        if r["step"] % 1000 == 0:
            loss = loss_end + 0.3 + 6 * math.exp(-r["step"] / 2000)
            records.append({"step": r["step"], "split": "valid", "loss": loss,
                            "perplexity": math.exp(loss)})
    final = None
    if status == "finished":
        final = {"step": steps, "tokens_seen": steps * 4096, "elapsed_seconds": 3600.0,
                 "checkpoint": f"{name}/checkpoint-{steps}",
                 "valid": {"loss": records[-1]["loss"], "perplexity": records[-1]["perplexity"]},
                 "test": {"loss": loss_end + 0.35, "perplexity": math.exp(loss_end + 0.35)}}
        records.append({"step": steps, "split": "test", **final["test"]})
    config = (f"task: clm\nmodel:\n  arch: gpt2\n  n_embd: 256\noptim:\n  lr: {lr_text}\n"
              f"train:\n  max_steps: 15000\n  output_dir: {name}\n")
    return {
        "name": name, "status": status, "task": "clm", "config_yaml": config,
        "model": {"architecture": "GPT2LMHeadModel", "parameters": 1_234_567_890 // 1000,
                  "dtype": "f32"},
        "machine": {"cpu": "AMD EPYC", "threads": 2},
        "progress": {"step": steps, "max_steps": 15000, "elapsed_seconds": 3600.0 * steps / 15000,
                     "remaining_seconds": None},
        "records": records, "final": final, "examples": "",
    }


def single_run():
    return {
        "name": "runs/tiny", "status": "stopped", "task": "sequence_classification",
        "config_yaml": "task: sequence_classification\n",
        "model": {"architecture": "BertForSequenceClassification", "parameters": 999,
                  "dtype": "f32"},
        "machine": {"cpu": "", "threads": 1},
        "progress": {"step": 1, "max_steps": 10, "elapsed_seconds": 0.4,
                     "remaining_seconds": None},
        "records": [{"step": 1, "loss": 0.69, "lr": 0.0, "grad_norm": 0.0,
                     "tokens_per_second": 900.0, "elapsed_seconds": 0.4}],
        "final": None, "examples": "",
    }


def empty_run():
    """A run that has logged nothing yet, with the optional parts missing."""
    return {
        "name": "runs/just_started", "status": "running", "task": "clm",
        "config_yaml": "task: clm\n", "model": None, "machine": None,
        "progress": {"step": 0, "max_steps": 100, "elapsed_seconds": 1.5,
                     "remaining_seconds": None},
        "records": [], "final": None, "examples": "",
    }


def report(title, runs):
    return {"format": "heed-report/1", "generated": "2026-12-02T23:59:00Z", "title": title,
            "runs": runs}


def samples():
    rng = random.Random(7)
    run_a = clm_run(rng, "runs/gpt_lr1e-3", 1e-3, "1.0e-3", "finished", 15000, 3.1)
    run_b = clm_run(rng, "runs/gpt_lr3e-4", 3e-4, "3.0e-4", "stopped", 11000, 3.4)
    return {
        "running": report("runs/bert_mlm", [running_run(rng)]),
        # A run killed by SIGKILL: its own page still says running, but is older than the time
        # by which the trainer said it would write the next one.
        "killed": report("runs/bert_mlm", [dict(running_run(rng), stale_after_seconds=900.0)]),
        "finished": report("runs/seq2seq_g2p", [finished_run(rng)]),
        "compare": report("2 runs", [run_a, run_b]),
        "single": report("runs/tiny", [single_run()]),
        "empty": report("runs/just_started", [empty_run()]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--template", type=Path, default=TEMPLATE)
    args = parser.parse_args()
    template = args.template.read_text(encoding="utf-8")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, data in samples().items():
        path = args.out_dir / f"{name}.html"
        path.write_text(fill(template, data), encoding="utf-8")
        print(path)


if __name__ == "__main__":
    main()
