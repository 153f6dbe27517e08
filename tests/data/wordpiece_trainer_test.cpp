#include "data/wordpiece_trainer.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace heed::data {
namespace {

// Hand-worked: words "ab" x3 and "abc" x2. Alphabet a b c; pieces a ##b | a ##b ##c; pair
// counts (a,##b)=5, (##b,##c)=2: first merge "ab", then (ab,##c)=2 gives "abc".
TEST(WordPieceTrainer, HandWorkedMerges) {
  WordPieceTrainerOptions options;
  options.vocab_size = 12;
  WordPieceTrainer trainer(options);
  trainer.add_text("AB ab ab");
  trainer.add_text("abc abc");
  EXPECT_EQ(trainer.train().tokens(),
            (std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c",
                                      "##b", "##c", "ab", "abc"}));
  options.min_frequency = 3;  // (ab,##c) occurs twice: no second merge
  WordPieceTrainer strict(options);
  strict.add_text("AB ab ab");
  strict.add_text("abc abc");
  EXPECT_EQ(strict.train().size(), 11);
}

// Every word must stay spellable: the special tokens and the alphabet with its ## forms are
// the fewest tokens a vocabulary of the corpus holds. A smaller size is refused, naming that
// minimum, rather than quietly exceeded.
TEST(WordPieceTrainer, ASizeBelowTheAlphabetIsRefusedNamingTheMinimum) {
  WordPieceTrainerOptions options;
  options.vocab_size = 5;
  WordPieceTrainer trainer(options);
  trainer.add_text("AB ab ab");
  trainer.add_text("abc abc");  // a b c ##b ##c
  try {
    trainer.train();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "vocab_size 5 is below the minimum for this corpus, 10: its 5 special tokens and "
                 "5 alphabet pieces (each character, and its ## form where it continues a word)");
  }
  options.vocab_size = 10;
  WordPieceTrainer smallest(options);
  smallest.add_text("AB ab ab");
  smallest.add_text("abc abc");
  EXPECT_EQ(smallest.train().size(), 10);
}

TEST(WordPieceTrainer, TrainedVocabTokenizesItsCorpus) {
  WordPieceTrainerOptions options;
  options.vocab_size = 60;
  options.min_frequency = 1;
  WordPieceTrainer trainer(options);
  const char* lines[] = {"the cat sat on the mat.", "The hat is on the cat!", "中文 [MASK] text"};
  for (const char* l : lines) trainer.add_text(l);
  Vocab vocab = trainer.train();
  EXPECT_EQ(vocab.token(1), "[UNK]");
  EXPECT_TRUE(vocab.contains("中"));
  EXPECT_TRUE(vocab.contains("the"));
  EXPECT_FALSE(vocab.contains("[MASK]##"));
  WordPieceTokenizer tok(vocab);
  for (const char* l : lines)
    for (int32_t id : tok.encode_ids(l)) EXPECT_NE(id, tok.unk_id()) << l;
  // Deterministic: the same corpus gives the same vocabulary.
  WordPieceTrainer again(options);
  for (const char* l : lines) again.add_text(l);
  EXPECT_EQ(again.train().tokens(), vocab.tokens());
}

TEST(WordPieceTrainer, AlphabetLimitKeepsTheMostFrequent) {
  WordPieceTrainerOptions options;
  options.vocab_size = 100;
  options.limit_alphabet = 2;
  WordPieceTrainer trainer(options);
  trainer.add_text("zzz yyy x");
  Vocab v = trainer.train();
  EXPECT_TRUE(v.contains("y"));
  EXPECT_TRUE(v.contains("z"));
  EXPECT_FALSE(v.contains("x"));
}

}  // namespace
}  // namespace heed::data
