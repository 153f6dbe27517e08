#include "nn/transformer_layers.h"

#include "autograd/ops.h"

namespace heed::nn {
namespace {

std::shared_ptr<LayerNorm> make_norm(const LayerOptions& o) {
  return std::make_shared<LayerNorm>(o.attention.embed_dim, o.layer_norm_eps, o.attention.dtype,
                                     o.norm);
}

// One residual block: post-LN computes norm(x + block(x)); pre-LN computes x + block(norm(x)).
// `skip` is the residual's own input when the block keeps fewer rows than it reads (x's
// rows that the block's output stands for); by default x itself.
template <typename Block>
Tensor residual(const Tensor& x, const LayerNorm& norm, bool norm_first, Block block,
                const Tensor& skip = Tensor()) {
  const Tensor& through = skip.defined() ? skip : x;
  if (norm_first) return add(through, block(norm.forward(x)));
  return norm.forward(add(through, block(x)));
}

}  // namespace

EncoderLayer::EncoderLayer(const LayerOptions& opts, Generator& init,
                           std::shared_ptr<Generator> dropout_generator)
    : options(opts) {
  attention = register_module(
      opts.names.self_attention,
      std::make_shared<MultiHeadAttention>(opts.attention, init, dropout_generator));
  attention_norm = register_module(opts.names.self_attention_norm, make_norm(opts));
  feed_forward =
      register_module(opts.names.feed_forward,
                      std::make_shared<FeedForward>(opts.feed_forward, init, dropout_generator));
  final_norm = register_module(opts.names.final_norm, make_norm(opts));
  dropout =
      register_module("dropout", std::make_shared<Dropout>(opts.hidden_dropout, dropout_generator));
}

Tensor EncoderLayer::forward(const Tensor& x, const EncoderLayerCall& call) const {
  // The kept rows of x, [M, C], for the residual sum around attention.
  const Tensor skip = call.output_rows.defined()
                          ? embedding(x.reshape({-1, x.size(-1)}), call.output_rows)
                          : Tensor();
  Tensor h = residual(
      x, *attention_norm, options.norm_first,
      [&](const Tensor& in) {
        AttentionOutput a = attention->forward(in, {.key_padding_mask = call.padding_mask,
                                                    .causal = call.causal,
                                                    .distance_bias = call.distance_bias,
                                                    .need_weights = call.attention_probs != nullptr,
                                                    .cache = call.cache,
                                                    .output_rows = call.output_rows});
        if (call.attention_probs) *call.attention_probs = a.probs;
        return dropout->forward(a.output);
      },
      skip);
  return residual(h, *final_norm, options.norm_first,
                  [&](const Tensor& in) { return feed_forward->forward(in); });
}

DecoderLayer::DecoderLayer(const LayerOptions& opts, Generator& init,
                           std::shared_ptr<Generator> dropout_generator)
    : options(opts) {
  self_attention = register_module(
      opts.names.self_attention,
      std::make_shared<MultiHeadAttention>(opts.attention, init, dropout_generator));
  self_attention_norm = register_module(opts.names.self_attention_norm, make_norm(opts));
  cross_attention = register_module(
      opts.names.cross_attention,
      std::make_shared<MultiHeadAttention>(opts.attention, init, dropout_generator));
  cross_attention_norm = register_module(opts.names.cross_attention_norm, make_norm(opts));
  feed_forward =
      register_module(opts.names.feed_forward,
                      std::make_shared<FeedForward>(opts.feed_forward, init, dropout_generator));
  final_norm = register_module(opts.names.final_norm, make_norm(opts));
  dropout =
      register_module("dropout", std::make_shared<Dropout>(opts.hidden_dropout, dropout_generator));
}

Tensor DecoderLayer::forward(const Tensor& x, const Tensor& memory,
                             const DecoderLayerCall& call) const {
  Tensor h = residual(x, *self_attention_norm, options.norm_first, [&](const Tensor& in) {
    AttentionOutput a = self_attention->forward(in, {.key_padding_mask = call.self_padding_mask,
                                                     .causal = true,
                                                     .distance_bias = call.self_distance_bias,
                                                     .need_weights = call.self_probs != nullptr,
                                                     .cache = call.self_cache});
    if (call.self_probs) *call.self_probs = a.probs;
    return dropout->forward(a.output);
  });
  h = residual(h, *cross_attention_norm, options.norm_first, [&](const Tensor& in) {
    AttentionOutput a = cross_attention->forward(in, {.key_value = memory,
                                                      .key_padding_mask = call.memory_mask,
                                                      .need_weights = call.cross_probs != nullptr,
                                                      .cache = call.cross_cache});
    if (call.cross_probs) *call.cross_probs = a.probs;
    return dropout->forward(a.output);
  });
  return residual(h, *final_norm, options.norm_first,
                  [&](const Tensor& in) { return feed_forward->forward(in); });
}

}  // namespace heed::nn
