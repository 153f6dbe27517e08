#!/usr/bin/python3
"""The bag-of-words baseline for the spam task: multinomial naive Bayes on the same splits.

The issue sets the transformer's target against a naive Bayes; this measures one on our
split so the README can compare like with like. Words are lower-cased runs of letters and
digits (plus $, ! and %); Laplace smoothing `alpha`; words unseen in training are skipped.

    /usr/bin/python3 scripts/naive_bayes_spam.py [--data datasets/spam] [--alpha 0.1]
        [--max-words 0] [--max-train-samples 0]

prints accuracy and spam F1 on validation and test. --max-words N reads only a message's
first N words (0: all), as the transformer reads only its first max_seq_length pieces.
--max-train-samples N learns from the first N training messages only (0: all), as the
train config's data.max_train_samples does.
Pure standard library, so it needs nothing from pip.
"""
import argparse
import collections
import math
import re
import sys

WORD = re.compile(r"[a-z0-9$]+(?:['.-][a-z0-9]+)*|[!$%]")


def load(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            label, sep, text = line.rstrip("\n").partition("\t")
            if not sep or label not in ("ham", "spam"):
                sys.exit(f"{path}:{number}: expected 'ham|spam<TAB>text'")
            rows.append((label, text))
    return rows


def words(text, max_words):
    found = WORD.findall(text.lower())
    return found[:max_words] if max_words else found


class NaiveBayes:
    def __init__(self, rows, alpha, max_words):
        self.max_words = max_words
        counts = {"ham": collections.Counter(), "spam": collections.Counter()}
        docs = collections.Counter()
        for label, text in rows:
            docs[label] += 1
            counts[label].update(words(text, max_words))
        vocab = set(counts["ham"]) | set(counts["spam"])
        self.log_prior = {c: math.log(docs[c] / len(rows)) for c in counts}
        self.log_p = {}
        for c, counter in counts.items():
            denominator = sum(counter.values()) + alpha * len(vocab)
            self.log_p[c] = {w: math.log((counter[w] + alpha) / denominator) for w in vocab}

    def predict(self, text):
        ws = [w for w in words(text, self.max_words) if w in self.log_p["ham"]]
        score = {c: self.log_prior[c] + sum(self.log_p[c][w] for w in ws) for c in self.log_p}
        return max(score, key=score.get)


def scores(model, rows):
    tp = fp = fn = correct = 0
    for label, text in rows:
        guess = model.predict(text)
        correct += guess == label
        tp += guess == "spam" and label == "spam"
        fp += guess == "spam" and label == "ham"
        fn += guess == "ham" and label == "spam"
    return correct / len(rows), 2 * tp / (2 * tp + fp + fn)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="datasets/spam")
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--max-words", type=int, default=0)
    parser.add_argument("--max-train-samples", type=int, default=0)
    args = parser.parse_args()
    train = load(f"{args.data}/train.tsv")
    if args.max_train_samples:
        train = train[: args.max_train_samples]
    model = NaiveBayes(train, args.alpha, args.max_words)
    for split in ("valid", "test"):
        accuracy, spam_f1 = scores(model, load(f"{args.data}/{split}.tsv"))
        print(f"{split}: accuracy {100 * accuracy:.2f}% spam F1 {spam_f1:.3f}")


if __name__ == "__main__":
    main()
