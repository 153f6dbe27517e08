#include "decode/chrf.h"

#include <algorithm>
#include <map>

#include "base/error.h"
#include "decode/tokenizer_13a.h"
#include "io/utf8.h"

namespace heed::decode {
namespace {

using CharNgramCounts = std::array<std::map<std::u32string, int64_t>, ChrfAccumulator::kMaxOrder>;

// The character n-grams of the text with every Python whitespace character removed.
CharNgramCounts char_ngrams(std::string_view text) {
  std::u32string chars;
  for (char32_t c : io::decode_utf8(text, "text to score"))
    if (!is_python_whitespace(c)) chars += c;
  CharNgramCounts counts;
  for (size_t n = 1; n <= ChrfAccumulator::kMaxOrder; ++n)
    for (size_t i = 0; i + n <= chars.size(); ++i) ++counts[n - 1][chars.substr(i, n)];
  return counts;
}

ChrfAccumulator::Statistics match(const CharNgramCounts& hypothesis,
                                  const CharNgramCounts& reference) {
  ChrfAccumulator::Statistics s;
  for (size_t n = 0; n < s.size(); ++n) {
    int64_t hypothesis_count = 0;
    for (const auto& [ngram, count] : hypothesis[n]) {
      hypothesis_count += count;
      if (const auto it = reference[n].find(ngram); it != reference[n].end())
        s[n].matched += std::min(count, it->second);
    }
    s[n].hypothesis = reference[n].empty() ? 0 : hypothesis_count;
    for (const auto& [ngram, count] : reference[n]) s[n].reference += count;
  }
  return s;
}

}  // namespace

double ChrfAccumulator::f_score(const Statistics& statistics) {
  double precision = 0.0, recall = 0.0;
  int orders = 0;
  for (const OrderCounts& c : statistics) {
    if (c.hypothesis > 0 && c.reference > 0) {
      precision += static_cast<double>(c.matched) / static_cast<double>(c.hypothesis);
      recall += static_cast<double>(c.matched) / static_cast<double>(c.reference);
      ++orders;
    }
  }
  if (orders == 0) return 0.0;
  precision /= orders;
  recall /= orders;
  if (precision + recall == 0.0) return 0.0;
  const double beta2 = kBeta * kBeta;
  return 100.0 * (1.0 + beta2) * precision * recall / (beta2 * precision + recall);
}

void ChrfAccumulator::add(std::string_view hypothesis, const std::vector<std::string>& references) {
  HEED_CHECK(!references.empty(), "chrF: a segment without a reference");
  const CharNgramCounts output = char_ngrams(hypothesis);
  Statistics best;
  double best_f = -1.0;
  for (const std::string& reference : references) {
    const Statistics s = match(output, char_ngrams(reference));
    if (const double f = f_score(s); f > best_f) {
      best_f = f;
      best = s;
    }
  }
  for (size_t n = 0; n < totals_.size(); ++n) {
    totals_[n].hypothesis += best[n].hypothesis;
    totals_[n].reference += best[n].reference;
    totals_[n].matched += best[n].matched;
  }
  ++segments_;
}

double ChrfAccumulator::score() const {
  return f_score(totals_);
}

}  // namespace heed::decode
