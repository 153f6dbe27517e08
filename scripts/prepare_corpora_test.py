#!/usr/bin/python3
"""Tests of prepare_corpora.py's logic on small inline samples (ctest runs this)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prepare_corpora as pc  # noqa: E402


class PrepareCorporaTest(unittest.TestCase):
    def test_brown_parsing_and_text(self):
        text = "\n\n\tThe/at jury/nn said/vbd ``/`` no/at ''/'' ./.\n\n\tA/at 1/2/cd cup/nn\n"
        sentences = pc.parse_brown(text)
        self.assertEqual(sentences[0][1], ("jury", "NN"))
        self.assertEqual(sentences[1][1], ("1/2", "CD"))  # the last slash separates the tag
        self.assertEqual(pc.brown_sentence_text(sentences[0]), 'The jury said " no " .')
        with self.assertRaises(ValueError):
            pc.parse_brown("word-without-tag")

    def test_splits_are_deterministic_and_sized(self):
        keys = [f"doc{i}" for i in range(100)]
        a = pc.split_keys(keys, 0.05, 0.05)
        b = pc.split_keys(list(reversed(keys)), 0.05, 0.05)
        self.assertEqual(a, b)
        self.assertEqual(sum(v == "test" for v in a.values()), 5)
        self.assertEqual(sum(v == "valid" for v in a.values()), 5)

    def test_sentence_split_respects_abbreviations(self):
        text = "Mr. Smith went to Washington. He met Gen. Grant! Was it 1865? Yes. J. Doe agreed."
        self.assertEqual(pc.split_sentences(text), [
            "Mr. Smith went to Washington.", "He met Gen. Grant!", "Was it 1865?", "Yes.",
            "J. Doe agreed."])

    def test_email_subject_body_and_html(self):
        plain = "Subject: =?iso-8859-1?q?Caf=E9?= offer\nContent-Type: text/plain\n\nHello\n\tthere\n"
        self.assertEqual(pc.email_text(plain), "Café offer Hello there")
        markup = ("Subject: Win\nContent-Type: text/html\n\n<html><head><style>p{}</style></head>"
                  "<body><p>Click&nbsp;<b>now</b></p><script>x()</script></body></html>")
        self.assertEqual(pc.email_text(markup), "Win Click\xa0now".replace("\xa0", " "))
        multipart = ("Subject: Both\nMIME-Version: 1.0\nContent-Type: multipart/alternative; "
                     "boundary=XX\n\n--XX\nContent-Type: text/plain\n\nplain body\n--XX\n"
                     "Content-Type: text/html\n\n<p>html body</p>\n--XX--\n")
        self.assertEqual(pc.email_text(multipart), "Both plain body")

    def test_cmudict_variants_and_stress(self):
        entries = {"READ": "R EH1 D", "READ(1)": "R IY1 D", "READ(2)": "R EH2 D", "A": "AH0"}
        self.assertEqual(pc.cmudict_pairs(entries),
                         {"A": ["AH"], "READ": ["R EH D", "R IY D"]})

    def test_html_to_text(self):
        self.assertEqual(pc.html_to_text("a<br>b &amp; <i>c</i>"), "a b & c")

    def test_ding_sentence_cleans_or_rejects(self):
        # Labels go, the first alternative stays, the apostrophe becomes ASCII.
        self.assertEqual(pc.ding_sentence("Das ist mir schnuppe. [ugs.]; Egal!"),
                         "Das ist mir schnuppe.")
        self.assertEqual(pc.ding_sentence("That\u2019s over  for good."), "That's over for good.")
        for rejected in ["Fehlanzeige!",                          # one word
                         "eine Sache {f}",                        # no sentence punctuation
                         "in consultation with sb.",              # lower case; a slot
                         "Er hat etw. gesagt.",                   # a slot
                         "If you can't behave (yourself) we'll go.",  # optional words
                         "Are they allowed to do that anyway/anyhow?",
                         "Er ist ... alt.", "Er ist \u2026 alt.", "Just kidding /jk/",
                         "Ein Test\x96 mit Steuerzeichen."]:
            self.assertIsNone(pc.ding_sentence(rejected), rejected)

    def test_ding_pairs_by_sense_first_translation_kept(self):
        lines = ["# Version :: devel\n",
                 "Aal {m} | Was nun? :: eel | What next?\n",                 # sense 2 only
                 "Guten Appetit!; Mahlzeit! :: Enjoy your meal!; Bon app\u00e9tit!\n",
                 "Ein Satz. | Zwei S\u00e4tze. :: A sentence.\n",            # senses differ
                 "Was nun? :: What now?\n"]                                   # German seen
        self.assertEqual(pc.ding_sentence_pairs(lines),
                         [("Was nun?", "What next?"), ("Guten Appetit!", "Enjoy your meal!")])


if __name__ == "__main__":
    unittest.main()
