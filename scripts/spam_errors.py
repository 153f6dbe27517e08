#!/usr/bin/python3
"""Which spam messages each classifier gets wrong, and how far the runs agree on them.

Whether pretraining can still pay once every label is used depends on what is left to fix:
if the runs, pretrained or not, miss mostly the same messages, no better encoder shows in
their error counts. This classifies the validation and test messages with each checkpoint
(through `infer classify --json`, which cuts a message as its training run did), adds the
naive Bayes of scripts/naive_bayes_spam.py, and prints each run's errors, how many messages
k of the runs miss, and the messages that every run misses.

    /usr/bin/python3 scripts/spam_errors.py [--infer build/programs/infer]
        [--data datasets/spam] [--show 0] [--matrix] NAME=CHECKPOINT_DIR ...

Pure standard library, so it needs nothing from pip.
"""
import argparse
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from naive_bayes_spam import NaiveBayes, load  # noqa: E402


def infer_labels(infer, checkpoint, texts):
    """The label `infer classify` gives each text, in order."""
    result = subprocess.run(
        [infer, "classify", "--checkpoint", checkpoint, "--text", "-", "--json"],
        input="\n".join(texts) + "\n", capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{checkpoint}: infer failed: {result.stderr.strip()}")
    labels = [json.loads(line)["label"] for line in result.stdout.splitlines() if line]
    if len(labels) != len(texts):
        sys.exit(f"{checkpoint}: {len(labels)} predictions for {len(texts)} messages")
    return labels


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--infer", default="build/programs/infer")
    parser.add_argument("--data", default="datasets/spam")
    parser.add_argument("--show", type=int, default=0,
                        help="print the first N characters of each message every run misses")
    parser.add_argument("--matrix", action="store_true",
                        help="print every missed message with a mark per run")
    parser.add_argument("runs", nargs="+", metavar="NAME=CHECKPOINT_DIR")
    args = parser.parse_args()

    rows = [(split, label, text) for split in ("valid", "test")
            for label, text in load(f"{args.data}/{split}.tsv")]
    texts = [text for _, _, text in rows]
    wrong = {}  # run name -> set of row indices
    for run in args.runs:
        name, sep, checkpoint = run.partition("=")
        if not sep:
            sys.exit(f"{run}: expected NAME=CHECKPOINT_DIR")
        labels = infer_labels(args.infer, checkpoint, texts)
        wrong[name] = {i for i, (_, label, _) in enumerate(rows) if labels[i] != label}
    bayes = NaiveBayes(load(f"{args.data}/train.tsv"), alpha=0.1, max_words=0)
    wrong["naive_bayes"] = {i for i, (_, label, text) in enumerate(rows)
                            if bayes.predict(text) != label}

    print(f"{'run':<24} valid test both  (of {len(rows)} messages)")
    for name, indices in wrong.items():
        per_split = collections.Counter(rows[i][0] for i in indices)
        print(f"{name:<24} {per_split['valid']:>5} {per_split['test']:>4} {len(indices):>4}")

    transformers = [name for name in wrong if name != "naive_bayes"]
    missed_by = collections.Counter()
    for indices in (wrong[name] for name in transformers):
        missed_by.update(indices)
    print(f"\nmessages missed by k of the {len(transformers)} checkpoints "
          "(and, of those, by naive Bayes too):")
    for k in range(1, len(transformers) + 1):
        at_k = [i for i, n in missed_by.items() if n == k]
        also_bayes = sum(i in wrong["naive_bayes"] for i in at_k)
        print(f"  k={k}: {len(at_k)} ({also_bayes})")
    if args.matrix:
        names = list(wrong)
        print("\nevery missed message, x where a run misses it: " + " ".join(names))
        for i in sorted(set().union(*wrong.values()), key=lambda i: -missed_by[i]):
            split, label, text = rows[i]
            marks = " ".join("x" if i in wrong[n] else "." for n in names)
            print(f"  {marks}  {split} {label}: {text[:60]}")
    everyone = sorted(i for i, n in missed_by.items() if n == len(transformers))
    if args.show:
        print("\nmissed by every checkpoint:")
        for i in everyone:
            split, label, text = rows[i]
            print(f"  {split} {label}: {text[:args.show]}")


if __name__ == "__main__":
    main()
