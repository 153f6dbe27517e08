#include "nn/labelled_rows.h"

#include <vector>

#include "base/error.h"
#include "nn/padded_rows.h"

namespace heed::nn {

LabelledRows labelled_rows(const Tensor& labels) {
  const std::vector<int64_t> all = labels.to_vector<int64_t>();
  std::vector<int64_t> rows, kept;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] != -100) {
      rows.push_back(static_cast<int64_t>(i));
      kept.push_back(all[i]);
    }
  }
  const auto M = static_cast<int64_t>(rows.size());
  rows.resize(static_cast<size_t>(padded_row_count(M)), M > 0 ? rows[0] : 0);
  kept.resize(rows.size(), -100);
  const auto padded = static_cast<int64_t>(rows.size());
  return {.rows = from_vector<int64_t>(rows, {padded}),
          .labels = from_vector<int64_t>(kept, {padded})};
}

Tensor labels_at_rows(const Tensor& labels, const Tensor& rows) {
  const std::vector<int64_t> all = labels.to_vector<int64_t>(), at = rows.to_vector<int64_t>();
  std::vector<int64_t> picked;
  picked.reserve(at.size());
  for (int64_t r : at) {
    HEED_CHECK(r >= 0 && r < static_cast<int64_t>(all.size()),
               "labels_at_rows: row {} is out of range for {} labels", r, all.size());
    picked.push_back(all[static_cast<size_t>(r)]);
  }
  return from_vector<int64_t>(picked, {static_cast<int64_t>(picked.size())});
}

}  // namespace heed::nn
