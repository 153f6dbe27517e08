#pragma once
// Corpus BLEU (Papineni et al. 2002) exactly as sacrebleu's defaults compute it: 13a
// tokenisation, case kept, n-grams of 1 to 4 words, precisions clipped by the reference counts
// and summed over the corpus, their geometric mean times the brevity penalty, 'exp' smoothing.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heed::decode {

struct BleuScore {
  double bleu = 0.0;                      // 0 to 100, as sacrebleu reports it
  std::array<double, 4> precisions = {};  // 0 to 100, after smoothing
  double brevity_penalty = 0.0;
  int64_t hypothesis_length = 0, reference_length = 0;  // tokens, corpus totals
};

class BleuAccumulator {
 public:
  static constexpr int kMaxOrder = 4;

  // One segment: the output and its references (at least one), untokenised text. Each n-gram
  // of the output counts as matched at most as often as it occurs in any one reference; the
  // reference length is that of the reference closest in length (on a tie, the shorter).
  void add(std::string_view hypothesis, const std::vector<std::string>& references);

  // From the corpus totals: p_n = matches_n / n-grams_n of the output; BP = exp(1 - r/c) when
  // c < r (0 when c = 0), else 1; BLEU = BP * exp(mean of log p_n). sacrebleu's default
  // smoothing ('exp', NIST's) replaces the k-th zero p_n by 1 / (2^k * n-grams_n); BLEU is 0
  // when no n-gram matches at all, or when the outputs hold no n-gram of some order.
  BleuScore score() const;

  int64_t segments() const { return segments_; }

 private:
  int64_t segments_ = 0, hypothesis_length_ = 0, reference_length_ = 0;
  std::array<int64_t, kMaxOrder> matches_ = {}, totals_ = {};
};

}  // namespace heed::decode
