// Beam search, as Hugging Face's generate(num_beams > 1) runs it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "autograd/grad_mode.h"
#include "base/error.h"
#include "decode/generation.h"
#include "decode/logits_row.h"

namespace heed::decode {

namespace {

// A sequence's score under the beam objective.
double normalised(double sum_log_prob, int64_t length, double length_penalty) {
  return sum_log_prob / std::pow(static_cast<double>(length), length_penalty);
}

struct Hypothesis {
  std::vector<int32_t> sequence;  // prefix + generated tokens
  std::vector<double> log_probs;  // of the generated tokens
  double sum = 0.0;
};

// The num_beams best finished hypotheses by normalised score (HF's BeamHypotheses).
class FinishedHypotheses {
 public:
  struct Entry {
    Hypothesis hypothesis;
    double score;
  };

  FinishedHypotheses(size_t capacity, double length_penalty)
      : capacity_(capacity), length_penalty_(length_penalty) {}

  // `length`: the tokens of the sequence that the score divides by.
  void add(Hypothesis h, int64_t length) {
    const double s = normalised(h.sum, length, length_penalty_);
    if (full() && s <= worst_score()) return;
    entries_.push_back({std::move(h), s});
    if (entries_.size() > capacity_) entries_.erase(entries_.begin() + worst_index());
  }
  bool full() const { return entries_.size() >= capacity_; }
  bool empty() const { return entries_.empty(); }
  double worst_score() const { return entries_[worst_index()].score; }
  const Entry& best() const {
    return *std::max_element(entries_.begin(), entries_.end(), by_score);
  }

 private:
  static bool by_score(const Entry& a, const Entry& b) { return a.score < b.score; }
  size_t worst_index() const {
    return std::min_element(entries_.begin(), entries_.end(), by_score) - entries_.begin();
  }

  size_t capacity_;
  double length_penalty_;
  std::vector<Entry> entries_;
};

struct Candidate {
  double sum;
  int32_t beam;
  int32_t token;
  double log_prob;
};

}  // namespace

BeamSearchResult beam_search(NextTokenModel& model, std::vector<int32_t> prefix,
                             const BeamSearchOptions& options) {
  HEED_CHECK(options.num_beams >= 1, "beam_search: num_beams must be >= 1, got {}",
             options.num_beams);
  HEED_CHECK(options.max_new_tokens >= 0, "beam_search: max_new_tokens must be >= 0, got {}",
             options.max_new_tokens);
  HEED_CHECK(!prefix.empty(), "beam_search: empty prefix");
  const size_t num_beams = static_cast<size_t>(options.num_beams);
  const int64_t prefix_length = static_cast<int64_t>(prefix.size());

  // HF starts with num_beams copies of the prefix, all but one at -1e9 so that the first step
  // expands only one; starting from a single beam is the same search without the dummies.
  std::vector<Hypothesis> running{{std::move(prefix), {}, 0.0}};
  FinishedHypotheses finished(num_beams, options.length_penalty);
  StopReason limit = StopReason::max_new_tokens;
  for (int64_t step = 0; step < options.max_new_tokens; ++step) {
    if (prefix_length + step >= model.max_length()) {
      limit = StopReason::max_length;
      break;
    }
    std::vector<std::vector<int32_t>> prefixes;
    for (const Hypothesis& h : running) prefixes.push_back(h.sequence);
    const Tensor logits = model.next_logits(prefixes);
    const int64_t V = logits.size(1);

    std::vector<Candidate> candidates;
    candidates.reserve(running.size() * V);
    for (size_t b = 0; b < running.size(); ++b) {
      const std::vector<float> r = logits_row(logits, static_cast<int64_t>(b));
      const double max = r[argmax(r)];
      double total = 0.0;
      for (float x : r) total += std::exp(x - max);
      const double log_total = max + std::log(total);
      for (int64_t v = 0; v < V; ++v) {
        const double lp = r[v] - log_total;
        candidates.push_back(
            {running[b].sum + lp, static_cast<int32_t>(b), static_cast<int32_t>(v), lp});
      }
    }
    const size_t top = std::min(candidates.size(), 2 * num_beams);
    std::partial_sort(candidates.begin(), candidates.begin() + top, candidates.end(),
                      [](const Candidate& a, const Candidate& b) { return a.sum > b.sum; });

    std::vector<Hypothesis> next;
    for (size_t rank = 0; rank < top && next.size() < num_beams; ++rank) {
      const Candidate& c = candidates[rank];
      Hypothesis h = running[c.beam];
      h.sequence.push_back(c.token);
      h.log_probs.push_back(c.log_prob);
      h.sum = c.sum;
      if (options.eos_token_id && c.token == *options.eos_token_id) {
        // An eos below the first num_beams candidates would not have been a beam either.
        if (rank < num_beams) finished.add(std::move(h), prefix_length + step);
      } else {
        next.push_back(std::move(h));
      }
    }
    running = std::move(next);
    // HF's stopping rule without early stopping (BeamHypotheses.is_done): done when the best
    // candidate of this step, scored at the current length, cannot beat the worst of the
    // num_beams kept hypotheses.
    if (running.empty() ||
        (finished.full() &&
         finished.worst_score() >=
             normalised(candidates[0].sum, prefix_length + step, options.length_penalty))) {
      running.clear();
      break;
    }
  }
  for (Hypothesis& h : running) {
    const int64_t length = static_cast<int64_t>(h.sequence.size());
    if (length > prefix_length) finished.add(std::move(h), length);
  }

  BeamSearchResult result;
  if (finished.empty()) {
    result.best.stop_reason = limit;  // nothing could be generated
    return result;
  }
  const auto& [best, best_score] = finished.best();
  result.score = best_score;
  result.best.tokens.assign(best.sequence.begin() + prefix_length, best.sequence.end());
  result.best.log_probs = best.log_probs;
  result.best.total_log_prob = best.sum;
  const bool ended = options.eos_token_id && !result.best.tokens.empty() &&
                     result.best.tokens.back() == *options.eos_token_id;
  result.best.stop_reason = ended ? StopReason::eos : limit;
  return result;
}

BeamSearchResult beam_search(const nn::Seq2SeqModel& model, std::span<const int32_t> source_ids,
                             BeamSearchOptions options) {
  const nn::Seq2SeqTokens tokens = model.special_tokens();
  if (!options.eos_token_id) options.eos_token_id = static_cast<int32_t>(tokens.eos);
  Seq2SeqNextToken next(model, source_ids);
  return beam_search(next, {static_cast<int32_t>(tokens.decoder_start)}, options);
}

}  // namespace heed::decode
