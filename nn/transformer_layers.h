#pragma once
// The layers Transformers stack: an encoder layer (self-attention + feed-forward) and a
// decoder layer (causal self-attention + cross-attention + feed-forward), each with its
// LayerNorms after the residual sums (post-LN: BERT, BART) or before each block (pre-LN:
// GPT-2).
#include <memory>
#include <string>

#include "nn/attention.h"
#include "nn/dropout.h"
#include "nn/feed_forward.h"
#include "nn/layer_norm.h"

namespace heed::nn {

// Child names of a layer's parts, so that parameter names match a checkpoint layout.
struct LayerNames {
  std::string self_attention = "self_attn";
  std::string self_attention_norm = "self_attn_layer_norm";
  std::string cross_attention = "encoder_attn";
  std::string cross_attention_norm = "encoder_attn_layer_norm";
  std::string feed_forward = "";  // BART's fc1/fc2 sit directly in the layer
  std::string final_norm = "final_layer_norm";
};

struct LayerOptions {
  AttentionOptions attention;
  FeedForwardOptions feed_forward;
  bool norm_first = false;  // pre-LN (GPT-2, T5) instead of post-LN (BERT, BART)
  double layer_norm_eps = 1e-5;
  NormKind norm = NormKind::layer_norm;  // T5: RMS norm
  double hidden_dropout = 0.0;           // on each block's output, before the residual sum
  LayerNames names;
};

// What one EncoderLayer::forward call masks, caches and returns besides its output, named at
// the call: layer.forward(x, {.padding_mask = mask, .causal = true, .cache = &cache}).
struct EncoderLayerCall {
  // [B, T] (1 = token), or undefined. With a cache it covers the cached positions too.
  Tensor padding_mask;
  // Decoder-only stacks (GPT).
  bool causal = false;
  // [heads, T + Tk - 1], added to the attention scores by distance (T5's relative attention
  // bias; AttentionCall::distance_bias), or undefined.
  Tensor distance_bias;
  // If given, receives the attention probabilities [B, heads, T, Tk].
  Tensor* attention_probs = nullptr;
  // Decoding: x holds only the new positions (MultiHeadAttention's AttentionCall::cache).
  AttentionCache* cache = nullptr;
  // i64 [M], indices into the flattened [B * T] positions: if given, only those rows are
  // returned, [M, C]. Every position still serves as a key and value, but everything after
  // attention runs on the M rows alone (the last layer under a head that reads a few
  // positions: masked-LM labels, [CLS]).
  Tensor output_rows;
};

// The same for DecoderLayer::forward: layer.forward(x, memory, {.memory_mask = mask}).
struct DecoderLayerCall {
  // [B, Tq] (1 = token) over the decoder's own positions (cached ones too), or undefined.
  Tensor self_padding_mask;
  // [B, Tk] (1 = token) over the memory, or undefined.
  Tensor memory_mask;
  // The self-attention's distance bias [heads, Tq + Tq' - 1] (Tq' counting cached positions
  // too; EncoderLayerCall::distance_bias), or undefined. Cross-attention has none.
  Tensor self_distance_bias;
  // Decoding: self_cache keeps the decoder's own keys and values, cross_cache the projected
  // memory; x then holds only the new positions.
  AttentionCache* self_cache = nullptr;
  AttentionCache* cross_cache = nullptr;
  // If given, receive the attention probabilities [B, heads, Tq, Tq] and [B, heads, Tq, Tk].
  Tensor* self_probs = nullptr;
  Tensor* cross_probs = nullptr;
};

class EncoderLayer : public Module {
 public:
  EncoderLayer(const LayerOptions& options, Generator& init,
               std::shared_ptr<Generator> dropout_generator);
  // x [B, T, C]; the rest as EncoderLayerCall says. With gradient checkpointing on, a training
  // forward keeps only x for backward (not when it returns probabilities or fills a cache).
  Tensor forward(const Tensor& x, const EncoderLayerCall& call = {}) const;

  LayerOptions options;
  std::shared_ptr<MultiHeadAttention> attention;
  std::shared_ptr<LayerNorm> attention_norm;
  std::shared_ptr<FeedForward> feed_forward;
  std::shared_ptr<LayerNorm> final_norm;
  std::shared_ptr<Dropout> dropout;

 private:
  Tensor compute(const Tensor& x, const EncoderLayerCall& call) const;
  std::shared_ptr<Generator> dropout_generator_;
};

class DecoderLayer : public Module {
 public:
  DecoderLayer(const LayerOptions& options, Generator& init,
               std::shared_ptr<Generator> dropout_generator);
  // x [B, Tq, C] attends causally to itself and, through cross-attention, to `memory`
  // [B, Tk, C] (the encoder's output); the rest as DecoderLayerCall says. Gradient
  // checkpointing keeps x and memory, as EncoderLayer keeps x.
  Tensor forward(const Tensor& x, const Tensor& memory, const DecoderLayerCall& call = {}) const;

  LayerOptions options;
  std::shared_ptr<MultiHeadAttention> self_attention, cross_attention;
  std::shared_ptr<LayerNorm> self_attention_norm, cross_attention_norm, final_norm;
  std::shared_ptr<FeedForward> feed_forward;
  std::shared_ptr<Dropout> dropout;

 private:
  Tensor compute(const Tensor& x, const Tensor& memory, const DecoderLayerCall& call) const;
  std::shared_ptr<Generator> dropout_generator_;
};

}  // namespace heed::nn
