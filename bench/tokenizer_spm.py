#!/usr/bin/python3
"""The SentencePiece library through its own Python bindings (Debian's python3-sentencepiece)
on the corpus bench/tokenizer_bench.cpp encodes, the same strings: the corpus's lines, one
untimed pass, then timed passes. Prints the `key: value` lines bench/compare_tokenizers.sh
reads.

    /usr/bin/python3 bench/tokenizer_spm.py [--model datasets/spm8000.model] [--corpus FILE]
        [--passes 2] [--mode line|batch]
    /usr/bin/python3 bench/tokenizer_spm.py --print-ids N   (the ids of the first N lines)

--mode line (the default) is sp.encode(line) per line, as heed calls it. --mode batch is one
sp.encode(lines, num_threads=1) call per pass, which encodes the list in C++ on one worker
thread; on this corpus it was the slower of the two (6.3-6.9 MB/s against 7.2-7.7 on a Zen 3
EPYC, and no faster with Python's garbage collector off), and batches of 1,024 lines only
tied per-line calls.
"""
import argparse
import os
import sys
import time

import sentencepiece


def read_lines(path):
    """The lines without their "\\n", as std::getline gives them; the corpus must be UTF-8."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def encode_all(sp, lines, mode):
    """The number of tokens of all lines."""
    if mode == "batch":
        return sum(len(ids) for ids in sp.encode(lines, num_threads=1))
    tokens = 0
    for line in lines:
        tokens += len(sp.encode(line))
    return tokens


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.environ.get("HEED_BENCH_SPM", "datasets/spm8000.model"))
    ap.add_argument("--corpus",
                    default=os.environ.get("HEED_BENCH_CORPUS", "datasets/pretrain/train.txt"))
    ap.add_argument("--passes", type=int, default=2, help="timed passes over the corpus")
    ap.add_argument("--mode", choices=["line", "batch"], default="line")
    ap.add_argument("--print-ids", type=int, default=0, metavar="N")
    args = ap.parse_args()
    if args.passes < 1:
        ap.error("--passes must be at least 1")
    try:
        sp = sentencepiece.SentencePieceProcessor(model_file=args.model)
        lines = read_lines(args.corpus)
    except (OSError, RuntimeError, UnicodeDecodeError) as e:
        sys.exit(f"tokenizer_spm.py: {e}")

    if args.print_ids > 0:
        for ids in sp.encode(lines[:args.print_ids]):
            print(" ".join(map(str, ids)))
        return
    size = sum(len(line.encode("utf-8")) + 1 for line in lines)
    encode_all(sp, lines, args.mode)  # warm-up, as the other programs do
    start = time.perf_counter()
    for _ in range(args.passes):
        tokens = encode_all(sp, lines, args.mode)
    seconds = time.perf_counter() - start

    print(f"implementation: sentencepiece {sentencepiece.__version__} Python "
          f"{sys.version.split()[0]} encode {args.mode}")
    print(f"lines: {len(lines)}")
    print(f"MB: {size / 1e6:.6f}")
    print(f"tokens: {tokens}")
    print(f"seconds: {seconds / args.passes:.6f}")
    print(f"MB_per_s: {size * args.passes / seconds / 1e6:.3f}")


if __name__ == "__main__":
    main()
