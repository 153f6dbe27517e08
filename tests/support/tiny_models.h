#pragma once
// Tiny GPT and encoder-decoder models in eval mode for the decoding tests.
#include <memory>

#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/models/t5.h"

namespace heed::testing {

// Random weights drawn wider than the usual 0.02 give peaked next-token distributions, so
// that argmaxes are decided by clear margins rather than by rounding.
inline constexpr double kInitStd = 0.5;

inline std::shared_ptr<nn::GPT> tiny_gpt(int64_t vocab = 12, int64_t positions = 24) {
  nn::GPT2Config c;
  c.vocab_size = vocab;
  c.n_positions = positions;
  c.n_embd = 16;
  c.n_layer = 2;
  c.n_head = 2;
  c.initializer_range = kInitStd;
  c.bos_token_id = c.eos_token_id = 1;
  auto model = std::make_shared<nn::GPT>(c, 7);
  model->eval();
  return model;
}

inline std::shared_ptr<nn::EncoderDecoder> tiny_bart(int64_t vocab = 12) {
  nn::BartConfig c;
  c.vocab_size = vocab;
  c.max_position_embeddings = 24;
  c.d_model = 16;
  c.encoder_layers = c.decoder_layers = 2;
  c.encoder_attention_heads = c.decoder_attention_heads = 2;
  c.encoder_ffn_dim = c.decoder_ffn_dim = 32;
  c.init_std = kInitStd;
  c.pad_token_id = 0;
  c.bos_token_id = 1;
  c.eos_token_id = 2;
  c.decoder_start_token_id = 1;
  auto model = std::make_shared<nn::EncoderDecoder>(c, 11);
  model->eval();
  return model;
}

// T5 v1.1's layout (gated-gelu, untied head); 8 buckets with max distance 6 so that decoding a
// dozen tokens reaches the logarithmic and capped buckets.
inline std::shared_ptr<nn::T5ForConditionalGeneration> tiny_t5(int64_t vocab = 12) {
  nn::T5Config c;
  c.vocab_size = vocab;
  c.d_model = 16;
  c.d_kv = 8;
  c.d_ff = 32;
  c.num_layers = 2;
  c.num_decoder_layers = 2;
  c.num_heads = 2;
  c.relative_attention_num_buckets = 8;
  c.relative_attention_max_distance = 6;
  c.dropout_rate = 0.0;
  c.feed_forward_proj = "gated-gelu";
  c.tie_word_embeddings = false;
  c.pad_token_id = 0;
  c.eos_token_id = 2;
  c.decoder_start_token_id = 0;
  auto model = std::make_shared<nn::T5ForConditionalGeneration>(c, 13);
  model->eval();
  return model;
}

}  // namespace heed::testing
