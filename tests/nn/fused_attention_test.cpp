// The fused attention path (flash_attention) against the unfused one on whole models: a training
// step with dropout on gives the same loss and parameter gradients whichever path attention
// takes, in every family (BERT with its padding mask and picked masked-LM rows, GPT-2's packed
// projection and causal mask, BART's cross-attention, T5's distance bias and unscaled scores)
// and in both matmul precisions. Dropout draws the same elements on both paths, so only the
// order of sums differs.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "nn/attention.h"
#include "nn/models/bert.h"
#include "nn/models/encoder_decoder.h"
#include "nn/models/gpt.h"
#include "nn/models/t5.h"
#include "support/step_cases.h"
#include "support/test_util.h"

namespace heed::nn {
namespace {

// Sets the process-wide attention kernel for a scope and puts `automatic` back however it ends.
class AttentionKernelScope {
 public:
  explicit AttentionKernelScope(AttentionKernel kernel) { set_attention_kernel(kernel); }
  ~AttentionKernelScope() { set_attention_kernel(AttentionKernel::automatic); }
  AttentionKernelScope(const AttentionKernelScope&) = delete;
  AttentionKernelScope& operator=(const AttentionKernelScope&) = delete;
};

struct Step {
  double loss = 0;
  std::vector<std::pair<std::string, Tensor>> grads;
};

template <typename Case>
Step training_step(const Case& step, AttentionKernel kernel) {
  AttentionKernelScope scope(kernel);
  auto model = step.make();
  model->train();
  ModelOutputs out = step.forward(*model);
  out.loss.backward();
  Step s{.loss = out.loss.item()};
  for (auto& [name, p] : model->named_parameters()) {
    if (p.grad().defined()) s.grads.emplace_back(name, p.grad());
  }
  return s;
}

// Largest |a - b| over the largest |b| (at least 1e-3, below which a gradient is noise).
double scaled_error(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double worst = 0.0, largest = 1e-3;
  for (size_t i = 0; i < y.size(); ++i) largest = std::max(largest, std::abs(y[i]));
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = std::abs(x[i] - y[i]);
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return worst / largest;
}

// The worst scaled_error over the parameters' gradients of `step` against `reference`.
double worst_gradient_error(const Step& step, const Step& reference) {
  EXPECT_EQ(step.grads.size(), reference.grads.size());
  double worst = 0.0;
  for (size_t i = 0; i < step.grads.size() && i < reference.grads.size(); ++i) {
    EXPECT_EQ(step.grads[i].first, reference.grads[i].first);
    worst = std::max(worst, scaled_error(step.grads[i].second, reference.grads[i].second));
  }
  return worst;
}

template <typename Case>
void expect_same_step(const Case& step) {
  Step truth;
  {
    // f32: the paths differ in the order of their sums only, a few ulps of the largest value
    // through a few layers.
    testing::MatmulPrecisionScope products(MatmulPrecision::f32);
    truth = training_step(step, AttentionKernel::unfused);
    const Step fused = training_step(step, AttentionKernel::fused);
    EXPECT_NEAR(fused.loss, truth.loss, 1e-5 * std::max(1.0, std::abs(truth.loss)));
    ASSERT_GT(truth.grads.size(), 10u);
    EXPECT_LT(worst_gradient_error(fused, truth), 1e-5);
  }
  // bf16 products: each path is the f32 step plus its own bf16 roundings, which differ where
  // the probabilities are concerned (the fused path keeps them f32), so the two differ by the
  // sum of two independent errors of that size: through T5's unscaled scores that reaches 3.5%
  // of a key gradient, whose softmax gradient cancels. What the fused path must do is be as
  // close to the f32 step as the unfused one: its worst gradient error at most 1.25 times the
  // unfused path's, plus u / 2 = 2^-9 for the tiny models' near-zero gradients. (Before the
  // fused path kept its probabilities f32, its worst error was 1.5 times the unfused one's.)
  testing::MatmulPrecisionScope products(MatmulPrecision::bf16);
  const Step unfused = training_step(step, AttentionKernel::unfused);
  const Step fused = training_step(step, AttentionKernel::fused);
  const double unfused_error = worst_gradient_error(unfused, truth);
  EXPECT_LT(worst_gradient_error(fused, truth), 1.25 * unfused_error + 0x1p-9);
  EXPECT_LT(std::abs(fused.loss - truth.loss),
            1.25 * std::abs(unfused.loss - truth.loss) + 0x1p-9 * std::abs(truth.loss));
}

TEST(FusedAttention, BertMaskedLmStep) {
  // only_labeled_logits: the last layer attends from the labelled queries alone (QueryRows).
  expect_same_step(testing::BertMlmStep(2));
}

TEST(FusedAttention, GptStep) {
  expect_same_step(testing::GptStep(2));
}

TEST(FusedAttention, EncoderDecoderStep) {
  expect_same_step(testing::BartStep(2, 2));
}

TEST(FusedAttention, T5Step) {
  // The relative attention bias table (a distance bias, scale 1) gets its gradient from both.
  expect_same_step(testing::T5Step(2));
}

TEST(FusedAttention, ProbabilitiesTakeTheUnfusedPath) {
  // Probabilities asked for take the unfused path whatever the setting.
  AttentionKernelScope scope(AttentionKernel::fused);
  const Tensor q = ones({1, 1, 3, 2}), k = ones({1, 1, 3, 2});
  Tensor probs;
  scaled_dot_product_attention(q, k, k, {.probs = &probs});
  ASSERT_TRUE(probs.defined());
  EXPECT_EQ(probs.shape(), (Shape{1, 1, 3, 3}));
}

}  // namespace
}  // namespace heed::nn
