// labelled_rows: the positions a masked-LM head runs on alone, and their labels, padded to a
// padded_row_count with repeats of the first that carry no label.
#include <gtest/gtest.h>

#include <vector>

#include "nn/labelled_rows.h"
#include "nn/padded_rows.h"

using namespace heed;
using namespace heed::nn;

TEST(LabelledRows, KeepsTheLabelledPositionsInRowMajorOrder) {
  const Tensor labels = from_vector<int64_t>({-100, 5, -100, 7, -100, 9}, {2, 3});
  const LabelledRows picked = labelled_rows(labels);
  EXPECT_EQ(picked.rows.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 5}));
  EXPECT_EQ(picked.labels.to_vector<int64_t>(), (std::vector<int64_t>{5, 7, 9}));
}

TEST(LabelledRows, PadsWithUnlabelledRepeatsOfTheFirst) {
  // 17 labelled positions of 40: padded to 18 rows (nn/padded_rows.h), the 18th the first
  // position again, labelled -100.
  std::vector<int64_t> values(40, -100);
  for (int64_t i = 0; i < 17; ++i) values[static_cast<size_t>(2 * i + 3)] = i;
  const LabelledRows picked = labelled_rows(from_vector<int64_t>(values, {4, 10}));
  ASSERT_EQ(padded_row_count(17), 18);
  const std::vector<int64_t> rows = picked.rows.to_vector<int64_t>();
  const std::vector<int64_t> kept = picked.labels.to_vector<int64_t>();
  ASSERT_EQ(rows.size(), 18u);
  ASSERT_EQ(kept.size(), 18u);
  for (int64_t i = 0; i < 17; ++i) {
    EXPECT_EQ(rows[static_cast<size_t>(i)], 2 * i + 3);
    EXPECT_EQ(kept[static_cast<size_t>(i)], i);
  }
  EXPECT_EQ(rows[17], 3);
  EXPECT_EQ(kept[17], -100);
}

TEST(LabelledRows, NoLabelsGiveNoRows) {
  const LabelledRows picked = labelled_rows(from_vector<int64_t>({-100, -100}, {1, 2}));
  EXPECT_EQ(picked.rows.shape(), (Shape{0}));
  EXPECT_EQ(picked.labels.shape(), (Shape{0}));
}
