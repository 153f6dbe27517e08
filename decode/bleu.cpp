#include "decode/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "base/error.h"
#include "decode/tokenizer_13a.h"
#include "io/utf8.h"

namespace heed::decode {
namespace {

using NgramCounts = std::map<std::vector<std::string>, int64_t>;

// The 13a words of a segment, after sacrebleu's rstrip().
std::vector<std::string> bleu_words(std::string_view text) {
  const std::u32string cps = io::decode_utf8(text, "text to score");
  size_t end = cps.size();
  while (end > 0 && is_python_whitespace(cps[end - 1])) --end;
  return split_python_whitespace(
      tokenize_13a(io::encode_utf8(std::u32string_view(cps).substr(0, end))));
}

NgramCounts ngram_counts(const std::vector<std::string>& words) {
  NgramCounts counts;
  for (size_t n = 1; n <= BleuAccumulator::kMaxOrder; ++n)
    for (size_t i = 0; i + n <= words.size(); ++i)
      ++counts[std::vector<std::string>(words.begin() + i, words.begin() + i + n)];
  return counts;
}

}  // namespace

void BleuAccumulator::add(std::string_view hypothesis, const std::vector<std::string>& references) {
  HEED_CHECK(!references.empty(), "BLEU: a segment without a reference");
  const std::vector<std::string> words = bleu_words(hypothesis);
  const auto length = static_cast<int64_t>(words.size());

  NgramCounts most_in_a_reference;
  int64_t closest = -1;
  for (const std::string& reference : references) {
    const std::vector<std::string> ref_words = bleu_words(reference);
    for (const auto& [ngram, count] : ngram_counts(ref_words)) {
      int64_t& most = most_in_a_reference[ngram];
      most = std::max(most, count);
    }
    const auto ref_length = static_cast<int64_t>(ref_words.size());
    const int64_t distance = std::abs(length - ref_length);
    const int64_t closest_distance = std::abs(length - closest);
    if (closest < 0 || distance < closest_distance ||
        (distance == closest_distance && ref_length < closest))
      closest = ref_length;
  }

  for (const auto& [ngram, count] : ngram_counts(words)) {
    const size_t order = ngram.size() - 1;
    totals_[order] += count;
    if (const auto it = most_in_a_reference.find(ngram); it != most_in_a_reference.end())
      matches_[order] += std::min(count, it->second);
  }
  ++segments_;
  hypothesis_length_ += length;
  reference_length_ += closest;
}

BleuScore BleuAccumulator::score() const {
  BleuScore s;
  s.hypothesis_length = hypothesis_length_;
  s.reference_length = reference_length_;
  s.brevity_penalty =
      hypothesis_length_ >= reference_length_
          ? 1.0
          : (hypothesis_length_ > 0
                 ? std::exp(1.0 - static_cast<double>(reference_length_) / hypothesis_length_)
                 : 0.0);
  if (std::ranges::all_of(matches_, [](int64_t m) { return m == 0; })) return s;
  double smoothing = 1.0, log_sum = 0.0;
  for (int n = 0; n < kMaxOrder; ++n) {
    // sacrebleu leaves this precision at 0, and log(0) makes BLEU 0.
    if (totals_[n] == 0) return s;
    if (matches_[n] == 0) {
      smoothing *= 2.0;
      s.precisions[n] = 100.0 / (smoothing * static_cast<double>(totals_[n]));
    } else {
      s.precisions[n] = 100.0 * static_cast<double>(matches_[n]) / static_cast<double>(totals_[n]);
    }
    log_sum += std::log(s.precisions[n]);
  }
  s.bleu = s.brevity_penalty * std::exp(log_sum / kMaxOrder);
  return s;
}

}  // namespace heed::decode
