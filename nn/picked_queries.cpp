#include "nn/picked_queries.h"

#include <algorithm>
#include <vector>

#include "base/error.h"
#include "nn/padded_rows.h"

namespace heed::nn {

PickedQueries pick_queries(const Tensor& output_rows, int64_t B, int64_t Tq) {
  const std::vector<int64_t> wanted = output_rows.to_vector<int64_t>();
  std::vector<std::vector<int64_t>> per(static_cast<size_t>(B));
  for (int64_t row : wanted) {
    HEED_CHECK(row >= 0 && row < B * Tq,
               "MultiHeadAttention: output row {} outside {} sequences of {} queries", row, B, Tq);
    per[static_cast<size_t>(row / Tq)].push_back(row % Tq);
  }
  PickedQueries picked;
  for (auto& positions : per) {
    std::sort(positions.begin(), positions.end());
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    picked.per_sequence = std::max<int64_t>(picked.per_sequence, std::ssize(positions));
  }
  picked.per_sequence = picked_query_block(picked.per_sequence, Tq);
  const int64_t Q = picked.per_sequence;
  if (Q == Tq) return picked;
  std::vector<int64_t> at(static_cast<size_t>(B * Q)), rows(at.size()), outputs;
  for (int64_t b = 0; b < B; ++b) {
    const auto& positions = per[static_cast<size_t>(b)];
    for (int64_t j = 0; j < Q; ++j) {
      const int64_t position = j < std::ssize(positions) ? positions[static_cast<size_t>(j)]
                               : positions.empty()       ? 0
                                                         : positions[0];
      at[static_cast<size_t>(b * Q + j)] = position;
      rows[static_cast<size_t>(b * Q + j)] = b * Tq + position;
    }
  }
  for (int64_t row : wanted) {
    const auto& positions = per[static_cast<size_t>(row / Tq)];
    const auto slot = std::lower_bound(positions.begin(), positions.end(), row % Tq);
    outputs.push_back(row / Tq * Q + (slot - positions.begin()));
  }
  picked.rows = from_vector<int64_t>(rows, {B * Q});
  picked.positions = from_vector<int64_t>(at, {B, Q});
  picked.outputs = from_vector<int64_t>(outputs, {std::ssize(outputs)});
  return picked;
}

}  // namespace heed::nn
