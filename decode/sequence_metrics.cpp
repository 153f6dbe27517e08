#include "decode/sequence_metrics.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"

namespace heed::decode {

int64_t edit_distance(std::span<const int32_t> a, std::span<const int32_t> b) {
  // One row of the dynamic-programming table at a time: row[j] = distance(a[:i], b[:j]).
  std::vector<int64_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), int64_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    int64_t diagonal = row[0];
    row[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int64_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({substitute, row[j] + 1, row[j - 1] + 1});
    }
  }
  return row.back();
}

void SequenceErrorAccumulator::add(std::span<const int32_t> hypothesis,
                                   const std::vector<std::vector<int32_t>>& references) {
  HEED_CHECK(!references.empty(), "sequence metrics: a source without a reference");
  int64_t best_distance = -1, best_length = 0;
  for (const auto& reference : references) {
    const int64_t d = edit_distance(hypothesis, reference);
    const auto length = static_cast<int64_t>(reference.size());
    if (best_distance < 0 || d < best_distance || (d == best_distance && length > best_length)) {
      best_distance = d;
      best_length = length;
    }
  }
  ++sources_;
  wrong_ += best_distance > 0 ? 1 : 0;
  edits_ += best_distance;
  reference_tokens_ += best_length;
}

std::map<std::string, double> SequenceErrorAccumulator::results() const {
  if (sources_ == 0) return {};
  return {
      {"sequence_error_rate", static_cast<double>(wrong_) / sources_},
      {"token_error_rate", static_cast<double>(edits_) / std::max<int64_t>(1, reference_tokens_)}};
}

}  // namespace heed::decode
