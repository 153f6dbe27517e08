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
#include "support/step_cases.h"
#include "support/test_util.h"

namespace heed::nn {
namespace {

struct Step {
  float loss = 0;
  std::vector<std::pair<std::string, std::vector<float>>> grads;
};

// Runs the case's model forward and backward, with or without checkpointing.
template <typename Case>
Step training_step(const Case& step, bool checkpointing) {
  auto model = step.make();
  model->train();
  model->set_gradient_checkpointing(checkpointing);
  ModelOutputs out = step.forward(*model);
  out.loss.backward();
  Step s{.loss = static_cast<float>(out.loss.item())};
  for (auto& [name, p] : model->named_parameters()) {
    if (p.grad().defined()) s.grads.emplace_back(name, p.grad().template to_vector<float>());
  }
  return s;
}

template <typename Case>
void expect_same_bits(const Case& step) {
  for (MatmulPrecision precision : {MatmulPrecision::f32, MatmulPrecision::bf16}) {
    testing::MatmulPrecisionScope products(precision);
    const Step plain = training_step(step, false);
    const Step recomputed = training_step(step, true);
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
  expect_same_bits(testing::BertMlmStep(3));
}

TEST(GradientCheckpointing, GptSameBits) {
  expect_same_bits(testing::GptStep(3));
}

TEST(GradientCheckpointing, EncoderDecoderSameBits) {
  expect_same_bits(testing::BartStep(2, 3));  // three gradients reach the encoder's output
}

TEST(GradientCheckpointing, T5SameBits) {
  // Block 0's relative attention bias reaches every layer of its stack: an input of each
  // recomputed layer, whose gradients the table sums.
  expect_same_bits(testing::T5Step(3));
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
