#include "decode/generation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "decode/logits_row.h"

namespace heed::decode {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

Tensor ids_tensor(const std::vector<std::vector<int32_t>>& rows) {
  HEED_CHECK(!rows.empty() && !rows[0].empty(), "generation: empty prefix");
  const size_t T = rows[0].size();
  std::vector<int64_t> flat;
  flat.reserve(rows.size() * T);
  for (const auto& row : rows) {
    HEED_CHECK(row.size() == T, "generation: prefixes of different lengths ({} and {})", T,
               row.size());
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return from_vector(flat, {static_cast<int64_t>(rows.size()), static_cast<int64_t>(T)});
}

// Orders prefixes (spans of ids) lexicographically, to look rows up by prefix.
struct SpanLess {
  bool operator()(std::span<const int32_t> a, std::span<const int32_t> b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }
};

// The logits at the last position of [N, T, V], as [N, V].
Tensor last_position(const Tensor& logits) {
  return logits.select(1, logits.size(1) - 1).contiguous().to(DType::f32);
}

void check_eval_mode(const nn::Module& model, const char* what) {
  HEED_CHECK(!model.is_training(), "{}: the model is in training mode (dropout on); call eval()",
             what);
}

void validate(const GenerationOptions& o) {
  HEED_CHECK(o.max_new_tokens >= 0, "generate: max_new_tokens must be >= 0, got {}",
             o.max_new_tokens);
  HEED_CHECK(o.temperature >= 0.0 && std::isfinite(o.temperature),
             "generate: temperature must be >= 0, got {}", o.temperature);
  HEED_CHECK(o.top_k >= 0, "generate: top_k must be >= 0, got {}", o.top_k);
  HEED_CHECK(o.top_p > 0.0 && o.top_p <= 1.0, "generate: top_p must be in (0, 1], got {}", o.top_p);
}

}  // namespace

std::string to_string(StopReason reason) {
  switch (reason) {
    case StopReason::eos:
      return "eos";
    case StopReason::max_new_tokens:
      return "max_new_tokens";
    case StopReason::max_length:
      return "max_length";
  }
  return "?";
}

// --- models ---

std::optional<std::vector<int64_t>> PrefixCache::rows_extended_by(
    const std::vector<std::vector<int32_t>>& prefixes) const {
  if (held_.empty() || kv.length() != static_cast<int64_t>(held_[0].size())) return std::nullopt;
  std::map<std::span<const int32_t>, int64_t, SpanLess> row_of;
  for (size_t i = 0; i < held_.size(); ++i) row_of.emplace(held_[i], static_cast<int64_t>(i));
  std::vector<int64_t> rows;
  rows.reserve(prefixes.size());
  for (const auto& p : prefixes) {
    if (p.size() != held_[0].size() + 1) return std::nullopt;
    auto it = row_of.find(std::span<const int32_t>(p.data(), p.size() - 1));
    if (it == row_of.end()) return std::nullopt;
    rows.push_back(it->second);
  }
  return rows;
}

Tensor PrefixCache::advance(const std::vector<std::vector<int32_t>>& prefixes) {
  std::optional<std::vector<int64_t>> rows = rows_extended_by(prefixes);
  const size_t held_rows = held_.size();
  held_ = prefixes;
  if (!rows) {
    kv.clear();
    return ids_tensor(prefixes);
  }
  std::vector<int64_t> identity(held_rows);
  std::iota(identity.begin(), identity.end(), 0);
  if (*rows != identity) kv.select_rows(*rows);
  std::vector<std::vector<int32_t>> last;
  last.reserve(prefixes.size());
  for (const auto& p : prefixes) last.push_back({p.back()});
  return ids_tensor(last);
}

void PrefixCache::reset() {
  kv.clear();
  held_.clear();
}

namespace {

// Runs a cached step; if it throws, the cache may hold part of the step, so it is forgotten.
template <typename Step>
Tensor guarded(PrefixCache& cache, Step step) {
  try {
    return step();
  } catch (...) {
    cache.reset();
    throw;
  }
}

}  // namespace

Tensor GptNextToken::next_logits(const std::vector<std::vector<int32_t>>& prefixes) {
  check_eval_mode(model_, "generate");
  NoGradGuard no_grad;
  if (!use_cache_) {
    nn::ModelInputs in;
    in.input_ids = ids_tensor(prefixes);
    return last_position(model_.forward(in).logits);
  }
  return guarded(cache_, [&] {
    const Tensor ids = cache_.advance(prefixes);
    return last_position(model_.forward_cached(ids, cache_.kv));
  });
}

Seq2SeqNextToken::Seq2SeqNextToken(const nn::Seq2SeqModel& model,
                                   std::span<const int32_t> source_ids, bool use_cache)
    : model_(model), use_cache_(use_cache) {
  check_eval_mode(model, "generate");
  HEED_CHECK(!source_ids.empty(), "generate: empty source");
  NoGradGuard no_grad;
  memory_ = model.encode(ids_tensor({{source_ids.begin(), source_ids.end()}}));
}

Tensor Seq2SeqNextToken::next_logits(const std::vector<std::vector<int32_t>>& prefixes) {
  NoGradGuard no_grad;
  const int64_t N = static_cast<int64_t>(prefixes.size());
  // Every row attends to the same source. The projections want it materialised per row; a
  // filled cache holds the projected memory already, and the view only gives the batch size.
  auto memory = [&](bool materialise) {
    if (N == 1) return memory_;
    Tensor rows = expand(memory_, {N, memory_.size(1), memory_.size(2)});
    return materialise ? rows.contiguous() : rows;
  };
  if (!use_cache_) return last_position(model_.decode(ids_tensor(prefixes), memory(true)));
  return guarded(cache_, [&] {
    const Tensor ids = cache_.advance(prefixes);
    const auto& cross = cache_.kv.cross_attention;
    const bool projected = !cross.empty() && !cross[0].empty();
    return last_position(model_.decode(ids, memory(!projected), Tensor(), Tensor(), &cache_.kv));
  });
}

// --- logits processing ---

void apply_temperature(std::vector<float>& logits, double temperature) {
  HEED_CHECK(temperature > 0.0, "apply_temperature: temperature must be > 0, got {}", temperature);
  const float inv = static_cast<float>(1.0 / temperature);
  for (float& x : logits) x *= inv;
}

void apply_top_k(std::vector<float>& logits, int64_t k) {
  if (k <= 0 || k >= static_cast<int64_t>(logits.size())) return;
  std::vector<float> sorted = logits;
  std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end(), std::greater<>());
  const float kth = sorted[k - 1];
  for (float& x : logits) {
    if (x < kth) x = kNegInf;
  }
}

void apply_top_p(std::vector<float>& logits, double p) {
  if (p >= 1.0) return;
  // Most probable first; on equal logits the smaller id first, so the kept set is defined.
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  const double max = logits[order[0]];
  double total = 0.0;
  for (float x : logits) total += std::exp(x - max);
  // Keep tokens while the mass before them is still short of p: the first is always kept.
  double mass = 0.0;
  size_t keep = 0;
  while (keep < order.size() && mass < p) {
    mass += std::exp(logits[order[keep]] - max) / total;
    ++keep;
  }
  for (size_t i = keep; i < order.size(); ++i) logits[order[i]] = kNegInf;
}

int32_t argmax(std::span<const float> logits) {
  HEED_CHECK(!logits.empty(), "argmax: empty logits");
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

int32_t sample(std::span<const float> logits, Generator& generator) {
  const float max = logits[argmax(logits)];
  HEED_CHECK(max > kNegInf, "sample: every token has probability 0");
  std::vector<double> weights(logits.size());
  double total = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) total += weights[i] = std::exp(logits[i] - max);
  // Inverse CDF; the argmax has weight 1, so total >= 1 and the draw always lands somewhere.
  const double u = generator.next_double() * total;
  double cumulative = 0.0;
  int32_t last_positive = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0.0) continue;
    cumulative += weights[i];
    last_positive = static_cast<int32_t>(i);
    if (u < cumulative) return last_positive;
  }
  return last_positive;  // rounding left u at the very top
}

double log_prob_of(std::span<const float> logits, int32_t token) {
  const double max = logits[argmax(logits)];
  double total = 0.0;
  for (float x : logits) total += std::exp(x - max);
  return logits[token] - max - std::log(total);
}

// --- greedy and sampling ---

GenerationResult generate(NextTokenModel& model, std::vector<int32_t> prefix,
                          const GenerationOptions& options) {
  validate(options);
  HEED_CHECK(!prefix.empty(), "generate: empty prefix");
  const bool greedy = options.greedy || options.temperature == 0.0;
  Generator generator(options.seed);
  GenerationResult result;
  for (int64_t step = 0;; ++step) {
    if (step == options.max_new_tokens) {
      result.stop_reason = StopReason::max_new_tokens;
      break;
    }
    if (static_cast<int64_t>(prefix.size()) >= model.max_length()) {
      result.stop_reason = StopReason::max_length;
      break;
    }
    std::vector<float> logits = logits_row(model.next_logits({prefix}), 0);
    int32_t token;
    if (greedy) {
      token = argmax(logits);
    } else {
      std::vector<float> warped = logits;
      apply_temperature(warped, options.temperature);
      apply_top_k(warped, options.top_k);
      apply_top_p(warped, options.top_p);
      token = sample(warped, generator);
    }
    const double lp = log_prob_of(logits, token);
    prefix.push_back(token);
    result.tokens.push_back(token);
    result.log_probs.push_back(lp);
    result.total_log_prob += lp;
    if (options.eos_token_id && token == *options.eos_token_id) {
      result.stop_reason = StopReason::eos;
      break;
    }
  }
  return result;
}

GenerationResult generate(const nn::GPT& model, std::span<const int32_t> prompt_ids,
                          const GenerationOptions& options) {
  GptNextToken next(model);
  return generate(next, {prompt_ids.begin(), prompt_ids.end()}, options);
}

GenerationResult generate(const nn::Seq2SeqModel& model, std::span<const int32_t> source_ids,
                          GenerationOptions options) {
  const nn::Seq2SeqTokens tokens = model.special_tokens();
  if (!options.eos_token_id) options.eos_token_id = static_cast<int32_t>(tokens.eos);
  Seq2SeqNextToken next(model, source_ids);
  return generate(next, {static_cast<int32_t>(tokens.decoder_start)}, options);
}

std::vector<std::vector<int32_t>> greedy_decode_batch(
    const nn::Seq2SeqModel& model, const std::vector<std::vector<int32_t>>& sources,
    int64_t max_new_tokens) {
  check_eval_mode(model, "greedy_decode_batch");
  HEED_CHECK(max_new_tokens >= 0, "greedy_decode_batch: max_new_tokens must be >= 0, got {}",
             max_new_tokens);
  const int64_t N = static_cast<int64_t>(sources.size());
  if (N == 0) return {};
  NoGradGuard no_grad;
  size_t S = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    HEED_CHECK(!sources[i].empty(), "greedy_decode_batch: source {} is empty", i);
    HEED_CHECK(static_cast<int64_t>(sources[i].size()) <= model.max_positions(),
               "greedy_decode_batch: source {} has {} tokens, more than the model's {} positions",
               i, sources[i].size(), model.max_positions());
    S = std::max(S, sources[i].size());
  }
  std::vector<int64_t> ids(N * S, model.special_tokens().pad), mask(N * S, 0);
  for (int64_t i = 0; i < N; ++i) {
    std::copy(sources[i].begin(), sources[i].end(), ids.begin() + i * S);
    std::fill_n(mask.begin() + i * S, sources[i].size(), 1);
  }
  const std::vector<int64_t> shape{N, static_cast<int64_t>(S)};
  Tensor memory_mask = from_vector(mask, shape);
  Tensor memory = model.encode(from_vector(ids, shape), memory_mask);

  const auto eos = static_cast<int32_t>(model.special_tokens().eos);
  // The decoder sequence (start token + outputs) must fit the position table.
  const int64_t steps = std::min(max_new_tokens, model.max_positions() - 1);
  std::vector<std::vector<int32_t>> outputs(N);
  // running[r]: the source that batch row r decodes. Rows leave the batch at their eos.
  std::vector<int64_t> running(N);
  std::iota(running.begin(), running.end(), 0);
  std::vector<int64_t> next(N, model.special_tokens().decoder_start);
  nn::KVCache cache;
  for (int64_t step = 0; step < steps && !running.empty(); ++step) {
    const int64_t R = static_cast<int64_t>(running.size());
    const Tensor logits = last_position(
        model.decode(from_vector(next, {R, 1}), memory, memory_mask, Tensor(), &cache));
    const int64_t V = logits.size(1);
    std::vector<int64_t> kept;  // batch rows still running after this step
    next.clear();
    for (int64_t r = 0; r < R; ++r) {
      const int32_t token = argmax({logits.data<float>() + r * V, static_cast<size_t>(V)});
      outputs[running[r]].push_back(token);
      if (token == eos) continue;
      kept.push_back(r);
      next.push_back(token);
    }
    if (static_cast<int64_t>(kept.size()) < R && !kept.empty()) {
      cache.select_rows(kept);
      memory = nn::select_batch_rows(memory, kept);
      memory_mask = nn::select_batch_rows(memory_mask, kept);
      std::vector<int64_t> still(kept.size());
      for (size_t k = 0; k < kept.size(); ++k) still[k] = running[kept[k]];
      running = std::move(still);
    } else if (kept.empty()) {
      running.clear();
    }
  }
  return outputs;
}

// --- scoring ---

Tensor next_token_log_probs(const nn::GPT& model, std::span<const int32_t> ids) {
  check_eval_mode(model, "score");
  NoGradGuard no_grad;
  nn::ModelInputs in;
  in.input_ids = ids_tensor({{ids.begin(), ids.end()}});
  Tensor logits = model.forward(in).logits.select(0, 0);  // [T, V]
  return log_softmax(logits, 1).contiguous().to(DType::f32);
}

ScoreResult score(const nn::GPT& model, std::span<const int32_t> ids) {
  HEED_CHECK(ids.size() >= 2, "score: needs at least 2 tokens (a context and a target), got {}",
             ids.size());
  const Tensor log_probs = next_token_log_probs(model, ids);
  const int64_t V = log_probs.size(1);
  const float* lp = log_probs.data<float>();
  ScoreResult result;
  for (size_t t = 1; t < ids.size(); ++t) {
    const double x = lp[(t - 1) * V + ids[t]];
    result.log_probs.push_back(x);
    result.total_log_prob += x;
  }
  result.perplexity =
      std::exp(-result.total_log_prob / static_cast<double>(result.log_probs.size()));
  return result;
}

ScoreResult score(const nn::Seq2SeqModel& model, std::span<const int32_t> source,
                  std::span<const int32_t> target) {
  HEED_CHECK(!source.empty() && !target.empty(),
             "score: needs a source and a target, got {} and {}", source.size(), target.size());
  check_eval_mode(model, "score");
  NoGradGuard no_grad;
  // Teacher forcing: the decoder reads [start, target[:-1]] and predicts each target token.
  std::vector<int32_t> decoder_ids = {static_cast<int32_t>(model.special_tokens().decoder_start)};
  decoder_ids.insert(decoder_ids.end(), target.begin(), target.end() - 1);
  nn::ModelInputs in;
  in.input_ids = ids_tensor({{source.begin(), source.end()}});
  in.decoder_input_ids = ids_tensor({decoder_ids});
  const Tensor logits = model.forward(in).logits.select(0, 0);  // [T, V]
  const Tensor log_probs = log_softmax(logits, 1).contiguous().to(DType::f32);
  const int64_t V = log_probs.size(1);
  const float* lp = log_probs.data<float>();
  ScoreResult result;
  for (size_t t = 0; t < target.size(); ++t) {
    const double x = lp[static_cast<int64_t>(t) * V + target[t]];
    result.log_probs.push_back(x);
    result.total_log_prob += x;
  }
  result.perplexity =
      std::exp(-result.total_log_prob / static_cast<double>(result.log_probs.size()));
  return result;
}

}  // namespace heed::decode
