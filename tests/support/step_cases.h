#pragma once
// A tiny model of each family with dropout on and a batch for it: the training steps that tests
// compute two ways and compare (recomputation against none, fused attention against unfused).
// Each case makes a fresh model (same seed, same weights) and runs its forward with the loss.
#include <cstdint>
#include <memory>

#include "autograd/ops.h"
#include "nn/models/bert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/models/t5.h"

namespace heed::testing {

// BERT's masked LM over 2 x 6 tokens (the second row padded), the last layer attending from
// the labelled queries alone (only_labeled_logits).
struct BertMlmStep {
  nn::BertConfig config;
  Tensor ids = from_vector<int64_t>({2, 7, 9, 3, 11, 4, 2, 8, 3, 5, 0, 0}, {2, 6});
  Tensor mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, {2, 6});
  Tensor labels =
      from_vector<int64_t>({-100, 7, -100, 3, -100, -100, 2, -100, 3, -100, -100, -100}, {2, 6});

  explicit BertMlmStep(int64_t layers) {
    config.vocab_size = 50;
    config.hidden_size = 32;
    config.num_hidden_layers = layers;
    config.num_attention_heads = 4;
    config.intermediate_size = 64;
    config.max_position_embeddings = 16;
    config.hidden_dropout_prob = config.attention_probs_dropout_prob = 0.2;
  }
  std::shared_ptr<nn::BertForMaskedLM> make() const {
    return std::make_shared<nn::BertForMaskedLM>(config, 3);
  }
  nn::ModelOutputs forward(nn::BertForMaskedLM& m) const {
    return m.forward({.input_ids = ids,
                      .attention_mask = mask,
                      .labels = labels,
                      .only_labeled_logits = true,
                      .head_outputs = nn::HeadOutputs::loss_only});
  }
};

// GPT-2 (packed projection, causal mask) over 2 x 5 tokens.
struct GptStep {
  nn::GPT2Config config;
  Tensor ids = from_vector<int64_t>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 5});
  Tensor labels = from_vector<int64_t>({2, 3, 4, 5, -100, 7, 8, 9, 10, 39}, {2, 5});

  explicit GptStep(int64_t layers) {
    config.vocab_size = 40;
    config.n_positions = 8;
    config.n_embd = 16;
    config.n_layer = layers;
    config.n_head = 2;
    config.resid_pdrop = config.attn_pdrop = config.embd_pdrop = 0.2;
  }
  std::shared_ptr<nn::GPT> make() const { return std::make_shared<nn::GPT>(config, 4); }
  nn::ModelOutputs forward(nn::GPT& m) const {
    return m.forward(
        {.input_ids = ids, .labels = labels, .head_outputs = nn::HeadOutputs::loss_only});
  }
};

// The BART layout (cross-attention over a padded source) over 2 x 4 source and 2 x 3 target
// tokens.
struct BartStep {
  nn::BartConfig config;
  Tensor source = from_vector<int64_t>({5, 6, 7, 2, 8, 9, 2, 0}, {2, 4});
  Tensor source_mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4});
  Tensor labels = from_vector<int64_t>({11, 12, 2, 13, 2, -100}, {2, 3});

  BartStep(int64_t encoder_layers, int64_t decoder_layers) {
    config.vocab_size = 30;
    config.max_position_embeddings = 16;
    config.d_model = 16;
    config.encoder_layers = encoder_layers;
    config.decoder_layers = decoder_layers;
    config.encoder_attention_heads = config.decoder_attention_heads = 2;
    config.encoder_ffn_dim = config.decoder_ffn_dim = 32;
    config.dropout = config.attention_dropout = 0.2;
    config.pad_token_id = 0;
    config.bos_token_id = 1;
    config.eos_token_id = 2;
    config.decoder_start_token_id = 1;
  }
  std::shared_ptr<nn::EncoderDecoder> make() const {
    return std::make_shared<nn::EncoderDecoder>(config, 5);
  }
  nn::ModelOutputs forward(nn::EncoderDecoder& m) const {
    return m.forward({.input_ids = source, .attention_mask = source_mask, .labels = labels});
  }
};

// T5 v1.1 (gated-gelu, untied head; block 0's relative attention bias reaches every layer of its
// stack) over the same shapes.
struct T5Step {
  nn::T5Config config;
  Tensor source = from_vector<int64_t>({5, 6, 7, 1, 8, 9, 1, 0}, {2, 4});
  Tensor source_mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4});
  Tensor labels = from_vector<int64_t>({11, 12, 1, 13, 1, -100}, {2, 3});

  explicit T5Step(int64_t layers) {
    config.vocab_size = 20;
    config.d_model = 16;
    config.d_kv = 6;
    config.d_ff = 24;
    config.num_layers = layers;
    config.num_decoder_layers = layers;
    config.num_heads = 2;
    config.relative_attention_num_buckets = 8;
    config.relative_attention_max_distance = 6;
    config.dropout_rate = 0.2;
    config.feed_forward_proj = "gated-gelu";
    config.tie_word_embeddings = false;
  }
  std::shared_ptr<nn::T5ForConditionalGeneration> make() const {
    return std::make_shared<nn::T5ForConditionalGeneration>(config, 6);
  }
  nn::ModelOutputs forward(nn::T5ForConditionalGeneration& m) const {
    return m.forward({.input_ids = source, .attention_mask = source_mask, .labels = labels});
  }
};

}  // namespace heed::testing
