#pragma once
// Decoding: greedy, sampling (temperature, top-k, top-p) and beam search over any model that
// gives next-token logits, plus scoring a text under a GPT. Decoders see a model only through
// NextTokenModel. The models keep a KV cache behind it: when every prefix of a call extends
// one of the previous call's prefixes by one token (as greedy, sampling and beam search
// ask), a step runs only the new tokens.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "nn/models/gpt.h"
#include "nn/models/seq2seq_model.h"

namespace heed::decode {

// "The logits of the token after each of these prefixes". All prefixes of one call have the
// same length.
class NextTokenModel {
 public:
  virtual ~NextTokenModel() = default;
  // [N, V] f32 logits, row i for prefixes[i].
  virtual Tensor next_logits(const std::vector<std::vector<int32_t>>& prefixes) = 0;
  // The longest prefix the model takes (its position table).
  virtual int64_t max_length() const = 0;
};

// The rows of a KV cache and the prefix each one holds. A call whose prefixes all extend a
// held prefix by one token reorders the rows to match and runs the new tokens only; any
// other call starts the cache again from the whole prefixes.
class PrefixCache {
 public:
  // For each prefix, the row holding it without its last token; none if a prefix has no such
  // row.
  std::optional<std::vector<int64_t>> rows_extended_by(
      const std::vector<std::vector<int32_t>>& prefixes) const;
  // Readies the cache for `prefixes` and returns the ids the model must run next: the last
  // token of each prefix with the rows reordered to match, or, when some prefix extends no
  // row, the whole prefixes with the cache emptied. The model's call then fills the cache.
  Tensor advance(const std::vector<std::vector<int32_t>>& prefixes);
  // Forgets everything: the next call starts again from the whole prefixes.
  void reset();

  nn::KVCache kv;

 private:
  std::vector<std::vector<int32_t>> held_;
};

// A GPT continuing its input ids. Without the cache, every call runs the whole prefixes (the
// reference the cache is tested against).
class GptNextToken : public NextTokenModel {
 public:
  explicit GptNextToken(const nn::GPT& model, bool use_cache = true)
      : model_(model), use_cache_(use_cache) {}
  Tensor next_logits(const std::vector<std::vector<int32_t>>& prefixes) override;
  int64_t max_length() const override { return model_.config.n_positions; }

 private:
  const nn::GPT& model_;
  bool use_cache_;
  PrefixCache cache_;
};

// An encoder-decoder's decoder, attending to one source encoded once at construction.
class Seq2SeqNextToken : public NextTokenModel {
 public:
  Seq2SeqNextToken(const nn::Seq2SeqModel& model, std::span<const int32_t> source_ids,
                   bool use_cache = true);
  Tensor next_logits(const std::vector<std::vector<int32_t>>& prefixes) override;
  int64_t max_length() const override { return model_.max_positions(); }

 private:
  const nn::Seq2SeqModel& model_;
  Tensor memory_;  // [1, S, C]
  bool use_cache_;
  PrefixCache cache_;
};

struct GenerationOptions {
  int64_t max_new_tokens = 50;
  // Greedy: the argmax at every step (Hugging Face's do_sample=False). Otherwise sample after
  // temperature, top-k and top-p, in that order (HF's warper order).
  bool greedy = false;
  double temperature = 1.0;  // > 0; 0 means greedy
  int64_t top_k = 0;         // 0: off
  double top_p = 1.0;        // in (0, 1]; 1: off
  uint64_t seed = 0;         // of the Philox generator that sampling draws from
  // Generation stops after this token (which is kept in the output); none: never.
  std::optional<int32_t> eos_token_id;
};

enum class StopReason { eos, max_new_tokens, max_length };
std::string to_string(StopReason reason);

struct GenerationResult {
  std::vector<int32_t> tokens;    // the new tokens only, the eos included if generated
  std::vector<double> log_probs;  // log p(token | prefix) under the model (no temperature)
  double total_log_prob = 0.0;    // their sum
  StopReason stop_reason = StopReason::max_new_tokens;
};

// Continues `prefix` (non-empty) token by token. Stops at eos, after max_new_tokens, or when
// the sequence fills the model's positions.
GenerationResult generate(NextTokenModel& model, std::vector<int32_t> prefix,
                          const GenerationOptions& options);

// A GPT continuing `prompt_ids`.
GenerationResult generate(const nn::GPT& model, std::span<const int32_t> prompt_ids,
                          const GenerationOptions& options);
// An encoder-decoder's output for `source_ids`, from its decoder_start_token_id; the eos is
// the config's unless options set one.
GenerationResult generate(const nn::Seq2SeqModel& model, std::span<const int32_t> source_ids,
                          GenerationOptions options);

// Greedy outputs of an encoder-decoder (BART's layout or T5) for many sources at once: the sources
// are padded into one batch and encoded once, and each step extends every row that has not reached
// the eos (finished rows leave the batch; a KV cache keeps the decoded positions). Row i holds what
// generate(model, sources[i], greedy) gives (the eos included when reached), up to float rounding
// between batched and single-row kernels: at most max_new_tokens, and at most max_positions() - 1
// (the start token takes a position).
std::vector<std::vector<int32_t>> greedy_decode_batch(
    const nn::Seq2SeqModel& model, const std::vector<std::vector<int32_t>>& sources,
    int64_t max_new_tokens);

struct BeamSearchOptions {
  int64_t num_beams = 4;
  int64_t max_new_tokens = 50;
  // A finished hypothesis scores sum(log p) / length^length_penalty, where length counts the
  // whole sequence (prefix, e.g. the decoder start token, and generated tokens) but not a
  // final eos: Hugging Face's BeamHypotheses score, len(hyp) before the eos is appended.
  double length_penalty = 1.0;
  std::optional<int32_t> eos_token_id;
};

struct BeamSearchResult {
  GenerationResult best;  // total_log_prob is sum(log p), not the length-normalised score
  double score = 0.0;     // the normalised score that made it the best
};

// Hugging Face's beam search (BeamSearchScorer without early stopping): num_beams running
// hypotheses; each step expands them all, keeps the 2*num_beams best candidates, finishes
// those ending in eos that rank within the first num_beams, and stops when no running beam
// can beat the worst of num_beams finished ones. Hypotheses still running at the end count
// as finished.
BeamSearchResult beam_search(NextTokenModel& model, std::vector<int32_t> prefix,
                             const BeamSearchOptions& options);
BeamSearchResult beam_search(const nn::Seq2SeqModel& model, std::span<const int32_t> source_ids,
                             BeamSearchOptions options);

// --- the steps sampling applies to one row of logits (exposed for tests) ---
// Divides by the temperature (> 0).
void apply_temperature(std::vector<float>& logits, double temperature);
// Sets every logit below the k-th largest to -inf (ties with it are kept, as HF's TopK).
void apply_top_k(std::vector<float>& logits, int64_t k);
// Keeps the smallest set of most probable tokens whose probabilities sum to >= p (always at
// least one token) and sets the rest to -inf, as HF's TopPLogitsWarper.
void apply_top_p(std::vector<float>& logits, double p);
// Index of the largest logit (the first on ties).
int32_t argmax(std::span<const float> logits);
// A draw from softmax(logits); -inf logits are never drawn.
int32_t sample(std::span<const float> logits, Generator& generator);
// log_softmax(logits)[token], in double.
double log_prob_of(std::span<const float> logits, int32_t token);

// --- scoring ---
// log_softmax of the logits at every position: row t is p(. | ids[0..t]), [T, V] f32.
Tensor next_token_log_probs(const nn::GPT& model, std::span<const int32_t> ids);

struct ScoreResult {
  // log p(ids[t] | ids[<t]) for t = 1..T-1: the first id is context only (e.g. a bos).
  std::vector<double> log_probs;
  double total_log_prob = 0.0;
  double perplexity = 0.0;  // exp(-mean log p)
};
// `ids` needs at least 2 tokens.
ScoreResult score(const nn::GPT& model, std::span<const int32_t> ids);
// Under an encoder-decoder: log p(target[t] | source, target[<t]) for every target token,
// teacher-forced from the decoder start token (end the target with the eos to score a whole
// output, as decoding produces it).
ScoreResult score(const nn::Seq2SeqModel& model, std::span<const int32_t> source,
                  std::span<const int32_t> target);

}  // namespace heed::decode
