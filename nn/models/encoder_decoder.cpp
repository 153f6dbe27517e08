#include "nn/models/encoder_decoder.h"

#include <cmath>

#include "autograd/ops.h"
#include "autograd/random.h"
#include "nn/models/config_json.h"

namespace heed::nn {

void BartConfig::validate() const {
  check_config_fields(*this, "BartConfig");
  HEED_CHECK(activation_dropout == 0.0,
             "BartConfig: activation_dropout is not supported yet (use 0.0)");
}

LearnedPositions::LearnedPositions(int64_t n, int64_t dim, Generator& init, double std, DType dtype)
    : positions(n) {
  weight = register_parameter("weight", randn({n + kOffset, dim}, init, dtype, 0.0, std));
}

Tensor LearnedPositions::forward(int64_t length, int64_t start) const {
  HEED_CHECK(start + length <= positions,
             "BART: sequence of {} tokens is longer than max_position_embeddings {}",
             start + length, positions);
  return embedding(weight, arange(kOffset + start, kOffset + start + length));
}

BartStack::BartStack(const BartConfig& c, bool is_decoder,
                     std::shared_ptr<Embedding> shared_embedding, Generator& init,
                     std::shared_ptr<Generator> dropout_gen, DType dtype)
    : config(c), embed_tokens(std::move(shared_embedding)) {
  // embed_tokens is the model's shared table: registered here too, it is listed once (as
  // model.shared.weight), exactly as Hugging Face's tied weights are.
  register_module("embed_tokens", embed_tokens);
  embed_positions = register_module(
      "embed_positions", std::make_shared<LearnedPositions>(c.max_position_embeddings, c.d_model,
                                                            init, c.init_std, dtype));
  const int64_t heads = is_decoder ? c.decoder_attention_heads : c.encoder_attention_heads;
  const int64_t ffn = is_decoder ? c.decoder_ffn_dim : c.encoder_ffn_dim;
  LayerOptions o;
  o.attention = {.embed_dim = c.d_model,
                 .num_heads = heads,
                 .dropout = c.attention_dropout,
                 .init_std = c.init_std,
                 .output_init_std = c.init_std,
                 .dtype = dtype};
  o.feed_forward = {.hidden_size = c.d_model,
                    .intermediate_size = ffn,
                    .activation = parse_activation(c.activation_function),
                    .dropout = c.dropout,
                    .init_std = c.init_std,
                    .output_init_std = c.init_std,
                    .dtype = dtype};
  o.norm_first = false;
  o.layer_norm_eps = 1e-5;  // BART's nn.LayerNorm default
  o.hidden_dropout = c.dropout;
  const int64_t n = is_decoder ? c.decoder_layers : c.encoder_layers;
  for (int64_t i = 0; i < n; ++i) {
    const std::string name = "layers." + std::to_string(i);
    if (is_decoder) {
      decoder_layers.push_back(
          register_module(name, std::make_shared<DecoderLayer>(o, init, dropout_gen)));
    } else {
      encoder_layers.push_back(
          register_module(name, std::make_shared<EncoderLayer>(o, init, dropout_gen)));
    }
  }
  layernorm_embedding =
      register_module("layernorm_embedding", std::make_shared<LayerNorm>(c.d_model, 1e-5, dtype));
  dropout =
      register_module("dropout", std::make_shared<Dropout>(c.dropout, std::move(dropout_gen)));
}

Tensor BartStack::embed(const Tensor& ids, int64_t start) const {
  HEED_CHECK(ids.dim() == 2, "BART: ids must be [B, T], got {}", ids.shape_str());
  Tensor tokens = embed_tokens->forward(ids);
  if (config.scale_embedding) tokens = mul(tokens, std::sqrt(static_cast<double>(config.d_model)));
  Tensor x = add(tokens, embed_positions->forward(ids.size(1), start));
  return dropout->forward(layernorm_embedding->forward(x));
}

nlohmann::json EncoderDecoder::config_json() const {
  nlohmann::json j = to_json(config);
  j["architectures"] = {architecture()};
  return j;
}

bool EncoderDecoder::ignores_checkpoint_name(const std::string& name) const {
  // Tied copies of model.shared.weight.
  return name == "model.encoder.embed_tokens.weight" ||
         name == "model.decoder.embed_tokens.weight" || name == "lm_head.weight";
}

EncoderDecoder::EncoderDecoder(const BartConfig& c, uint64_t seed, DType dtype) : config(c) {
  c.validate();
  Generator init(seed);
  dropout_generator = std::make_shared<Generator>(seed + 1);
  shared = register_module(
      "model.shared", std::make_shared<Embedding>(c.vocab_size, c.d_model, init, c.pad_token_id,
                                                  c.init_std, dtype));
  encoder = register_module("model.encoder", std::make_shared<BartStack>(c, false, shared, init,
                                                                         dropout_generator, dtype));
  decoder = register_module("model.decoder", std::make_shared<BartStack>(c, true, shared, init,
                                                                         dropout_generator, dtype));
  final_logits_bias = register_buffer("final_logits_bias", zeros({1, c.vocab_size}, dtype));
}

Tensor EncoderDecoder::encode(const Tensor& input_ids, const Tensor& attention_mask,
                              std::vector<Tensor>* attentions) const {
  Tensor h = encoder->embed(input_ids);
  const Tensor mask = keep_mask(attention_mask);
  for (const auto& layer : encoder->encoder_layers) {
    Tensor probs;
    h = layer->forward(h, {.padding_mask = mask, .attention_probs = attentions ? &probs : nullptr});
    if (attentions) attentions->push_back(probs);
  }
  return h;
}

Tensor EncoderDecoder::decode(const Tensor& decoder_input_ids, const Tensor& memory,
                              const Tensor& memory_mask, const Tensor& decoder_attention_mask,
                              KVCache* cache, ModelOutputs* attentions) const {
  const auto& layers = decoder->decoder_layers;
  if (cache) {
    cache->self_attention.resize(layers.size());
    cache->cross_attention.resize(layers.size());
  }
  Tensor h = decoder->embed(decoder_input_ids, cache ? cache->length() : 0);
  const Tensor self_mask = keep_mask(decoder_attention_mask), cross_mask = keep_mask(memory_mask);
  for (size_t i = 0; i < layers.size(); ++i) {
    Tensor self_probs, cross_probs;
    h = layers[i]->forward(h, memory,
                           {.self_padding_mask = self_mask,
                            .memory_mask = cross_mask,
                            .self_cache = cache ? &cache->self_attention[i] : nullptr,
                            .cross_cache = cache ? &cache->cross_attention[i] : nullptr,
                            .self_probs = attentions ? &self_probs : nullptr,
                            .cross_probs = attentions ? &cross_probs : nullptr});
    if (attentions) {
      attentions->decoder_attentions.push_back(self_probs);
      attentions->cross_attentions.push_back(cross_probs);
    }
  }
  return add(linear(h, shared->weight), final_logits_bias);
}

Seq2SeqTokens EncoderDecoder::special_tokens() const {
  return {.pad = config.pad_token_id,
          .eos = config.eos_token_id,
          .decoder_start = config.decoder_start_token_id,
          .bos = config.bos_token_id};
}

}  // namespace heed::nn
