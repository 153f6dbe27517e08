// Gradient checkpointing on whole models: with dropout on, a training step's loss and every
// parameter's gradient are the same bits with and without recomputation, in every family
// whose layers support it, and in both matmul precisions.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "nn/models/bert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/models/t5.h"
#include "support/test_util.h"

namespace heed::nn {
namespace {

struct Step {
  float loss = 0;
  std::vector<std::pair<std::string, std::vector<float>>> grads;
};

// Runs make()'s model forward (step(model)) and backward, with or without checkpointing.
template <typename Make, typename Forward>
Step training_step(Make make, Forward forward, bool checkpointing) {
  auto model = make();
  model->train();
  model->set_gradient_checkpointing(checkpointing);
  ModelOutputs out = forward(*model);
  out.loss.backward();
  Step s{.loss = static_cast<float>(out.loss.item())};
  for (auto& [name, p] : model->named_parameters()) {
    if (p.grad().defined()) s.grads.emplace_back(name, p.grad().template to_vector<float>());
  }
  return s;
}

template <typename Make, typename Forward>
void expect_same_bits(Make make, Forward forward) {
  for (MatmulPrecision precision : {MatmulPrecision::f32, MatmulPrecision::bf16}) {
    testing::MatmulPrecisionScope products(precision);
    const Step plain = training_step(make, forward, false);
    const Step recomputed = training_step(make, forward, true);
    EXPECT_EQ(recomputed.loss, plain.loss);
    ASSERT_EQ(recomputed.grads.size(), plain.grads.size());
    ASSERT_GT(plain.grads.size(), 10u);
    for (size_t i = 0; i < plain.grads.size(); ++i) {
      EXPECT_EQ(recomputed.grads[i].first, plain.grads[i].first);
      EXPECT_EQ(recomputed.grads[i].second, plain.grads[i].second) << plain.grads[i].first;
    }
  }
}

TEST(GradientCheckpointing, BertMaskedLmSameBits) {
  BertConfig c;
  c.vocab_size = 50;
  c.hidden_size = 32;
  c.num_hidden_layers = 3;
  c.num_attention_heads = 4;
  c.intermediate_size = 64;
  c.max_position_embeddings = 16;
  c.hidden_dropout_prob = c.attention_probs_dropout_prob = 0.2;
  const Tensor ids = from_vector<int64_t>({2, 7, 9, 3, 11, 4, 2, 8, 3, 5, 0, 0}, {2, 6});
  const Tensor mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, {2, 6});
  const Tensor labels =
      from_vector<int64_t>({-100, 7, -100, 3, -100, -100, 2, -100, 3, -100, -100, -100}, {2, 6});
  expect_same_bits([&] { return std::make_shared<BertForMaskedLM>(c, 3); },
                   [&](BertForMaskedLM& m) {
                     return m.forward({.input_ids = ids,
                                       .attention_mask = mask,
                                       .labels = labels,
                                       .only_labeled_logits = true,
                                       .head_outputs = HeadOutputs::loss_only});
                   });
}

TEST(GradientCheckpointing, GptSameBits) {
  GPT2Config c;
  c.vocab_size = 40;
  c.n_positions = 8;
  c.n_embd = 16;
  c.n_layer = 3;
  c.n_head = 2;
  c.resid_pdrop = c.attn_pdrop = c.embd_pdrop = 0.2;
  const Tensor ids = from_vector<int64_t>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 5});
  const Tensor labels = from_vector<int64_t>({2, 3, 4, 5, -100, 7, 8, 9, 10, 39}, {2, 5});
  expect_same_bits(
      [&] { return std::make_shared<GPT>(c, 4); },
      [&](GPT& m) {
        return m.forward(
            {.input_ids = ids, .labels = labels, .head_outputs = HeadOutputs::loss_only});
      });
}

TEST(GradientCheckpointing, EncoderDecoderSameBits) {
  BartConfig c;
  c.vocab_size = 30;
  c.max_position_embeddings = 16;
  c.d_model = 16;
  c.encoder_layers = 2;
  c.decoder_layers = 3;  // three gradients reach the encoder's output
  c.encoder_attention_heads = c.decoder_attention_heads = 2;
  c.encoder_ffn_dim = c.decoder_ffn_dim = 32;
  c.dropout = c.attention_dropout = 0.2;
  c.pad_token_id = 0;
  c.bos_token_id = 1;
  c.eos_token_id = 2;
  c.decoder_start_token_id = 1;
  const Tensor source = from_vector<int64_t>({5, 6, 7, 2, 8, 9, 2, 0}, {2, 4});
  const Tensor source_mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4});
  const Tensor labels = from_vector<int64_t>({11, 12, 2, 13, 2, -100}, {2, 3});
  expect_same_bits(
      [&] { return std::make_shared<EncoderDecoder>(c, 5); },
      [&](EncoderDecoder& m) {
        return m.forward({.input_ids = source, .attention_mask = source_mask, .labels = labels});
      });
}

TEST(GradientCheckpointing, T5SameBits) {
  // Block 0's relative attention bias reaches every layer of its stack: an input of each
  // recomputed layer, whose gradients the table sums.
  T5Config c;
  c.vocab_size = 20;
  c.d_model = 16;
  c.d_kv = 6;
  c.d_ff = 24;
  c.num_layers = 3;
  c.num_decoder_layers = 3;
  c.num_heads = 2;
  c.relative_attention_num_buckets = 8;
  c.relative_attention_max_distance = 6;
  c.dropout_rate = 0.2;
  c.feed_forward_proj = "gated-gelu";
  c.tie_word_embeddings = false;
  const Tensor source = from_vector<int64_t>({5, 6, 7, 1, 8, 9, 1, 0}, {2, 4});
  const Tensor source_mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4});
  const Tensor labels = from_vector<int64_t>({11, 12, 1, 13, 1, -100}, {2, 3});
  expect_same_bits(
      [&] { return std::make_shared<T5ForConditionalGeneration>(c, 6); },
      [&](T5ForConditionalGeneration& m) {
        return m.forward({.input_ids = source, .attention_mask = source_mask, .labels = labels});
      });
}

TEST(GradientCheckpointing, EvaluationAndAttentionsRunPlainly) {
  // Probabilities asked for, or no grad mode: the layers run as without checkpointing (and
  // their outputs equal).
  BertConfig c;
  c.vocab_size = 50;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 64;
  c.max_position_embeddings = 16;
  BertForMaskedLM model(c, 3);
  model.eval();
  const Tensor ids = from_vector<int64_t>({2, 7, 9, 3}, {1, 4});
  const ModelOutputs plain = model.forward({.input_ids = ids, .output_attentions = true});
  model.set_gradient_checkpointing(true);
  const ModelOutputs checkpointed = model.forward({.input_ids = ids, .output_attentions = true});
  EXPECT_EQ(checkpointed.logits.to_vector<float>(), plain.logits.to_vector<float>());
  ASSERT_EQ(checkpointed.attentions.size(), 2u);
  EXPECT_EQ(checkpointed.attentions[1].to_vector<float>(), plain.attentions[1].to_vector<float>());
}

}  // namespace
}  // namespace heed::nn
