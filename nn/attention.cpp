#include "nn/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "nn/padded_rows.h"

namespace heed::nn {

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask, bool causal, double dropout_p,
                                    bool training, Generator* generator, Tensor* probs,
                                    const QueryRows* queries) {
  HEED_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4 && q.size(-1) == k.size(-1) &&
                 k.size(-2) == v.size(-2),
             "attention: q {}, k {}, v {} must be [B, h, T, d] with matching d and key length",
             q.shape_str(), k.shape_str(), v.shape_str());
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  // k^T is a strided view: the product reads it in place.
  Tensor scores = matmul(q, k.transpose(-1, -2));
  if (training && dropout_p > 0.0) {
    HEED_CHECK(generator != nullptr, "attention: dropout needs a generator");
    return attention_dropout_values(scores, v, scale, mask, causal, dropout_p, *generator, probs,
                                    queries);
  }
  Tensor p = attention_softmax(scores, scale, mask, causal);
  if (probs) *probs = p;
  return matmul(p, v);
}

Tensor keep_mask(const Tensor& attention_mask) {
  if (!attention_mask.defined() || attention_mask.dtype() == DType::u8) return attention_mask;
  return attention_mask.to(DType::u8);
}

Tensor padding_mask_for_attention(const Tensor& attention_mask) {
  HEED_CHECK(attention_mask.dim() == 2, "attention: padding mask must be [B, T], got {}",
             attention_mask.shape_str());
  const int64_t B = attention_mask.size(0), T = attention_mask.size(1);
  return keep_mask(attention_mask).reshape({B, 1, 1, T});
}

namespace {

// The queries that output rows read, a block of the same count per sequence, so that
// attention runs on them alone as a batch.
struct PickedQueries {
  int64_t per_sequence = 0;  // Q
  Tensor rows;               // i64 [B * Q], into the flattened [B * Tq] queries
  Tensor positions;          // i64 [B, Q], the same as positions in their sequences
  Tensor outputs;            // i64 [M]: each output row's row of the [B * Q] results
};

// Q is picked_query_block's (a few block sizes over a run, not one per batch); Q = Tq means
// attention from every query, and nothing else is filled in. A sequence with fewer picked
// queries repeats its first (or position 0): those rows are computed and never read.
PickedQueries pick_queries(const Tensor& output_rows, int64_t B, int64_t Tq) {
  const std::vector<int64_t> wanted = output_rows.to_vector<int64_t>();
  std::vector<std::vector<int64_t>> per(static_cast<size_t>(B));
  for (int64_t row : wanted) {
    HEED_CHECK(row >= 0 && row < B * Tq,
               "MultiHeadAttention: output row {} outside {} sequences of {} queries", row, B, Tq);
    per[static_cast<size_t>(row / Tq)].push_back(row % Tq);
  }
  PickedQueries picked;
  for (auto& positions : per) {
    std::sort(positions.begin(), positions.end());
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    picked.per_sequence = std::max<int64_t>(picked.per_sequence, std::ssize(positions));
  }
  picked.per_sequence = picked_query_block(picked.per_sequence, Tq);
  const int64_t Q = picked.per_sequence;
  if (Q == Tq) return picked;
  std::vector<int64_t> at(static_cast<size_t>(B * Q)), rows(at.size()), outputs;
  for (int64_t b = 0; b < B; ++b) {
    const auto& positions = per[static_cast<size_t>(b)];
    for (int64_t j = 0; j < Q; ++j) {
      const int64_t position = j < std::ssize(positions) ? positions[static_cast<size_t>(j)]
                               : positions.empty()       ? 0
                                                         : positions[0];
      at[static_cast<size_t>(b * Q + j)] = position;
      rows[static_cast<size_t>(b * Q + j)] = b * Tq + position;
    }
  }
  for (int64_t row : wanted) {
    const auto& positions = per[static_cast<size_t>(row / Tq)];
    const auto slot = std::lower_bound(positions.begin(), positions.end(), row % Tq);
    outputs.push_back(row / Tq * Q + (slot - positions.begin()));
  }
  picked.rows = from_vector<int64_t>(rows, {B * Q});
  picked.positions = from_vector<int64_t>(at, {B, Q});
  picked.outputs = from_vector<int64_t>(outputs, {std::ssize(outputs)});
  return picked;
}

}  // namespace

MultiHeadAttention::MultiHeadAttention(const AttentionOptions& opts, Generator& init,
                                       std::shared_ptr<Generator> dropout_gen)
    : options(opts),
      head_dim(opts.num_heads > 0 ? opts.embed_dim / opts.num_heads : 0),
      dropout_generator(std::move(dropout_gen)) {
  const int64_t C = opts.embed_dim, heads = opts.num_heads;
  HEED_CHECK(heads > 0 && C > 0 && C % heads == 0,
             "MultiHeadAttention: {} heads do not divide the hidden size {}", heads, C);
  HEED_CHECK(opts.dropout >= 0.0 && opts.dropout < 1.0,
             "MultiHeadAttention: dropout must be in [0, 1), got {}", opts.dropout);
  auto projection = [&](int64_t out, double std) {
    return std::make_shared<Linear>(C, out, init, opts.bias, std, opts.dtype, opts.layout);
  };
  if (opts.fused_qkv) {
    q_proj = register_module(opts.names.query, projection(3 * C, opts.init_std));
  } else {
    q_proj = register_module(opts.names.query, projection(C, opts.init_std));
    k_proj = register_module(opts.names.key, projection(C, opts.init_std));
    v_proj = register_module(opts.names.value, projection(C, opts.init_std));
  }
  out_proj = register_module(opts.names.output, projection(C, opts.output_init_std));
}

AttentionOutput MultiHeadAttention::forward(const Tensor& query, const Tensor& key_value,
                                            const Tensor& key_padding_mask, bool causal,
                                            bool need_weights, AttentionCache* cache,
                                            const Tensor& output_rows) const {
  const int64_t C = options.embed_dim, heads = options.num_heads;
  const bool cross = key_value.defined();
  const Tensor& kv = cross ? key_value : query;
  HEED_CHECK(query.dim() == 3 && query.size(-1) == C && kv.dim() == 3 && kv.size(-1) == C &&
                 kv.size(0) == query.size(0),
             "MultiHeadAttention: query {} and key/value {} must be [B, T, {}]", query.shape_str(),
             kv.shape_str(), C);
  HEED_CHECK(!options.fused_qkv || !cross,
             "MultiHeadAttention: a fused q/k/v projection serves self-attention only");
  const int64_t B = query.size(0), Tq = query.size(1);
  HEED_CHECK(!cache || cache->empty() || cache->key.size(0) == B,
             "MultiHeadAttention: a cache of {} rows for a batch of {}",
             cache && !cache->empty() ? cache->key.size(0) : 0, B);
  auto padding_mask = [&](int64_t Tk) {
    if (!key_padding_mask.defined()) return Tensor();
    HEED_CHECK(key_padding_mask.dim() == 2 && key_padding_mask.size(0) == B &&
                   key_padding_mask.size(1) == Tk,
               "MultiHeadAttention: padding mask {} must be [B, Tk] = [{}, {}]",
               key_padding_mask.shape_str(), B, Tk);
    return padding_mask_for_attention(key_padding_mask);
  };
  AttentionOutput out;
  auto project = [&](Tensor merged) {
    if (output_rows.defined()) merged = embedding(merged.reshape({B * Tq, C}), output_rows);
    out.output = out_proj->forward(merged);
  };
  if (options.fused_qkv && !cache) {
    // Self-attention from the packed projection in one op: no KV cache to read or extend.
    const double p = is_training() ? options.dropout : 0.0;
    project(self_attention_qkv(q_proj->forward(query), heads, padding_mask(Tq), causal, p,
                               dropout_generator.get(), need_weights ? &out.probs : nullptr));
    return out;
  }
  // [B, T, C] -> [B, T, h, d] -> [B, h, T, d]: views, no copies.
  auto split_heads = [&](const Tensor& x) {
    return x.reshape({B, x.size(1), heads, head_dim}).permute({0, 2, 1, 3});
  };
  if (output_rows.defined() && !options.fused_qkv && !cache && !causal && !need_weights) {
    // Only the picked queries: their projection, scores, softmax and values (BERT's last
    // layer under a masked-LM head masking 15% of 32 x 128: blocks of 24-36 queries of 128).
    const PickedQueries picked = pick_queries(output_rows, B, Tq);
    if (picked.per_sequence < Tq) {
      const int64_t Q = picked.per_sequence;
      const Tensor picked_inputs = embedding(query.reshape({B * Tq, C}), picked.rows);
      const Tensor q = split_heads(q_proj->forward(picked_inputs.reshape({B, Q, C})));
      const QueryRows query_rows{picked.positions, Tq};
      Tensor context = scaled_dot_product_attention(
          q, split_heads(k_proj->forward(kv)), split_heads(v_proj->forward(kv)),
          padding_mask(kv.size(1)), false, options.dropout, is_training(), dropout_generator.get(),
          nullptr, &query_rows);
      context = context.permute({0, 2, 1, 3}).reshape({B * Q, C});
      out.output = out_proj->forward(embedding(context, picked.outputs));
      return out;
    }
  }
  Tensor q, k, v;
  const bool reuse_keys = cross && cache && !cache->empty();
  if (options.fused_qkv) {
    Tensor qkv = q_proj->forward(query);  // [B, T, 3C], columns [q | k | v]
    q = split_heads(qkv.slice(-1, 0, C));
    k = split_heads(qkv.slice(-1, C, 2 * C));
    v = split_heads(qkv.slice(-1, 2 * C, 3 * C));
  } else {
    q = split_heads(q_proj->forward(query));
    if (!reuse_keys) {
      k = split_heads(k_proj->forward(kv));
      v = split_heads(v_proj->forward(kv));
    }
  }
  if (reuse_keys) {
    HEED_CHECK(kv.size(1) == cache->key.size(2),
               "MultiHeadAttention: a cache of {} memory positions for a memory of {}",
               cache->key.size(2), kv.size(1));
    k = cache->key;
    v = cache->value;
  } else if (cache && !cross && !cache->empty()) {
    k = concat({cache->key, k}, 2);
    v = concat({cache->value, v}, 2);
  }
  Tensor context = scaled_dot_product_attention(
      q, k, v, padding_mask(k.size(2)), causal, options.dropout, is_training(),
      dropout_generator.get(), need_weights ? &out.probs : nullptr);
  // [B, h, Tq, d] -> [B, Tq, h, d] -> [B, Tq, C]
  project(context.permute({0, 2, 1, 3}).reshape({B, Tq, C}));
  // Only a step that went through grows the cache: after an error it is as it was.
  if (cache && !reuse_keys) {
    cache->key = k;
    cache->value = v;
  }
  return out;
}

}  // namespace heed::nn
