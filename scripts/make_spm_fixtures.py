#!/usr/bin/python3
"""Writes tests/data/spm/: two small SentencePiece models (unigram.model, bpe.model) trained on
tests/tiny_data/lm_train.txt, and expected_ids.json with the ids and decodings the Python package
gives for a set of messy texts. heed's SentencePieceTokenizer (data/sentencepiece_tokenizer.cpp)
is checked against these, and its own train() against the options recorded in the JSON.

Needs Debian's SentencePiece 0.1.97 for Python (it links the same libsentencepiece as heed):
    apt-get install python3-sentencepiece
Usage, from the repository root:
    /usr/bin/python3 scripts/make_spm_fixtures.py
"""
import json
import os
import sys

import sentencepiece as spm

CORPUS = "tests/tiny_data/lm_train.txt"
OUT_DIR = "tests/data/spm"
SEED = 1234

# T5's layout for the special ids (pad 0, eos 1, unk 2, no bos) so that "absent" (-1) is
# exercised too; <sep> is a user-defined symbol, which the encoder never splits.
COMMON_OPTIONS = {
    # The corpus has few distinct words: BPE finds no more than 97 pieces in it, unigram 131.
    "vocab_size": 80,
    "character_coverage": 1.0,
    "user_defined_symbols": "<sep>",
    "pad_id": 0,
    "eos_id": 1,
    "unk_id": 2,
    "bos_id": -1,
    # One thread: the trainers split the work by thread, so more threads could change ties.
    "num_threads": 1,
}

TEXTS = [
    ("ascii_corpus_sentence", "the small cat sees the whale near the house ."),
    ("ascii_unseen_words", "a zebra quickly jumped over 42 lazy foxes!"),
    ("uppercase", "The Small CAT Sees THE Whale"),
    ("punctuation", "cat, dog; ship: bird? (moon) [sea] {shore} \"house\" 'harbor'"),
    ("digits", "0123456789 3.14159 1,000,000"),
    ("accents_precomposed", "café naïve façade Zürich señor"),
    ("accents_combining", "cafe\u0301 nai\u0308ve"),
    ("cjk", "日本語のテキスト 中文文本 한국어"),
    ("emoji", "the cat 🐱 sees the whale 🐳 👍🏽 👨‍👩‍👧"),
    ("whitespace_runs", "the   cat \t\t sees\n\nthe  whale"),
    ("leading_trailing_spaces", "   the cat sees the sea   "),
    ("only_spaces", "     "),
    ("empty", ""),
    ("user_defined_symbol", "the cat<sep>the dog <sep> the bird"),
    ("control_piece_spelled", "the cat </s> the dog <pad> <unk>"),
    ("nfkc_fullwidth", "ｔｈｅ ｃａｔ ①②③ ﬁsh"),
    ("meta_symbol_in_text", "the\u2581cat \u2581\u2581 sees"),
    ("long_word", "thethethethethethethethethethethethethethethethe"),
    ("mixed_scripts", "the cat says мяу and ニャー and 🐾 ."),
    ("newlines_only", "\n\n\n"),
    ("single_char", "t"),
]


def train(model_type):
    prefix = os.path.join(OUT_DIR, model_type)
    spm.set_random_generator_seed(SEED)
    spm.SentencePieceTrainer.train(
        input=CORPUS, model_prefix=prefix, model_type=model_type, **COMMON_OPTIONS
    )
    # The .vocab file is a readable copy of the model's pieces; the tests do not need it.
    os.remove(prefix + ".vocab")
    return spm.SentencePieceProcessor(model_file=prefix + ".model")


def main():
    if not os.path.isfile(CORPUS):
        sys.exit(f"make_spm_fixtures.py: run from the repository root ({CORPUS} not found)")
    os.makedirs(OUT_DIR, exist_ok=True)
    models = {}
    cases = [{"name": name, "text": text, "ids": {}, "decoded": {}} for name, text in TEXTS]
    for model_type in ("unigram", "bpe"):
        sp = train(model_type)
        models[model_type] = {
            "file": model_type + ".model",
            "vocab_size": sp.get_piece_size(),
            "pad_id": sp.pad_id(),
            "unk_id": sp.unk_id(),
            "bos_id": sp.bos_id(),
            "eos_id": sp.eos_id(),
            "sep_id": sp.piece_to_id("<sep>"),
            "pieces": [sp.id_to_piece(i) for i in range(sp.get_piece_size())],
        }
        for case in cases:
            ids = sp.encode(case["text"], out_type=int)
            case["ids"][model_type] = ids
            case["decoded"][model_type] = sp.decode(ids)
    fixture = {
        "generator": "scripts/make_spm_fixtures.py, sentencepiece " + spm.__version__,
        "corpus": CORPUS,
        "seed": SEED,
        "train_options": COMMON_OPTIONS,
        "models": models,
        "cases": cases,
    }
    with open(os.path.join(OUT_DIR, "expected_ids.json"), "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
