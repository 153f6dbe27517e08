#pragma once
// Error rates of decoded sequences against references, as grapheme-to-phoneme work reports
// them: a source may have several correct references (pronunciation variants), and each
// source counts once, against the reference closest to its output. For G2P the sequence
// error rate is the word error rate (WER) and the token error rate the phoneme error rate
// (PER).
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace heed::decode {

// Levenshtein distance (insertions, deletions and substitutions each cost 1).
int64_t edit_distance(std::span<const int32_t> a, std::span<const int32_t> b);

class SequenceErrorAccumulator {
 public:
  // One source's output and its references (at least one). The closest reference is the one
  // at the smallest edit distance; on a tie, the longest (the lower rate), then the first.
  void add(std::span<const int32_t> hypothesis,
           const std::vector<std::vector<int32_t>>& references);

  // sequence_error_rate: the share of sources whose output equals none of their references.
  // token_error_rate: the summed edit distances to the closest references over the summed
  // lengths of those references.
  std::map<std::string, double> results() const;
  static std::vector<std::string> metric_names() {
    return {"sequence_error_rate", "token_error_rate"};
  }
  int64_t sources() const { return sources_; }

 private:
  int64_t sources_ = 0, wrong_ = 0, edits_ = 0, reference_tokens_ = 0;
};

}  // namespace heed::decode
