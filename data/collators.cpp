#include "data/collators.h"

#include <algorithm>

#include "base/error.h"
#include "data/text_tokenizer.h"
#include "data/wordpiece.h"

namespace heed::data {
namespace {

// Pads input_ids/attention_mask/token_type_ids of the examples to the longest one.
Batch pad_inputs(std::span<const Example> examples, int32_t pad_id) {
  HEED_CHECK(!examples.empty(), "cannot collate an empty list of examples");
  Batch b;
  b.batch_size = static_cast<int64_t>(examples.size());
  size_t t = 0;
  for (const Example& e : examples) t = std::max(t, e.input_ids.size());
  HEED_CHECK(t > 0, "cannot collate examples that have no tokens");
  b.seq_len = static_cast<int64_t>(t);
  const size_t n = examples.size() * t;
  b.input_ids.assign(n, pad_id);
  b.attention_mask.assign(n, 0);
  b.token_type_ids.assign(n, 0);
  for (size_t r = 0; r < examples.size(); ++r) {
    const Example& e = examples[r];
    HEED_CHECK(e.token_type_ids.empty() || e.token_type_ids.size() == e.input_ids.size(),
               "example {}: {} token_type_ids for {} input_ids", r, e.token_type_ids.size(),
               e.input_ids.size());
    for (size_t i = 0; i < e.input_ids.size(); ++i) {
      b.input_ids[r * t + i] = e.input_ids[i];
      b.attention_mask[r * t + i] = 1;
      if (!e.token_type_ids.empty()) b.token_type_ids[r * t + i] = e.token_type_ids[i];
    }
  }
  return b;
}

int64_t count_targets(const std::vector<int64_t>& labels) {
  return std::count_if(labels.begin(), labels.end(), [](int64_t l) { return l != kIgnoreIndex; });
}

}  // namespace

TokenIds TokenIds::from(const WordPieceTokenizer& tokenizer) {
  TokenIds ids;
  ids.pad_id = tokenizer.pad_id();
  ids.mask_id = tokenizer.mask_id();
  ids.vocab_size = tokenizer.vocab_size();
  ids.special_ids = tokenizer.special_ids();
  return ids;
}

TokenIds TokenIds::from(const TextTokenizer& tokenizer) {
  TokenIds ids;
  ids.pad_id = tokenizer.pad_id();
  ids.mask_id = tokenizer.mask_id();
  ids.vocab_size = static_cast<int32_t>(tokenizer.vocab_size());
  ids.special_ids = tokenizer.special_ids();
  return ids;
}

Batch collate_mlm(std::span<const Example> examples, const TokenIds& ids, const MlmOptions& options,
                  Rng& rng) {
  HEED_CHECK(options.mlm_probability > 0 && options.mlm_probability <= 1,
             "mlm_probability must be in (0, 1], got {}", options.mlm_probability);
  HEED_CHECK(options.mask_replace_prob >= 0 && options.random_replace_prob >= 0 &&
                 options.mask_replace_prob + options.random_replace_prob <= 1,
             "mask_replace_prob {} + random_replace_prob {} must be within [0, 1]",
             options.mask_replace_prob, options.random_replace_prob);
  HEED_CHECK(ids.mask_id >= 0 && ids.vocab_size > 0, "MLM needs a [MASK] id and a vocab size");
  Batch b = pad_inputs(examples, ids.pad_id);
  b.label_len = b.seq_len;
  b.labels.assign(b.input_ids.size(), kIgnoreIndex);
  // transformers draws "random" among the not-masked: P(random | not masked).
  const double rest = 1.0 - options.mask_replace_prob;
  const double random_given_rest = rest > 0 ? options.random_replace_prob / rest : 0.0;
  std::vector<int32_t> special = ids.special_ids;
  special.push_back(ids.pad_id);
  std::sort(special.begin(), special.end());
  for (size_t i = 0; i < b.input_ids.size(); ++i) {
    if (!b.attention_mask[i]) continue;  // padding is never selected
    const auto id = static_cast<int32_t>(b.input_ids[i]);
    if (std::binary_search(special.begin(), special.end(), id)) continue;
    if (!rng.bernoulli(options.mlm_probability)) continue;
    b.labels[i] = id;
    if (rng.bernoulli(options.mask_replace_prob)) {
      b.input_ids[i] = ids.mask_id;
    } else if (rng.bernoulli(random_given_rest)) {
      b.input_ids[i] = static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(ids.vocab_size)));
    }
  }
  b.num_target_tokens = count_targets(b.labels);
  return b;
}

Batch collate_causal_lm(std::span<const Example> examples, int32_t pad_id) {
  std::vector<Example> inputs(examples.size());
  for (size_t r = 0; r < examples.size(); ++r) {
    HEED_CHECK(examples[r].input_ids.size() >= 2,
               "causal LM example {} has {} tokens; it needs at least 2", r,
               examples[r].input_ids.size());
    inputs[r].input_ids.assign(examples[r].input_ids.begin(), examples[r].input_ids.end() - 1);
  }
  Batch b = pad_inputs(inputs, pad_id);
  b.label_len = b.seq_len;
  b.labels.assign(b.input_ids.size(), kIgnoreIndex);
  const auto t = static_cast<size_t>(b.seq_len);
  for (size_t r = 0; r < examples.size(); ++r) {
    const auto& ids = examples[r].input_ids;
    for (size_t i = 1; i < ids.size(); ++i) b.labels[r * t + i - 1] = ids[i];
  }
  b.num_target_tokens = count_targets(b.labels);
  return b;
}

Batch collate_seq2seq(std::span<const Example> examples, const Seq2SeqIds& ids) {
  Batch b = pad_inputs(examples, ids.pad_id);
  size_t td = 0;
  for (const Example& e : examples) td = std::max(td, e.target_ids.size() + 1);
  b.decoder_seq_len = b.label_len = static_cast<int64_t>(td);
  const size_t n = examples.size() * td;
  b.decoder_input_ids.assign(n, ids.decoder_pad_id);
  b.decoder_attention_mask.assign(n, 0);
  b.labels.assign(n, kIgnoreIndex);
  for (size_t r = 0; r < examples.size(); ++r) {
    const auto& target = examples[r].target_ids;
    for (size_t i = 0; i <= target.size(); ++i) {
      b.decoder_input_ids[r * td + i] = i == 0 ? ids.decoder_start_id : target[i - 1];
      b.decoder_attention_mask[r * td + i] = 1;
      b.labels[r * td + i] = i < target.size() ? target[i] : ids.eos_id;
    }
  }
  b.num_target_tokens = count_targets(b.labels);
  return b;
}

Batch collate_classification(std::span<const Example> examples, int32_t pad_id) {
  Batch b = pad_inputs(examples, pad_id);
  b.label_len = 1;
  for (size_t r = 0; r < examples.size(); ++r) {
    HEED_CHECK(examples[r].label >= 0, "classification example {} has no label", r);
    b.labels.push_back(examples[r].label);
  }
  b.num_target_tokens = b.batch_size;
  return b;
}

Batch collate_token_classification(std::span<const Example> examples, int32_t pad_id) {
  Batch b = pad_inputs(examples, pad_id);
  b.label_len = b.seq_len;
  b.labels.assign(b.input_ids.size(), kIgnoreIndex);
  const auto t = static_cast<size_t>(b.seq_len);
  for (size_t r = 0; r < examples.size(); ++r) {
    const Example& e = examples[r];
    HEED_CHECK(e.token_labels.size() == e.input_ids.size(),
               "token classification example {}: {} labels for {} tokens", r, e.token_labels.size(),
               e.input_ids.size());
    for (size_t i = 0; i < e.token_labels.size(); ++i) b.labels[r * t + i] = e.token_labels[i];
  }
  b.num_target_tokens = count_targets(b.labels);
  return b;
}

}  // namespace heed::data
