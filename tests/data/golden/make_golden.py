#!/usr/bin/python3
"""Writes golden.json: expected BERT tokenizations of tricky inputs over vocab.txt.

An independent oracle for data/wordpiece.cpp: the BERT algorithm as specified (REFERENCE.md
section 5, transformers' slow BertTokenizer), written from the spec with Python's own
unicodedata for categories and normalization, not ICU. Run: /usr/bin/python3 make_golden.py
"""
import json
import os
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def is_whitespace(c):
    return c in " \t\n\r" or unicodedata.category(c) == "Zs"


def is_control(c):
    return c not in "\t\n\r" and unicodedata.category(c).startswith("C")


def is_punct(c):
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def is_cjk(cp):
    ranges = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]
    return any(lo <= cp <= hi for lo, hi in ranges)


def basic(text, lower):
    out = []
    for c in text:
        if ord(c) in (0, 0xFFFD) or is_control(c):
            continue
        if is_whitespace(c):
            out.append(" ")
        elif is_cjk(ord(c)):
            out.append(" " + c + " ")
        else:
            out.append(c)
    text = unicodedata.normalize("NFC", "".join(out))
    words = []
    for w in text.split():
        if lower:
            w = w.lower()
            w = "".join(c for c in unicodedata.normalize("NFD", w)
                        if unicodedata.category(c) != "Mn")
        cur = ""
        for c in w:
            if is_punct(c):
                if cur:
                    words.append(cur)
                words.append(c)
                cur = ""
            else:
                cur += c
        if cur:
            words.append(cur)
    return " ".join(words).split()


def split_specials(text):
    """Special token strings in the text stay whole (transformers' added-token split)."""
    parts, i, start = [], 0, 0
    while i < len(text):
        hit = next((s for s in SPECIALS if text.startswith(s, i)), None)
        if hit:
            parts.append((text[start:i], False))
            parts.append((hit, True))
            i += len(hit)
            start = i
        else:
            i += 1
    parts.append((text[start:], False))
    return parts


def wordpiece(word, vocab):
    if len(word) > 100:
        return ["[UNK]"]
    pieces, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            cand = ("##" if start > 0 else "") + word[start:end]
            if cand in vocab:
                found = cand
                break
            end -= 1
        if found is None:
            return ["[UNK]"]
        pieces.append(found)
        start = end
    return pieces


def tokenize(text, vocab, lower):
    tokens = []
    for part, special in split_specials(text):
        if special:
            tokens.append(part)
            continue
        for w in basic(part, lower):
            tokens.extend(wordpiece(w, vocab))
    return tokens


def decode(tokens):
    parts, cur = [], []
    for t in tokens:
        if t in SPECIALS:
            continue
        cur.append(t)
    s = " ".join(cur).replace(" ##", "").strip()
    for a, b in [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"),
                 (" n't", "n't"), (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]:
        s = s.replace(a, b)
    return s


def main():
    with open(os.path.join(HERE, "vocab.txt"), encoding="utf-8") as f:
        vocab_list = [line.rstrip("\n") for line in f]
    vocab = {t: i for i, t in enumerate(vocab_list)}
    cases = [
        ("ascii", "The quick brown fox jumps over the lazy dog.", None, True, 0),
        ("ascii_cased", "The quick brown fox jumps over the lazy dog.", None, False, 0),
        ("subwords", "unaffable playing player jumped", None, True, 0),
        ("accents_uncased", "Café naïve RÉSUMÉ", None, True, 0),
        ("accents_cased", "Café naïve", None, False, 0),
        ("decomposed_cased_nfc", "cafe\u0301", None, False, 0),
        ("lone_combining_mark", "a \u0301 b", None, True, 0),
        ("punctuation", "hello,world!(a)-b?\"c\" $x @ z:e", None, True, 0),
        ("unicode_punctuation", "hello\u2014world \u00bfque? \u00aba\u00bb \u2026", None, True, 0),
        ("ascii_symbols_are_punct", "a$b^c`e+z", None, True, 0),
        ("chinese", "我是中国人", None, True, 0),
        ("chinese_punct", "你好，中国。", None, True, 0),
        ("mixed_scripts", "hello中国world こんにちは 한국", None, True, 0),
        ("hangul_cased", "한국", None, False, 0),
        ("greek_final_sigma", "ΟΔΥΣΣΕΥΣ Ὀδυσσεύς", None, True, 0),
        ("german_sharp_s", "Straße STRASSE ß", None, True, 0),
        ("long_word", "a" * 101 + " b " + "a" * 100, None, True, 0),
        ("unknown_piece", "abq the", None, True, 0),
        ("empty", "", None, True, 0),
        ("whitespace_only", " \t\r\n\u3000\u00a0 ", None, True, 0),
        ("controls", "he\u0000llo\u200b \ufffdworld\u0007 \u00ad", None, True, 0),
        ("zs_whitespace", "hello\u00a0world\u2003the\u2028dog", None, True, 0),
        ("special_tokens_in_text", "the [MASK] dog[SEP]x [mask]", None, True, 0),
        ("digits", "123 12 1", None, True, 0),
        ("contractions", "i'm don't can't", None, True, 0),
        ("pair", "The quick fox.", "Lazy dog!", True, 0),
        ("pair_truncated", "the quick brown fox jumps over", "the lazy dog", True, 9),
        ("pair_truncated_tie", "a b c d", "a b c d", True, 9),
        ("single_truncated", "the quick brown fox jumps over the lazy dog", None, True, 6),
    ]
    out = []
    for name, a, b, lower, max_len in cases:
        ta = tokenize(a, vocab, lower)
        tb = tokenize(b, vocab, lower) if b is not None else None
        if max_len:
            budget = max_len - (3 if tb is not None else 2)
            if tb is None:
                ta = ta[:budget]
            else:
                while len(ta) + len(tb) > budget:
                    if len(ta) > len(tb):
                        ta.pop()
                    else:
                        tb.pop()
        full = ["[CLS]"] + ta + ["[SEP]"]
        types = [0] * len(full)
        if tb is not None:
            full += tb + ["[SEP]"]
            types += [1] * (len(tb) + 1)
        out.append({
            "name": name, "text": a, "text_pair": b, "lowercase": lower,
            "max_length": max_len, "tokens": ta, "tokens_pair": tb,
            "input_ids": [vocab[t] for t in full], "token_type_ids": types,
            "decoded": decode(full),
        })
    with open(os.path.join(HERE, "golden.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
