// Edit distance and the G2P error rates (WER/PER with pronunciation variants).
#include "decode/sequence_metrics.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace heed::decode {
namespace {

using Ids = std::vector<int32_t>;

TEST(SequenceMetrics, EditDistanceCountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance(Ids{}, Ids{}), 0);
  EXPECT_EQ(edit_distance(Ids{1, 2, 3}, Ids{}), 3);
  EXPECT_EQ(edit_distance(Ids{}, Ids{4, 5}), 2);
  EXPECT_EQ(edit_distance(Ids{1, 2, 3}, Ids{1, 2, 3}), 0);
  EXPECT_EQ(edit_distance(Ids{1, 2, 3}, Ids{1, 9, 3}), 1);        // substitution
  EXPECT_EQ(edit_distance(Ids{1, 2, 3}, Ids{1, 3}), 1);           // deletion
  EXPECT_EQ(edit_distance(Ids{1, 3}, Ids{1, 2, 3}), 1);           // insertion
  EXPECT_EQ(edit_distance(Ids{1, 2, 3, 4}, Ids{2, 3, 4, 5}), 2);  // shift: one out, one in
  // "kitten" -> "sitting": the textbook 3.
  EXPECT_EQ(
      edit_distance(Ids{'k', 'i', 't', 't', 'e', 'n'}, Ids{'s', 'i', 't', 't', 'i', 'n', 'g'}), 3);
}

TEST(SequenceMetrics, EachSourceCountsOnceAgainstItsClosestReference) {
  SequenceErrorAccumulator m;
  // Right by its second variant: no error at all.
  m.add(Ids{1, 2, 3}, {{1, 2, 4}, {1, 2, 3}});
  // One substitution against a 4-token reference; the other variant is further away.
  m.add(Ids{5, 6, 7, 9}, {{5, 6, 7, 8}, {1, 1}});
  // Empty output: every reference token missing.
  m.add(Ids{}, {{4, 4}});
  // A tie at distance 1 counts against the longer reference (3 tokens, not 2).
  m.add(Ids{1, 2}, {{1, 3}, {1, 2, 3}});
  EXPECT_EQ(m.sources(), 4);
  auto r = m.results();
  EXPECT_DOUBLE_EQ(r.at("sequence_error_rate"), 3.0 / 4.0);
  // edits 0 + 1 + 2 + 1 over reference tokens 3 + 4 + 2 + 3
  EXPECT_DOUBLE_EQ(r.at("token_error_rate"), 4.0 / 12.0);
  EXPECT_THROW(m.add(Ids{1}, {}), Error);
}

TEST(SequenceMetrics, NoSourcesGiveNoRates) {
  EXPECT_TRUE(SequenceErrorAccumulator().results().empty());
}

}  // namespace
}  // namespace heed::decode
