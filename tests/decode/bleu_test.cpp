// Corpus BLEU against values worked out by hand (n-gram counts in the comments).
#include "decode/bleu.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"

namespace heed::decode {
namespace {

TEST(Bleu, CorpusStatisticsAreSummedBeforeTheMeanAndThePenalty) {
  BleuAccumulator bleu;
  // Output "the cat sat on the mat" (6 words), reference "the cat sat on a mat" (6).
  //   1-grams: the x2 (clipped to 1), cat, sat, on, mat -> 5 of 6
  //   2-grams: the cat, cat sat, sat on | on the, the mat -> 3 of 5
  //   3-grams: the cat sat, cat sat on | sat on the, on the mat -> 2 of 4
  //   4-grams: the cat sat on | cat sat on the, sat on the mat -> 1 of 3
  bleu.add("the cat sat on the mat", {"the cat sat on a mat"});
  // 13a: "A dog barked ." (4) against "The dog barked loudly ." (5).
  //   1-grams: dog, barked, . -> 3 of 4;  2-grams: dog barked -> 1 of 3;  3-grams 0 of 2;
  //   4-grams 0 of 1
  bleu.add("A dog barked.", {"The dog barked loudly."});
  // Corpus: p = 8/10, 4/8, 2/6, 1/4 (product 1/30); c = 10 < r = 11, so BP = exp(1 - 11/10).
  const BleuScore s = bleu.score();
  EXPECT_EQ(s.hypothesis_length, 10);
  EXPECT_EQ(s.reference_length, 11);
  EXPECT_DOUBLE_EQ(s.precisions[0], 80.0);
  EXPECT_DOUBLE_EQ(s.precisions[1], 50.0);
  EXPECT_DOUBLE_EQ(s.precisions[2], 100.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.precisions[3], 25.0);
  EXPECT_DOUBLE_EQ(s.brevity_penalty, std::exp(-0.1));
  EXPECT_NEAR(s.bleu, 100.0 * std::exp(-0.1) * std::pow(1.0 / 30.0, 0.25), 1e-12);
  EXPECT_NEAR(s.bleu, 38.6625, 1e-4);
  EXPECT_EQ(bleu.segments(), 2);
}

TEST(Bleu, ExpSmoothingHalvesEachFurtherZeroPrecision) {
  {
    // "the cat sat down" / "the cat sat up": 3/4, 2/3, 1/2 and 0/1 -> the first zero becomes
    // 1 / (2 * 1); the product is 3/4 * 2/3 * 1/2 * 1/2 = 1/8, BP 1.
    BleuAccumulator bleu;
    bleu.add("the cat sat down", {"the cat sat up"});
    EXPECT_DOUBLE_EQ(bleu.score().precisions[3], 50.0);
    EXPECT_NEAR(bleu.score().bleu, 100.0 * std::pow(0.125, 0.25), 1e-12);
  }
  {
    // "a b c d e" / "a b x d y": 3/5, 1/4, 0/3 -> 1 / (2 * 3), 0/2 -> 1 / (4 * 2).
    BleuAccumulator bleu;
    bleu.add("a b c d e", {"a b x d y"});
    const BleuScore s = bleu.score();
    EXPECT_DOUBLE_EQ(s.precisions[2], 100.0 / 6.0);
    EXPECT_DOUBLE_EQ(s.precisions[3], 100.0 / 8.0);
    EXPECT_NEAR(s.bleu, 100.0 * std::pow(0.6 * 0.25 / 6.0 / 8.0, 0.25), 1e-12);
  }
}

TEST(Bleu, IsZeroWithoutAnyMatchOrWithoutNgramsOfSomeOrder) {
  BleuAccumulator none;
  none.add("x y z w", {"a b c d"});
  EXPECT_EQ(none.score().bleu, 0.0);
  // Three words hold no 4-gram, however well they match.
  BleuAccumulator short_output;
  short_output.add("the cat ran", {"the cat sat"});
  EXPECT_EQ(short_output.score().bleu, 0.0);
  // Nothing at all: no output words, so BP is 0 too.
  BleuAccumulator empty;
  empty.add("", {"a b c d"});
  EXPECT_EQ(empty.score().bleu, 0.0);
  EXPECT_EQ(empty.score().brevity_penalty, 0.0);
  EXPECT_EQ(BleuAccumulator().score().bleu, 0.0);
}

TEST(Bleu, SeveralReferencesClipByTheMostInAnyOneAndTakeTheClosestLength) {
  BleuAccumulator bleu;
  // "the" occurs twice in the first reference and "cat" once in the second: 3 of the output's
  // 4 words match. Lengths 5 and 3 are both 1 away from 4: the shorter one counts.
  bleu.add("the cat the cat", {"the the dog ran away", "a cat sat"});
  EXPECT_DOUBLE_EQ(bleu.score().precisions[0], 75.0);
  EXPECT_EQ(bleu.score().reference_length, 3);
  EXPECT_EQ(bleu.score().brevity_penalty, 1.0);
}

TEST(Bleu, IdenticalTextScoresOneHundredAndTrailingWhitespaceIsIgnored) {
  BleuAccumulator bleu;
  bleu.add("How are you today, my friend?\n", {"How are you today, my friend?"});
  EXPECT_DOUBLE_EQ(bleu.score().bleu, 100.0);
  EXPECT_THROW(bleu.add("x", {}), Error);
}

}  // namespace
}  // namespace heed::decode
