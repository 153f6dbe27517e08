// chrF against values worked out by hand (character n-gram counts in the comments).
#include "decode/chrf.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace heed::decode {
namespace {

TEST(Chrf, AveragesPrecisionAndRecallOverTheOrdersPresent) {
  // "abc" against "abcd": n=1 3 of 3 output, 3 of 4 reference; n=2 2/2, 2/3; n=3 1/1, 1/2;
  // n=4 the output has none and n=5, 6 neither has any: left out. P = 1, R = (3/4 + 2/3 +
  // 1/2) / 3 = 23/36; F2 = 5 P R / (4 P + R) = 115/167.
  ChrfAccumulator chrf;
  chrf.add("abc", {"abcd"});
  EXPECT_NEAR(chrf.score(), 100.0 * 115.0 / 167.0, 1e-12);
}

TEST(Chrf, SumsTheCorpusStatisticsBeforeTheScore) {
  // "abc"/"abcd" as above plus "xy"/"xy" (n=1 2,2,2; n=2 1,1,1): n=1 5 of 5, 5 of 6; n=2 3/3,
  // 3/4; n=3 1/1, 1/2. P = 1, R = (5/6 + 3/4 + 1/2) / 3 = 25/36; F2 = 125/169.
  ChrfAccumulator chrf;
  chrf.add("abc", {"abcd"});
  chrf.add("x y", {"xy"});  // whitespace is removed
  EXPECT_NEAR(chrf.score(), 100.0 * 125.0 / 169.0, 1e-12);
  EXPECT_EQ(chrf.segments(), 2);
}

TEST(Chrf, OutputNgramsCountOnlyWhereTheReferenceHasSomeOfThatOrder) {
  // "abcd"/"ab": n=1 4 output, 2 reference, 2 matched; n=2 3, 1, 1; n>=3 the reference has
  // none, so the output's 3-grams count 0 too. "xyz"/"xyz": n=1 3,3,3; n=2 2,2,2; n=3 1,1,1.
  // Totals: P = (5/7 + 3/5 + 1/1) / 3 = 27/35, R = 1; F2 = 5 (27/35) / (4 (27/35) + 1) =
  // 135/143. (Counting "abcd"'s 3-grams would make the 3-gram precision 1/3.)
  ChrfAccumulator chrf;
  chrf.add("abcd", {"ab"});
  chrf.add("xyz", {"xyz"});
  EXPECT_NEAR(chrf.score(), 100.0 * 135.0 / 143.0, 1e-12);
}

TEST(Chrf, CountsCharactersNotBytes) {
  // "äb"/"äc": n=1 1 of 2 both ways; n=2 0 of 1. P = R = (1/2 + 0) / 2 = 1/4, F2 = 1/4.
  ChrfAccumulator chrf;
  chrf.add("\u00e4b", {"\u00e4c"});
  EXPECT_NEAR(chrf.score(), 25.0, 1e-12);
}

TEST(Chrf, TakesTheBestReferenceOfASegment) {
  ChrfAccumulator chrf;
  chrf.add("abc", {"xyz", "abcd"});
  EXPECT_NEAR(chrf.score(), 100.0 * 115.0 / 167.0, 1e-12);
}

TEST(Chrf, IsZeroWithoutMatchesOrText) {
  ChrfAccumulator none;
  none.add("abc", {"xyz"});
  EXPECT_EQ(none.score(), 0.0);
  ChrfAccumulator empty;
  empty.add("", {"xyz"});
  EXPECT_EQ(empty.score(), 0.0);
  EXPECT_EQ(ChrfAccumulator().score(), 0.0);
  EXPECT_THROW(empty.add("x", {}), Error);
}

}  // namespace
}  // namespace heed::decode
