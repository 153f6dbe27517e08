#include "nn/attention.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "autograd/ops.h"
#include "nn/picked_queries.h"

namespace heed::nn {

namespace {

AttentionKernel kernel_from_environment() {
  const char* value = std::getenv("HEED_ATTENTION");
  const std::string_view name = value ? value : "";
  if (name.empty() || name == "auto") return AttentionKernel::automatic;
  if (name == "fused") return AttentionKernel::fused;
  if (name == "unfused") return AttentionKernel::unfused;
  fail("HEED_ATTENTION must be fused, unfused or auto, got '{}'", name);
}

std::atomic<AttentionKernel>& chosen_kernel() {
  static std::atomic<AttentionKernel> kernel{kernel_from_environment()};
  return kernel;
}

// The [B or 1, Tk] key padding that `mask` is, if it is one (u8 [B or 1, 1, 1, Tk], as
// padding_mask_for_attention makes it): the only mask the fused path takes. Undefined for no
// mask; false when the mask is something else.
bool key_padding_of(const Tensor& mask, int64_t batch, int64_t tk, Tensor& key_padding) {
  if (!mask.defined()) return true;
  if (mask.dtype() != DType::u8 || mask.dim() != 4 || mask.size(1) != 1 || mask.size(2) != 1 ||
      mask.size(3) != tk || (mask.size(0) != batch && mask.size(0) != 1)) {
    return false;
  }
  key_padding = mask.reshape({mask.size(0), tk});
  return true;
}

// Whether the call goes to flash_attention, and with which key padding.
bool takes_fused_path(const Tensor& q, const Tensor& k, const ScaledDotProductOptions& o,
                      Tensor& key_padding) {
  const AttentionKernel kernel =
      o.kernel == AttentionKernel::automatic ? attention_kernel() : o.kernel;
  if (kernel == AttentionKernel::unfused || o.probs || o.score_bias.defined() ||
      (o.queries && (o.causal || o.distance_bias.defined())) || q.dtype() != k.dtype() ||
      (q.dtype() != DType::f32 && q.dtype() != DType::f64) ||
      !key_padding_of(o.mask, q.size(0), k.size(2), key_padding)) {
    return false;
  }
  return kernel == AttentionKernel::fused ||
         fused_attention_pays(q.size(0), q.size(1), q.size(2), k.size(2), o.causal);
}

}  // namespace

void set_attention_kernel(AttentionKernel kernel) {
  chosen_kernel().store(kernel);
}

AttentionKernel attention_kernel() {
  return chosen_kernel().load();
}

bool fused_attention_pays(int64_t batch, int64_t heads, int64_t tq, int64_t tk, bool causal) {
  const bool bf16 = matmul_precision() == MatmulPrecision::bf16;
  if (causal && tk >= (bf16 ? 512 : 256)) return true;
  const double probability_bytes = 4.0 * static_cast<double>(batch * heads) * tq * tk;
  return probability_bytes >= 512.0 * (1 << 20);
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const ScaledDotProductOptions& o) {
  HEED_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4 && q.size(-1) == k.size(-1) &&
                 k.size(-2) == v.size(-2),
             "attention: q {}, k {}, v {} must be [B, h, T, d] with matching d and key length",
             q.shape_str(), k.shape_str(), v.shape_str());
  const double scale = o.scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  const bool dropout = o.training && o.dropout_p > 0.0;
  HEED_CHECK(!dropout || o.generator != nullptr, "attention: dropout needs a generator");
  Tensor key_padding;
  if (takes_fused_path(q, k, o, key_padding)) {
    return flash_attention(q, k, v, scale,
                           {.key_padding = key_padding,
                            .causal = o.causal,
                            .distance_bias = o.distance_bias,
                            .dropout_p = dropout ? o.dropout_p : 0.0,
                            .generator = o.generator,
                            .queries = o.queries});
  }
  // k^T is a strided view: the product reads it in place.
  Tensor scores = matmul(q, k.transpose(-1, -2));
  if (o.score_bias.defined()) scores = add(scores, o.score_bias);
  if (o.training && o.dropout_p > 0.0) {
    return attention_dropout_values(scores, v, scale, o.mask, o.causal, o.dropout_p, *o.generator,
                                    o.probs, o.queries, o.distance_bias);
  }
  Tensor p = attention_softmax(scores, scale, o.mask, o.causal, o.distance_bias);
  if (o.probs) *o.probs = p;
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

// [B, T, C] -> [B, T, h, d] -> [B, h, T, d]: views, no copies.
Tensor split_heads(const Tensor& x, int64_t heads, int64_t head_dim) {
  return x.reshape({x.size(0), x.size(1), heads, head_dim}).permute({0, 2, 1, 3});
}

// The [B, Tk] padding mask as attention broadcasts it, checked; undefined stays undefined.
Tensor checked_padding_mask(const Tensor& key_padding_mask, int64_t B, int64_t Tk) {
  if (!key_padding_mask.defined()) return Tensor();
  HEED_CHECK(key_padding_mask.dim() == 2 && key_padding_mask.size(0) == B &&
                 key_padding_mask.size(1) == Tk,
             "MultiHeadAttention: padding mask {} must be [B, Tk] = [{}, {}]",
             key_padding_mask.shape_str(), B, Tk);
  return padding_mask_for_attention(key_padding_mask);
}

}  // namespace

MultiHeadAttention::MultiHeadAttention(const AttentionOptions& opts, Generator& init,
                                       std::shared_ptr<Generator> dropout_gen)
    : options(opts),
      head_dim(opts.head_dim > 0 ? opts.head_dim
                                 : (opts.num_heads > 0 ? opts.embed_dim / opts.num_heads : 0)),
      inner_dim(opts.num_heads * head_dim),
      dropout_generator(std::move(dropout_gen)) {
  const int64_t C = opts.embed_dim, heads = opts.num_heads;
  HEED_CHECK(heads > 0 && C > 0 && (opts.head_dim > 0 || C % heads == 0),
             "MultiHeadAttention: {} heads do not divide the hidden size {}", heads, C);
  HEED_CHECK(!opts.fused_qkv || (inner_dim == C && opts.scale_scores),
             "MultiHeadAttention: a fused q/k/v projection needs heads x head_dim = {} and "
             "scaled scores",
             C);
  HEED_CHECK(opts.dropout >= 0.0 && opts.dropout < 1.0,
             "MultiHeadAttention: dropout must be in [0, 1), got {}", opts.dropout);
  auto projection = [&](int64_t in, int64_t out, double std) {
    return std::make_shared<Linear>(in, out, init, opts.bias, std, opts.dtype, opts.layout);
  };
  if (opts.fused_qkv) {
    q_proj = register_module(opts.names.query, projection(C, 3 * C, opts.init_std));
  } else {
    q_proj = register_module(
        opts.names.query,
        projection(C, inner_dim, opts.query_init_std > 0 ? opts.query_init_std : opts.init_std));
    k_proj = register_module(opts.names.key, projection(C, inner_dim, opts.init_std));
    v_proj = register_module(opts.names.value, projection(C, inner_dim, opts.init_std));
  }
  out_proj = register_module(opts.names.output, projection(inner_dim, C, opts.output_init_std));
  if (opts.relative_positions != RelativePositions::kNone) {
    HEED_CHECK(!opts.fused_qkv,
               "MultiHeadAttention: relative positions need separate q/k/v projections");
    relative = register_module(
        opts.names.distance_embedding,
        std::make_shared<RelativePositionScores>(opts.relative_positions, opts.max_positions,
                                                 head_dim, init, opts.init_std, opts.dtype));
  }
}

AttentionOutput MultiHeadAttention::forward(const Tensor& query, const AttentionCall& call) const {
  const int64_t C = options.embed_dim;
  const bool cross = call.key_value.defined();
  const Tensor& kv = cross ? call.key_value : query;
  HEED_CHECK(query.dim() == 3 && query.size(-1) == C && kv.dim() == 3 && kv.size(-1) == C &&
                 kv.size(0) == query.size(0),
             "MultiHeadAttention: query {} and key/value {} must be [B, T, {}]", query.shape_str(),
             kv.shape_str(), C);
  HEED_CHECK(!options.fused_qkv || !cross,
             "MultiHeadAttention: a fused q/k/v projection serves self-attention only");
  const int64_t B = query.size(0), Tq = query.size(1);
  const AttentionCache* cache = call.cache;
  HEED_CHECK(!cache || cache->empty() || cache->key.size(0) == B,
             "MultiHeadAttention: a cache of {} rows for a batch of {}",
             cache && !cache->empty() ? cache->key.size(0) : 0, B);
  HEED_CHECK(!call.distance_bias.defined() || !options.fused_qkv,
             "MultiHeadAttention: a distance bias needs separate q/k/v projections");
  if (options.fused_qkv && !cache) return fused_self_attention(query, call);
  HEED_CHECK(!relative || (!cross && !cache),
             "MultiHeadAttention: relative positions serve self-attention without a KV cache");
  // Relative positions score each picked query against its own position, which the picked
  // path does not track: it takes the full path (the same numbers, all rows computed).
  if (call.output_rows.defined() && !options.fused_qkv && !cache && !call.causal &&
      !call.need_weights && !relative && !call.distance_bias.defined()) {
    const PickedQueries picked = pick_queries(call.output_rows, B, Tq);
    if (picked.per_sequence < Tq) return picked_query_attention(query, kv, call, picked);
  }
  return full_attention(query, kv, call);
}

Tensor MultiHeadAttention::project_output(const Tensor& merged, const Tensor& output_rows) const {
  if (!output_rows.defined()) return out_proj->forward(merged);
  return out_proj->forward(
      embedding(merged.reshape({merged.size(0) * merged.size(1), inner_dim}), output_rows));
}

AttentionOutput MultiHeadAttention::fused_self_attention(const Tensor& query,
                                                         const AttentionCall& call) const {
  const int64_t B = query.size(0), Tq = query.size(1);
  // Where the tiled kernel runs, the heads are views of the packed projection all the same.
  const AttentionKernel kernel = attention_kernel();
  if (!call.need_weights && kernel != AttentionKernel::unfused &&
      (kernel == AttentionKernel::fused ||
       fused_attention_pays(B, options.num_heads, Tq, Tq, call.causal))) {
    return full_attention(query, query, call);
  }
  const double p = is_training() ? options.dropout : 0.0;
  AttentionOutput out;
  out.output = project_output(
      self_attention_qkv(q_proj->forward(query), options.num_heads,
                         checked_padding_mask(call.key_padding_mask, B, Tq), call.causal, p,
                         dropout_generator.get(), call.need_weights ? &out.probs : nullptr),
      call.output_rows);
  return out;
}

AttentionOutput MultiHeadAttention::picked_query_attention(const Tensor& query, const Tensor& kv,
                                                           const AttentionCall& call,
                                                           const PickedQueries& picked) const {
  // Only the picked queries: their projection, scores, softmax and values (BERT's last
  // layer under a masked-LM head masking 15% of 32 x 128: blocks of 24-36 queries of 128).
  const int64_t C = options.embed_dim, heads = options.num_heads;
  const int64_t B = query.size(0), Tq = query.size(1), Q = picked.per_sequence;
  const Tensor picked_inputs = embedding(query.reshape({B * Tq, C}), picked.rows);
  const Tensor q = split_heads(q_proj->forward(picked_inputs.reshape({B, Q, C})), heads, head_dim);
  const QueryRows query_rows{picked.positions, Tq};
  Tensor context = scaled_dot_product_attention(
      q, split_heads(k_proj->forward(kv), heads, head_dim),
      split_heads(v_proj->forward(kv), heads, head_dim),
      {.mask = checked_padding_mask(call.key_padding_mask, B, kv.size(1)),
       .scale = options.scale_scores ? std::optional<double>() : 1.0,
       .dropout_p = options.dropout,
       .training = is_training(),
       .generator = dropout_generator.get(),
       .queries = &query_rows});
  context = context.permute({0, 2, 1, 3}).reshape({B * Q, inner_dim});
  AttentionOutput out;
  out.output = out_proj->forward(embedding(context, picked.outputs));
  return out;
}

MultiHeadAttention::Heads MultiHeadAttention::project_heads(const Tensor& query, const Tensor& kv,
                                                            bool reuse_keys) const {
  const int64_t C = options.embed_dim, heads = options.num_heads;
  Heads h;
  if (options.fused_qkv) {
    Tensor qkv = q_proj->forward(query);  // [B, T, 3C], columns [q | k | v]
    h.q = split_heads(qkv.slice(-1, 0, C), heads, head_dim);
    h.k = split_heads(qkv.slice(-1, C, 2 * C), heads, head_dim);
    h.v = split_heads(qkv.slice(-1, 2 * C, 3 * C), heads, head_dim);
  } else {
    h.q = split_heads(q_proj->forward(query), heads, head_dim);
    if (!reuse_keys) {
      h.k = split_heads(k_proj->forward(kv), heads, head_dim);
      h.v = split_heads(v_proj->forward(kv), heads, head_dim);
    }
  }
  return h;
}

AttentionOutput MultiHeadAttention::full_attention(const Tensor& query, const Tensor& kv,
                                                   const AttentionCall& call) const {
  const int64_t B = query.size(0), Tq = query.size(1);
  AttentionCache* cache = call.cache;
  const bool cross = call.key_value.defined();
  const bool reuse_keys = cross && cache && !cache->empty();
  auto [q, k, v] = project_heads(query, kv, reuse_keys);
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
  AttentionOutput out;
  Tensor context = scaled_dot_product_attention(
      q, k, v,
      {.mask = checked_padding_mask(call.key_padding_mask, B, k.size(2)),
       .causal = call.causal,
       .score_bias = relative ? relative->scores(q, k) : Tensor(),
       .distance_bias = call.distance_bias,
       .scale = options.scale_scores ? std::optional<double>() : 1.0,
       .dropout_p = options.dropout,
       .training = is_training(),
       .generator = dropout_generator.get(),
       .probs = call.need_weights ? &out.probs : nullptr});
  // [B, h, Tq, d] -> [B, Tq, h, d] -> [B, Tq, C]
  out.output =
      project_output(context.permute({0, 2, 1, 3}).reshape({B, Tq, inner_dim}), call.output_rows);
  // Only a step that went through grows the cache: after an error it is as it was.
  if (cache && !reuse_keys) {
    cache->key = k;
    cache->value = v;
  }
  return out;
}

}  // namespace heed::nn
