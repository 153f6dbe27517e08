#include "nn/transformer_layers.h"

#include "autograd/checkpoint.h"
#include "autograd/grad_mode.h"
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
    : options(opts), dropout_generator_(dropout_generator) {
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
  if (!gradient_checkpointing() || !grad_enabled() || call.attention_probs || call.cache) {
    return compute(x, call);
  }
  // The distance bias (T5's) is an input too: its gradient must leave the recomputed block
  // through the checkpoint, not run into the graph that made it.
  std::vector<Tensor> inputs{x};
  if (call.distance_bias.defined()) inputs.push_back(call.distance_bias);
  return checkpoint(
      [this, call](const std::vector<Tensor>& in) {
        EncoderLayerCall again = call;
        if (in.size() > 1) again.distance_bias = in[1];
        return compute(in[0], again);
      },
      inputs, dropout_generator_.get());
}

Tensor EncoderLayer::compute(const Tensor& x, const EncoderLayerCall& call) const {
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
    : options(opts), dropout_generator_(dropout_generator) {
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
  if (!gradient_checkpointing() || !grad_enabled() || call.self_probs || call.cross_probs ||
      call.self_cache || call.cross_cache) {
    return compute(x, memory, call);
  }
  std::vector<Tensor> inputs{x, memory};
  if (call.self_distance_bias.defined()) inputs.push_back(call.self_distance_bias);
  return checkpoint(
      [this, call](const std::vector<Tensor>& in) {
        DecoderLayerCall again = call;
        if (in.size() > 2) again.self_distance_bias = in[2];
        return compute(in[0], in[1], again);
      },
      inputs, dropout_generator_.get());
}

Tensor DecoderLayer::compute(const Tensor& x, const Tensor& memory_in,
                             const DecoderLayerCall& call) const {
  // One gradient to the encoder's output per layer, with checkpointing or without.
  const Tensor memory = alias(memory_in);
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
