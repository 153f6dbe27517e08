#!/usr/bin/python3
"""Writes the small synthetic datasets that the tiny configs (configs/tiny/*.yaml) and the
end-to-end tests train on, under tests/tiny_data/. Deterministic: a fixed seed, so the
committed files are reproduced byte for byte. The language is a toy grammar with enough
structure for a model to learn in seconds (agreement between subject and verb, fixed
collocations), so a falling loss means something.

    /usr/bin/python3 scripts/make_tiny_data.py
"""
import os
import random

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "tiny_data")

ADJ = ["red", "small", "old", "quiet", "bright", "cold", "heavy", "green"]
NOUN_S = ["cat", "dog", "ship", "whale", "sailor", "captain", "bird", "house"]
NOUN_P = ["cats", "dogs", "ships", "whales", "sailors", "captains", "birds", "houses"]
VERB_S = ["sees", "follows", "finds", "likes", "watches"]
VERB_P = ["see", "follow", "find", "like", "watch"]
PLACE = ["on the sea", "in the harbor", "near the house", "under the moon", "at the shore"]


def sentence(rng):
    if rng.random() < 0.5:
        subject, verb = f"the {rng.choice(ADJ)} {rng.choice(NOUN_S)}", rng.choice(VERB_S)
    else:
        subject, verb = f"the {rng.choice(ADJ)} {rng.choice(NOUN_P)}", rng.choice(VERB_P)
    obj = f"the {rng.choice(NOUN_S + NOUN_P)}"
    return f"{subject} {verb} {obj} {rng.choice(PLACE)} ."


def note(rng):
    """An e-mail-like line: the pretraining corpus covers the classification task's words,
    as a real pretraining corpus covers the domain it is fine-tuned on."""
    topical = SPAM if rng.random() < 0.5 else HAM
    return " ".join(rng.choice(topical if rng.random() < 0.5 else COMMON) for _ in range(rng.randint(6, 12)))


def write_lm(rng):
    for split, docs in (("train", 120), ("valid", 12), ("test", 12)):
        lines = []
        for d in range(docs):
            make = note if d % 3 == 2 else sentence
            lines += [make(rng) for _ in range(rng.randint(5, 12))]
            lines.append("")
        with open(os.path.join(OUT, f"lm_{split}.txt"), "w") as f:
            f.write("\n".join(lines))


SPAM = ["free", "money", "click", "offer", "winner", "prize", "cheap", "now", "credit", "cash"]
HAM = ["meeting", "tomorrow", "project", "report", "lunch", "team", "notes", "draft", "review", "agenda"]
COMMON = ["the", "a", "your", "for", "and", "to", "please", "this", "is", "we"]


def write_spam(rng):
    for split, n in (("train", 400), ("valid", 60), ("test", 60)):
        rows = []
        for _ in range(n):
            label = "spam" if rng.random() < 0.35 else "ham"
            topical = SPAM if label == "spam" else HAM
            words = [rng.choice(topical if rng.random() < 0.45 else COMMON) for _ in range(rng.randint(6, 14))]
            rows.append(f"{label}\t{' '.join(words)}")
        with open(os.path.join(OUT, f"spam_{split}.tsv"), "w") as f:
            f.write("\n".join(rows) + "\n")


def tagged_sentence(rng):
    """The toy grammar with its part-of-speech tags (Brown-like tag names)."""
    plural = rng.random() < 0.5
    words = [("the", "AT"), (rng.choice(ADJ), "JJ"),
             (rng.choice(NOUN_P if plural else NOUN_S), "NNS" if plural else "NN"),
             (rng.choice(VERB_P if plural else VERB_S), "VB" if plural else "VBZ"), ("the", "AT")]
    obj_plural = rng.random() < 0.5
    words.append((rng.choice(NOUN_P if obj_plural else NOUN_S), "NNS" if obj_plural else "NN"))
    preposition, _, noun = rng.choice(PLACE).split(" ")
    words += [(preposition, "IN"), ("the", "AT"), (noun, "NN"), (".", ".")]
    return words


def write_pos(rng):
    for split, n in (("train", 300), ("valid", 40), ("test", 40)):
        with open(os.path.join(OUT, f"pos_{split}.conll"), "w") as f:
            for _ in range(n):
                for word, tag in tagged_sentence(rng):
                    f.write(f"{word}\t{tag}\n")
                f.write("\n")


# A toy spelling system for grapheme-to-phoneme: letters map to phonemes (ARPAbet names),
# with the context rules that make the task a sequence problem rather than a lookup: the
# digraphs SH, TH, CH, EE, OO; C is S before E or I and K elsewhere; a final E is silent.
ONSETS = ["B", "C", "D", "F", "G", "K", "L", "M", "N", "P", "R", "S", "T", "SH", "TH", "CH"]
VOWELS = ["A", "E", "I", "O", "U", "EE", "OO"]
CODAS = ["", "", "N", "T", "S", "L", "M", "CK", "SH"]
LETTER = {"A": "AE", "B": "B", "D": "D", "E": "EH", "F": "F", "G": "G", "I": "IH", "K": "K",
          "L": "L", "M": "M", "N": "N", "O": "AA", "P": "P", "R": "R", "S": "S", "T": "T",
          "U": "AH"}
DIGRAPH = {"SH": "SH", "TH": "TH", "CH": "CH", "EE": "IY", "OO": "UW", "CK": "K"}


def pronounce(word):
    phones, i = [], 0
    while i < len(word):
        if word[i:i + 2] in DIGRAPH:
            phones.append(DIGRAPH[word[i:i + 2]])
            i += 2
            continue
        c = word[i]
        if c == "E" and i == len(word) - 1 and i > 0:
            pass  # silent final E
        elif c == "C":
            phones.append("S" if word[i + 1:i + 2] in ("E", "I") else "K")
        else:
            phones.append(LETTER[c])
        i += 1
    return " ".join(phones)


def write_g2p(rng):
    words = set()
    while len(words) < 900:
        syllables = rng.randint(1, 3)
        w = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS)
                    for _ in range(syllables))
        words.add(w + ("E" if rng.random() < 0.15 else ""))
    words = sorted(words)
    rng.shuffle(words)
    for split, chosen in (("train", words[:780]), ("valid", words[780:840]),
                          ("test", words[840:])):
        rows = []
        for w in sorted(chosen):
            rows.append(f"{w}\t{pronounce(w)}")
            if w.endswith("E") and rng.random() < 0.5:  # a variant that sounds the final E
                rows.append(f"{w}\t{pronounce(w)} IY")
        with open(os.path.join(OUT, f"g2p_{split}.tsv"), "w") as f:
            f.write("\n".join(rows) + "\n")


# A toy German-English translation: (German nominative and accusative article, German noun,
# English noun); the German adjective takes -e after a nominative article and -en after "den".
DE_NOUNS = [("der", "den", "Hund", "dog"), ("die", "die", "Katze", "cat"),
            ("das", "das", "Schiff", "ship"), ("der", "den", "Vogel", "bird"),
            ("das", "das", "Haus", "house"), ("die", "die", "Frau", "woman"),
            ("der", "den", "Mann", "man"), ("das", "das", "Kind", "child")]
DE_ADJ = [("rot", "red"), ("klein", "small"), ("alt", "old"), ("still", "quiet"),
          ("kalt", "cold"), ("gr\u00fcn", "green")]
DE_VERBS = [("sieht", "sees"), ("findet", "finds"), ("mag", "likes"), ("sucht", "looks for")]
DE_PLACES = [("am Meer", "by the sea"), ("im Hafen", "in the harbor"), ("heute", "today"),
             ("", "")]


def translation_pair(rng):
    nominative, _, noun, english_noun = rng.choice(DE_NOUNS)
    _, accusative, object_noun, english_object = rng.choice(DE_NOUNS)
    adjective, english_adjective = rng.choice(DE_ADJ)
    object_adjective, english_object_adjective = rng.choice(DE_ADJ)
    verb, english_verb = rng.choice(DE_VERBS)
    place, english_place = rng.choice(DE_PLACES)
    ending = "en" if accusative == "den" else "e"
    german = (f"{nominative.capitalize()} {adjective}e {noun} {verb} {accusative} "
              f"{object_adjective}{ending} {object_noun}")
    english = (f"The {english_adjective} {english_noun} {english_verb} the "
               f"{english_object_adjective} {english_object}")
    mark = rng.choice([".", "!"])
    return (" ".join(f"{german} {place}".split()) + mark,
            " ".join(f"{english} {english_place}".split()) + mark)


def write_de_en(rng):
    pairs = {}
    while len(pairs) < 680:
        german, english = translation_pair(rng)
        pairs[german] = english
    sources = sorted(pairs)
    rng.shuffle(sources)
    for split, chosen in (("train", sources[:600]), ("valid", sources[600:640]),
                          ("test", sources[640:])):
        with open(os.path.join(OUT, f"de_en_{split}.tsv"), "w", encoding="utf-8") as f:
            f.write("".join(f"{g}\t{pairs[g]}\n" for g in sorted(chosen)))


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = random.Random(1234)
    write_lm(rng)
    write_spam(rng)
    write_pos(rng)
    write_g2p(random.Random(4321))
    write_de_en(random.Random(5678))


if __name__ == "__main__":
    main()
