#!/usr/bin/python3
"""Scores `infer translate --json` outputs against a CMUdict split, as the trainer does.

A word is right when its output equals any of its pronunciations (WER: the share of words
with any phoneme wrong); PER is the edit distance to the closest pronunciation (ties go to
the longer one) summed over words, over those pronunciations' lengths summed. This is
decode/sequence_metrics.cpp again, written independently, so that a checkpoint's outputs can
be scored outside the trainer (for instance with beam search):

    cut -f1 datasets/g2p/test.tsv | uniq > words.txt
    build/programs/infer translate --checkpoint runs/seq2seq_g2p/checkpoint-8000 \\
        --num-beams 4 --max-new-tokens 40 --text - --json < words.txt > outputs.jsonl
    python3 scripts/score_g2p.py datasets/g2p/test.tsv outputs.jsonl
"""
import json
import sys


def edit_distance(a, b):
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        diagonal, row[0] = row[0], i
        for j in range(1, len(b) + 1):
            substitute = diagonal + (a[i - 1] != b[j - 1])
            diagonal = row[j]
            row[j] = min(substitute, row[j] + 1, row[j - 1] + 1)
    return row[-1]


def main(references_path, outputs_path):
    references = {}
    with open(references_path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 2:
                sys.exit(f"{references_path}:{number}: expected WORD<TAB>PHONEMES")
            references.setdefault(fields[0], []).append(fields[1].split())
    words = wrong = edits = reference_phonemes = 0
    with open(outputs_path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            output = json.loads(line)
            if output["text"] not in references:
                sys.exit(f"{outputs_path}:{number}: '{output['text']}' is not in {references_path}")
            hypothesis = output["output"].split()
            best = None
            for reference in references[output["text"]]:
                d = edit_distance(hypothesis, reference)
                if best is None or d < best[0] or (d == best[0] and len(reference) > best[1]):
                    best = (d, len(reference))
            words += 1
            wrong += best[0] > 0
            edits += best[0]
            reference_phonemes += best[1]
    if words == 0:
        sys.exit(f"{outputs_path}: no outputs")
    print(f"words {words}  WER {wrong / words:.2%}  PER {edits / reference_phonemes:.2%}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: score_g2p.py REFERENCES.tsv OUTPUTS.jsonl")
    main(sys.argv[1], sys.argv[2])
