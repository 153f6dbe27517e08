// sacrebleu's 13a tokenisation (mteval-v13a), worked out by hand from its rules.
#include "decode/tokenizer_13a.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace heed::decode {
namespace {

TEST(Tokenizer13a, SplitsPunctuationButNotApostrophesOrHyphensInWords) {
  EXPECT_EQ(tokenize_13a("Hello, world!"), "Hello , world !");
  EXPECT_EQ(tokenize_13a("Don't stop (now): it's \"well-known\"; ok?"),
            "Don't stop ( now ) : it's \" well-known \" ; ok ?");
  EXPECT_EQ(tokenize_13a("a/b [c] {d} e_f @g #h $i ~j"), "a / b [ c ] { d } e _ f @ g # h $ i ~ j");
}

TEST(Tokenizer13a, PeriodsAndCommasStayInsideNumbersOnly) {
  // "0," is not split by the rule on what precedes (a digit) but is by the rule on what follows
  // (a space); "1,000.50" and "3.5" keep theirs, having digits on both sides.
  EXPECT_EQ(tokenize_13a("It costs $1,000.50, or 3.5%."), "It costs $ 1,000.50 , or 3.5 % .");
  EXPECT_EQ(tokenize_13a("in 1999."), "in 1999 .");
  EXPECT_EQ(tokenize_13a("e.g. U.S.A."), "e . g . U . S . A .");
  EXPECT_EQ(tokenize_13a(".5 and 5."), ". 5 and 5 .");  // a leading period before a digit: split
  EXPECT_EQ(tokenize_13a("a..b"), "a . . b");
}

TEST(Tokenizer13a, DashesAreSplitAfterDigitsOnly) {
  EXPECT_EQ(tokenize_13a("pages 10-20 - a well-known fact"), "pages 10 - 20 - a well-known fact");
  EXPECT_EQ(tokenize_13a("x-1 1-x"), "x-1 1 - x");
  // Not ASCII, so not split at all: the en dash and typographic quotes.
  EXPECT_EQ(tokenize_13a("1990\u20132000 \u201equoted\u201c"), "1990\u20132000 \u201equoted\u201c");
}

TEST(Tokenizer13a, UnescapesFourEntitiesInOrder) {
  // &amp; is unescaped before &lt;, so "&amp;lt;" ends as "<"; &apos; is not one of the four.
  EXPECT_EQ(tokenize_13a("&quot;Tom &amp; Jerry&quot; &lt;3 &gt; &amp;lt; it&apos;s"),
            "\" Tom & Jerry \" < 3 > < it & apos ; s");
}

TEST(Tokenizer13a, SkippedMarkersHyphenatedLineBreaksAndWhitespace) {
  EXPECT_EQ(tokenize_13a("co-\noperate<skipped>\nnow"), "cooperate now");
  // Python's str.split() splits at every Unicode space, the no-break space included.
  EXPECT_EQ(tokenize_13a("  a\u00a0b\tc\u3000d  "), "a b c d");
  EXPECT_EQ(tokenize_13a("\u201eSch\u00f6n\u201c, sagte er."),
            "\u201eSch\u00f6n\u201c , sagte er .");
  EXPECT_EQ(tokenize_13a(""), "");
}

TEST(Tokenizer13a, InvalidUtf8IsAnError) {
  EXPECT_THROW(tokenize_13a("bad \xff byte"), Error);
}

}  // namespace
}  // namespace heed::decode
