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

template <typename Make, typename Forward>
Step training_step(Make make, Forward forward, AttentionKernel kernel) {
  AttentionKernelScope scope(kernel);
  auto model = make();
  model->train();
  ModelOutputs out = forward(*model);
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

template <typename Make, typename Forward>
void expect_same_step(Make make, Forward forward) {
  Step truth;
  {
    // f32: the paths differ in the order of their sums only, a few ulps of the largest value
    // through a few layers.
    testing::MatmulPrecisionScope products(MatmulPrecision::f32);
    truth = training_step(make, forward, AttentionKernel::unfused);
    const Step fused = training_step(make, forward, AttentionKernel::fused);
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
  const Step unfused = training_step(make, forward, AttentionKernel::unfused);
  const Step fused = training_step(make, forward, AttentionKernel::fused);
  const double unfused_error = worst_gradient_error(unfused, truth);
  EXPECT_LT(worst_gradient_error(fused, truth), 1.25 * unfused_error + 0x1p-9);
  EXPECT_LT(std::abs(fused.loss - truth.loss),
            1.25 * std::abs(unfused.loss - truth.loss) + 0x1p-9 * std::abs(truth.loss));
}

TEST(FusedAttention, BertMaskedLmStep) {
  BertConfig c;
  c.vocab_size = 50;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 64;
  c.max_position_embeddings = 16;
  c.hidden_dropout_prob = c.attention_probs_dropout_prob = 0.2;
  const Tensor ids = from_vector<int64_t>({2, 7, 9, 3, 11, 4, 2, 8, 3, 5, 0, 0}, {2, 6});
  const Tensor mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, {2, 6});
  const Tensor labels =
      from_vector<int64_t>({-100, 7, -100, 3, -100, -100, 2, -100, 3, -100, -100, -100}, {2, 6});
  // only_labeled_logits: the last layer attends from the labelled queries alone (QueryRows).
  expect_same_step([&] { return std::make_shared<BertForMaskedLM>(c, 3); },
                   [&](BertForMaskedLM& m) {
                     return m.forward({.input_ids = ids,
                                       .attention_mask = mask,
                                       .labels = labels,
                                       .only_labeled_logits = true,
                                       .head_outputs = HeadOutputs::loss_only});
                   });
}

TEST(FusedAttention, GptStep) {
  GPT2Config c;
  c.vocab_size = 40;
  c.n_positions = 8;
  c.n_embd = 16;
  c.n_layer = 2;
  c.n_head = 2;
  c.resid_pdrop = c.attn_pdrop = c.embd_pdrop = 0.2;
  const Tensor ids = from_vector<int64_t>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 5});
  const Tensor labels = from_vector<int64_t>({2, 3, 4, 5, -100, 7, 8, 9, 10, 39}, {2, 5});
  expect_same_step(
      [&] { return std::make_shared<GPT>(c, 4); },
      [&](GPT& m) {
        return m.forward(
            {.input_ids = ids, .labels = labels, .head_outputs = HeadOutputs::loss_only});
      });
}

TEST(FusedAttention, EncoderDecoderStep) {
  BartConfig c;
  c.vocab_size = 30;
  c.max_position_embeddings = 16;
  c.d_model = 16;
  c.encoder_layers = c.decoder_layers = 2;
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
  expect_same_step(
      [&] { return std::make_shared<EncoderDecoder>(c, 5); },
      [&](EncoderDecoder& m) {
        return m.forward({.input_ids = source, .attention_mask = source_mask, .labels = labels});
      });
}

TEST(FusedAttention, T5Step) {
  // The relative attention bias table (a distance bias, scale 1) gets its gradient from both.
  T5Config c;
  c.vocab_size = 20;
  c.d_model = 16;
  c.d_kv = 6;
  c.d_ff = 24;
  c.num_layers = 2;
  c.num_decoder_layers = 2;
  c.num_heads = 2;
  c.relative_attention_num_buckets = 8;
  c.relative_attention_max_distance = 6;
  c.dropout_rate = 0.2;
  c.feed_forward_proj = "gated-gelu";
  c.tie_word_embeddings = false;
  const Tensor source = from_vector<int64_t>({5, 6, 7, 1, 8, 9, 1, 0}, {2, 4});
  const Tensor source_mask = from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 0}, {2, 4});
  const Tensor labels = from_vector<int64_t>({11, 12, 1, 13, 1, -100}, {2, 3});
  expect_same_step(
      [&] { return std::make_shared<T5ForConditionalGeneration>(c, 6); },
      [&](T5ForConditionalGeneration& m) {
        return m.forward({.input_ids = source, .attention_mask = source_mask, .labels = labels});
      });
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
