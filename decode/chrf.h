#pragma once
// chrF (Popović 2015) exactly as sacrebleu's defaults compute it (its `CHRF()`): character
// n-grams of 1 to 6 with whitespace removed, no word n-grams, case kept, beta = 2, statistics
// summed over the corpus before the score.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heed::decode {

class ChrfAccumulator {
 public:
  static constexpr int kMaxOrder = 6;
  static constexpr double kBeta = 2.0;

  // One segment: the output and its references (at least one). With several references the
  // segment counts the statistics of the one whose own chrF is highest (on a tie, the first).
  void add(std::string_view hypothesis, const std::vector<std::string>& references);

  // 0 to 100. For each order n with output and reference n-grams in the corpus totals,
  // precision = matches / output n-grams and recall = matches / reference n-grams; both are
  // averaged over those orders (sacrebleu's default; its eps_smoothing is off), and
  // chrF = (1 + beta^2) P R / (beta^2 P + R), or 0 when P + R = 0.
  double score() const;

  int64_t segments() const { return segments_; }

  // Per order: output n-grams, reference n-grams, matched n-grams. A segment whose reference
  // has no n-gram of an order counts none of the output's there either, as sacrebleu does.
  struct OrderCounts {
    int64_t hypothesis = 0, reference = 0, matched = 0;
  };
  using Statistics = std::array<OrderCounts, kMaxOrder>;
  static double f_score(const Statistics& statistics);

 private:
  int64_t segments_ = 0;
  Statistics totals_ = {};
};

}  // namespace heed::decode
