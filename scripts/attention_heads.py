#!/usr/bin/python3
"""What each head of an `infer attention --json` file attends to, as bertviz's authors describe
heads: the mean weight each query gives to the previous token, the next token, [CLS] and [SEP],
and where a chosen query token (default "it") puts most of its weight.

    build/programs/infer attention --json --checkpoint DIR --text "..." > attn.json
    /usr/bin/python3 scripts/attention_heads.py attn.json [--query it]
"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--query", default="it")
    args = ap.parse_args()
    view = json.load(open(args.file))["views"][0]
    tokens = view["query_tokens"]
    n = len(tokens)
    print(f"tokens: {' '.join(tokens)}")
    print("layer head  prev   next   [CLS]  [SEP]  " + f"'{args.query}' -> most")
    for l, layer in enumerate(view["attention"]):
        for h, head in enumerate(layer):
            prev = sum(head[q][q - 1] for q in range(1, n)) / (n - 1)
            nxt = sum(head[q][q + 1] for q in range(n - 1)) / (n - 1)
            cls = sum(head[q][tokens.index("[CLS]")] for q in range(n)) / n if "[CLS]" in tokens else 0
            sep = sum(sum(row[k] for k in range(n) if tokens[k] == "[SEP]") for row in head) / n
            target = ""
            if args.query in tokens:
                q = tokens.index(args.query)
                k = max(range(n), key=lambda k: head[q][k])
                target = f"{tokens[k]} ({head[q][k]:.2f})"
            print(f"{l:5d} {h:4d}  {prev:.2f}   {nxt:.2f}   {cls:.2f}   {sep:.2f}   {target}")


if __name__ == "__main__":
    main()
