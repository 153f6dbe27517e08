#include "nn/models/t5.h"

#include <cmath>
#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "nn/models/config_json.h"

namespace heed::nn {

void T5Config::validate() const {
  check_config_fields(*this, "T5Config");
  HEED_CHECK(relative_attention_max_distance > relative_attention_num_buckets / 4,
             "T5Config: relative_attention_max_distance {} must exceed a quarter of "
             "relative_attention_num_buckets {} (the exact buckets of a direction)",
             relative_attention_max_distance, relative_attention_num_buckets);
}

namespace {

// T5's names for the shared layers: block N's layer.0 is self-attention, then (decoder)
// layer.1 cross-attention, then the feed-forward; each with its own layer_norm.
LayerNames t5_layer_names(bool decoder) {
  const std::string ffn = decoder ? "layer.2" : "layer.1";
  return {.self_attention = "layer.0.SelfAttention",
          .self_attention_norm = "layer.0.layer_norm",
          .cross_attention = "layer.1.EncDecAttention",
          .cross_attention_norm = "layer.1.layer_norm",
          .feed_forward = ffn + ".DenseReluDense",
          .final_norm = ffn + ".layer_norm"};
}

// The layers' options, with Hugging Face's _init_weights (factor = initializer_factor): q
// N(0, (d_model d_kv)^-1/2), k and v N(0, d_model^-1/2), o N(0, (heads d_kv)^-1/2); wi (wi_0,
// wi_1) N(0, d_model^-1/2), wo N(0, d_ff^-1/2).
LayerOptions t5_layer_options(const T5Config& c, bool decoder, DType dtype) {
  const double f = c.initializer_factor;
  const auto inv_sqrt = [](double x) { return 1.0 / std::sqrt(x); };
  const auto d_model = static_cast<double>(c.d_model);
  const auto inner = static_cast<double>(c.num_heads * c.d_kv);
  LayerOptions o;
  o.attention = {.embed_dim = c.d_model,
                 .num_heads = c.num_heads,
                 .head_dim = c.d_kv,
                 .scale_scores = false,
                 .dropout = c.dropout_rate,
                 .bias = false,
                 .init_std = f * inv_sqrt(d_model),
                 .output_init_std = f * inv_sqrt(inner),
                 .query_init_std = f * inv_sqrt(d_model * static_cast<double>(c.d_kv)),
                 .dtype = dtype,
                 .names = t5_attention_names()};
  o.feed_forward = {.hidden_size = c.d_model,
                    .intermediate_size = c.d_ff,
                    .activation = c.gated() ? Activation::gelu_tanh : Activation::relu,
                    .dropout = c.dropout_rate,
                    .activation_dropout = c.dropout_rate,
                    .bias = false,
                    .gated = c.gated(),
                    .init_std = f * inv_sqrt(d_model),
                    .output_init_std = f * inv_sqrt(static_cast<double>(c.d_ff)),
                    .dtype = dtype,
                    .in_name = c.gated() ? "wi_0" : "wi",
                    .out_name = "wo",
                    .gate_name = c.gated() ? "wi_1" : ""};
  o.norm_first = true;
  o.layer_norm_eps = c.layer_norm_epsilon;
  o.norm = NormKind::rms_norm;
  o.hidden_dropout = c.dropout_rate;
  o.names = t5_layer_names(decoder);
  return o;
}

}  // namespace

T5Stack::T5Stack(const T5Config& c, bool is_decoder, std::shared_ptr<Embedding> shared_embedding,
                 Generator& init, std::shared_ptr<Generator> dropout_gen, DType dtype)
    : config(c), embed_tokens(std::move(shared_embedding)) {
  // The model's shared table: registered here too, it is listed once (as shared.weight).
  register_module("embed_tokens", embed_tokens);
  const LayerOptions o = t5_layer_options(c, is_decoder, dtype);
  const int64_t n = is_decoder ? c.decoder_layers() : c.num_layers;
  for (int64_t i = 0; i < n; ++i) {
    const std::string name = "block." + std::to_string(i);
    if (is_decoder) {
      decoder_blocks.push_back(
          register_module(name, std::make_shared<DecoderLayer>(o, init, dropout_gen)));
    } else {
      encoder_blocks.push_back(
          register_module(name, std::make_shared<EncoderLayer>(o, init, dropout_gen)));
    }
    if (i == 0) {
      relative_attention_bias = register_module(
          name + ".layer.0.SelfAttention.relative_attention_bias",
          std::make_shared<RelativeAttentionBias>(
              c.relative_attention_num_buckets, c.relative_attention_max_distance, c.num_heads,
              /*bidirectional=*/!is_decoder, init,
              c.initializer_factor / std::sqrt(static_cast<double>(c.d_model)), dtype));
    }
  }
  final_layer_norm = register_module(
      "final_layer_norm",
      std::make_shared<LayerNorm>(c.d_model, c.layer_norm_epsilon, dtype, NormKind::rms_norm));
  dropout =
      register_module("dropout", std::make_shared<Dropout>(c.dropout_rate, std::move(dropout_gen)));
}

T5ForConditionalGeneration::T5ForConditionalGeneration(const T5Config& c, uint64_t seed,
                                                       DType dtype)
    : config(c) {
  c.validate();
  Generator init(seed);
  dropout_generator = std::make_shared<Generator>(seed + 1);
  // No padding row: T5's shared embedding has none (the pad token's row learns too).
  shared = register_module("shared", std::make_shared<Embedding>(c.vocab_size, c.d_model, init, -1,
                                                                 c.initializer_factor, dtype));
  encoder = register_module(
      "encoder", std::make_shared<T5Stack>(c, false, shared, init, dropout_generator, dtype));
  decoder = register_module(
      "decoder", std::make_shared<T5Stack>(c, true, shared, init, dropout_generator, dtype));
  if (!c.tie_word_embeddings) {
    lm_head =
        register_module("lm_head", std::make_shared<Linear>(c.d_model, c.vocab_size, init, false,
                                                            c.initializer_factor, dtype));
  }
  if (c.initializer_factor != 1.0) {  // Hugging Face's layer norms start at the factor
    NoGradGuard no_grad;
    for (auto& [name, t] : named_parameters()) {
      if (name.ends_with("layer_norm.weight"))
        t.copy_(full(t.shape(), c.initializer_factor, dtype));
    }
  }
}

nlohmann::json T5ForConditionalGeneration::config_json() const {
  nlohmann::json j = to_json(config);
  j["architectures"] = {architecture()};
  return j;
}

bool T5ForConditionalGeneration::ignores_checkpoint_name(const std::string& name) const {
  // Tied copies of shared.weight, and a table that Hugging Face's cross-attention never had
  // but old checkpoints carry (its _keys_to_ignore_on_load_unexpected).
  return name == "encoder.embed_tokens.weight" || name == "decoder.embed_tokens.weight" ||
         (config.tie_word_embeddings && name == "lm_head.weight") ||
         name == "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight";
}

Tensor T5ForConditionalGeneration::encode(const Tensor& input_ids, const Tensor& attention_mask,
                                          std::vector<Tensor>* attentions) const {
  HEED_CHECK(input_ids.dim() == 2, "T5: input ids must be [B, S], got {}", input_ids.shape_str());
  const int64_t S = input_ids.size(1);
  Tensor h = encoder->dropout->forward(shared->forward(input_ids));
  const Tensor mask = keep_mask(attention_mask);
  const Tensor bias = encoder->relative_attention_bias->distance_bias(S, S);
  for (const auto& block : encoder->encoder_blocks) {
    Tensor probs;
    h = block->forward(h, {.padding_mask = mask,
                           .distance_bias = bias,
                           .attention_probs = attentions ? &probs : nullptr});
    if (attentions) attentions->push_back(probs);
  }
  return encoder->dropout->forward(encoder->final_layer_norm->forward(h));
}

Tensor T5ForConditionalGeneration::decode(const Tensor& decoder_input_ids, const Tensor& memory,
                                          const Tensor& memory_mask,
                                          const Tensor& decoder_attention_mask, KVCache* cache,
                                          ModelOutputs* attentions) const {
  HEED_CHECK(decoder_input_ids.dim() == 2, "T5: decoder input ids must be [B, T], got {}",
             decoder_input_ids.shape_str());
  const auto& blocks = decoder->decoder_blocks;
  if (cache) {
    cache->self_attention.resize(blocks.size());
    cache->cross_attention.resize(blocks.size());
  }
  const int64_t T = decoder_input_ids.size(1), past = cache ? cache->length() : 0;
  Tensor h = decoder->dropout->forward(shared->forward(decoder_input_ids));
  // The new positions' bias alone: T queries over the past + T keys.
  const Tensor bias = decoder->relative_attention_bias->distance_bias(T, past + T);
  const Tensor self_mask = keep_mask(decoder_attention_mask), cross_mask = keep_mask(memory_mask);
  for (size_t i = 0; i < blocks.size(); ++i) {
    Tensor self_probs, cross_probs;
    h = blocks[i]->forward(h, memory,
                           {.self_padding_mask = self_mask,
                            .memory_mask = cross_mask,
                            .self_distance_bias = bias,
                            .self_cache = cache ? &cache->self_attention[i] : nullptr,
                            .cross_cache = cache ? &cache->cross_attention[i] : nullptr,
                            .self_probs = attentions ? &self_probs : nullptr,
                            .cross_probs = attentions ? &cross_probs : nullptr});
    if (attentions) {
      attentions->decoder_attentions.push_back(self_probs);
      attentions->cross_attentions.push_back(cross_probs);
    }
  }
  h = decoder->dropout->forward(decoder->final_layer_norm->forward(h));
  if (lm_head) return lm_head->forward(h);
  // The tied head rescales, as Mesh TensorFlow's T5 did.
  return linear(mul(h, 1.0 / std::sqrt(static_cast<double>(config.d_model))), shared->weight);
}

Seq2SeqTokens T5ForConditionalGeneration::special_tokens() const {
  return {.pad = config.pad_token_id,
          .eos = config.eos_token_id,
          .decoder_start = config.decoder_start_token_id};
}

int64_t T5ForConditionalGeneration::max_positions() const {
  // Relative positions: any length (the buckets past max_distance share the last).
  return std::numeric_limits<int32_t>::max();
}

}  // namespace heed::nn
