// The memory estimate's arithmetic on a config small enough to work out by hand, and the
// advice `train` gives when a run does not fit.
#include "train/run/memory_estimate.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "data/char_tokenizer.h"
#include "data/text_tokenizer.h"
#include "nn/attention.h"
#include "nn/models/bert.h"
#include "train/tasks/model_configs.h"

namespace heed::train {
namespace {

// BERT with vocabulary 100, hidden 8, 2 layers, 2 heads, FFN 16, 16 positions; batches of
// 4 x 8 tokens, a quarter of them masked; AdamW.
RunConfig small_bert(const std::vector<std::string>& more = {}) {
  std::vector<std::string> overrides = {"model.vocab_size=100",
                                        "model.hidden_size=8",
                                        "model.num_hidden_layers=2",
                                        "model.num_attention_heads=2",
                                        "model.intermediate_size=16",
                                        "model.max_position_embeddings=16",
                                        "data.max_seq_length=8",
                                        "data.mlm_probability=0.25",
                                        "train.batch_size=4",
                                        "train.grad_accum_steps=1",
                                        "optim.name=adamw",
                                        "train.dtype=f32",
                                        "train.gradient_checkpointing=false"};
  overrides.insert(overrides.end(), more.begin(), more.end());
  return read_run_config(fmt::format("{}/configs/tiny/bert_mlm.yaml", HEED_SOURCE_DIR), overrides);
}

// No data sets: the micro-batch is train.batch_size and there are no token ids to hold.
TaskData no_data() {
  TaskData d;
  d.tokenizer = std::make_shared<data::TextTokenizer>(
      data::CharTokenizer::build({"abc"}, data::CharTokenizer::Unit::kCharacter));
  return d;
}

// Worked out by hand (H 8, FFN 16, heads 2, T 8, 32 tokens, 8 masked):
//   parameters: embeddings (100 + 16 + 2) x 8 + their LayerNorm 16 = 960; a layer 4 x (64 + 8)
//   + 2 x 8 x 16 + 16 + 8 + 2 x 16 = 600, two of them 1,200; the MLM transform 64 + 8 + 16 and
//   the decoder's bias 100: 2,348.
//   a layer's bytes per token, f32: 4 x (6 x 8 + 2 x 16) = 320 operands, 4 x (2 x 8 + 4 +
//   2 x 8) = 144 LayerNorm inputs, statistics and probabilities, (2 x 8 + 2 x 8) / 8 = 4 of
//   dropout bits: 468; bf16 operands: 2 x 80 + 148 = 308.
//   the last layer under the MLM head: 3 x 8 operands a token and a quarter of the rest,
//   f32 4 x 24 + 468 / 4 = 213, bf16 2 x 24 + 308 / 4 = 125.
//   workspace 4 x 32 x (2 x 8 + 5 x 8 + 2 x 16) = 11,264; the head over 8 rows: 4 x (8 x 100
//   + 100 x 8 + 8 x 8) = 6,656.
TEST(MemoryEstimate, MatchesTheArithmeticWorkedOutByHand) {
  const MemoryEstimate f32 = estimate_memory(small_bert(), no_data());
  EXPECT_DOUBLE_EQ(f32.parameters, 2348);
  EXPECT_DOUBLE_EQ(f32.trainable, 2348);
  EXPECT_DOUBLE_EQ(f32.parameter_bytes, 2348 * (4 + 4 + 8));  // weights, gradients, moments
  EXPECT_DOUBLE_EQ(f32.activation_bytes, 32 * (468 + 213) + 11264 + 6656);
  EXPECT_DOUBLE_EQ(f32.total(), f32.parameter_bytes + f32.activation_bytes + f32.runtime_bytes);

  // Recomputation keeps each layer's f32 input and one (whole) layer's working set.
  const MemoryEstimate recomputed =
      estimate_memory(small_bert({"train.gradient_checkpointing=true"}), no_data());
  EXPECT_DOUBLE_EQ(recomputed.activation_bytes, 2 * 32 * 4 * 8 + 32 * 468 + 11264 + 6656);

  // bf16 products: a bf16 copy of each weight, and the products' operands saved in bf16.
  const RunConfig bf16_config = small_bert({"train.dtype=bf16"});
  const MemoryEstimate bf16 = estimate_memory(bf16_config, no_data(), std::nullopt, true);
  EXPECT_DOUBLE_EQ(bf16.parameter_bytes, 2348 * (4 + 2 + 4 + 8));
  EXPECT_DOUBLE_EQ(bf16.activation_bytes, 32 * (308 + 125) + 11264 + 6656);
  // A CPU without them runs train.dtype bf16 as f32, and holds what f32 holds.
  const MemoryEstimate as_run = estimate_memory(bf16_config, no_data());
  EXPECT_DOUBLE_EQ(as_run.total(), native_bf16_products() ? bf16.total() : f32.total());

  // LoRA: every weight, but gradients and moments only for the trainable ones.
  const MemoryEstimate lora = estimate_memory(small_bert(), no_data(), 100);
  EXPECT_DOUBLE_EQ(lora.parameter_bytes, 2348 * 4 + 100 * (4 + 8));

  // Adafactor: its factored second moments are next to nothing, a first moment 4 bytes.
  EXPECT_DOUBLE_EQ(estimate_memory(small_bert({"optim.name=adafactor"}), no_data()).parameter_bytes,
                   2348 * (4 + 4));
  EXPECT_DOUBLE_EQ(
      estimate_memory(small_bert({"optim.name=adafactor", "optim.beta1=0.9"}), no_data())
          .parameter_bytes,
      2348 * (4 + 4 + 4));
}

// On the fused attention path a layer keeps one log-sum-exp per query and head instead of a
// row of probabilities over the 8 keys, and no dropout bits for them: per token 4 x (2 x 8 + 4
// + 2 x 1) + (2 x 1 + 2 x 8) / 8 + 320 = 410.25, under the MLM head 4 x 24 + 410.25 / 4 =
// 198.5625; the workspace 4 x 32 x (2 x 1 + 5 x 8 + 2 x 16) = 9,472.
TEST(MemoryEstimate, FusedAttentionKeepsNoProbabilities) {
  const nn::AttentionKernel before = nn::attention_kernel();
  nn::set_attention_kernel(nn::AttentionKernel::fused);
  const MemoryEstimate fused = estimate_memory(small_bert(), no_data());
  nn::set_attention_kernel(before);
  EXPECT_DOUBLE_EQ(fused.activation_bytes, 32 * (410.25 + 198.5625) + 9472 + 6656);
  // BERT's relative positions add a [B, h, T, T] score bias, which keeps attention unfused.
  nn::set_attention_kernel(nn::AttentionKernel::fused);
  const MemoryEstimate relative =
      estimate_memory(small_bert({"model.position_embedding_type=relative_key"}), no_data());
  nn::set_attention_kernel(nn::AttentionKernel::unfused);
  const MemoryEstimate unfused =
      estimate_memory(small_bert({"model.position_embedding_type=relative_key"}), no_data());
  nn::set_attention_kernel(before);
  EXPECT_DOUBLE_EQ(relative.activation_bytes, unfused.activation_bytes);
}

TEST(MemoryEstimate, CountsTheParametersTheModelHas) {
  const RunConfig c = small_bert();
  const TaskData d = no_data();
  nn::BertForMaskedLM model(bert_config(c, d), 1);
  double n = 0;
  for (const Tensor& p : model.parameters()) n += static_cast<double>(p.numel());
  EXPECT_DOUBLE_EQ(estimate_memory(c, d).parameters, n);
}

// A machine that holds the run at a quarter of its micro-batch or at half its sequence, but
// not as it stands: the advice names the keys and the values that fit.
TEST(MemoryEstimate, AdviceNamesWhatWouldFit) {
  const RunConfig c = small_bert({"train.batch_size=16", "data.max_seq_length=16"});
  const TaskData d = no_data();
  const double full = estimate_memory(c, d).total();
  const double quarter =
      estimate_memory(
          small_bert({"train.batch_size=4", "train.grad_accum_steps=4", "data.max_seq_length=16"}),
          d)
          .total();
  const double half =
      estimate_memory(small_bert({"train.batch_size=8", "data.max_seq_length=16"}), d).total();
  ASSERT_LT(quarter, half);
  ASSERT_LT(half, full);
  // Between a quarter and half the batch: batch 8 does not fit, batch 4 does.
  const double machine = (quarter + half) / 2;
  const std::string advice = fitting_advice(c, d, machine);
  EXPECT_NE(advice.find("it would fit with train.batch_size: 4 with train.grad_accum_steps: 4 "
                        "(the same 16 examples a step; about "),
            std::string::npos)
      << advice;
  EXPECT_NE(advice.find("data.max_seq_length: "), std::string::npos) << advice;
  // Whatever sequence it names does fit, and twice that does not.
  const size_t at =
      advice.find("data.max_seq_length: ") + std::string("data.max_seq_length: ").size();
  const int64_t seq = std::stoll(advice.substr(at));
  EXPECT_LE(
      estimate_memory(
          small_bert({"train.batch_size=16", "data.max_seq_length=" + std::to_string(seq)}), d)
          .total(),
      machine);
  EXPECT_GT(
      estimate_memory(
          small_bert({"train.batch_size=16", "data.max_seq_length=" + std::to_string(2 * seq)}), d)
          .total(),
      machine);
  const bool recomputation_fits =
      estimate_memory(small_bert({"train.batch_size=16", "data.max_seq_length=16",
                                  "train.gradient_checkpointing=true"}),
                      d)
          .total() <= machine;
  EXPECT_EQ(advice.find("train.gradient_checkpointing: true (about ") != std::string::npos,
            recomputation_fits)
      << advice;
}

TEST(MemoryEstimate, AdviceSaysWhenOnlyASmallerModelWouldFit) {
  const RunConfig c = small_bert();
  const TaskData d = no_data();
  const std::string advice = fitting_advice(c, d, estimate_memory(c, d).parameter_bytes);
  EXPECT_EQ(advice,
            "none of a smaller train.batch_size, a shorter data.max_seq_length or "
            "train.gradient_checkpointing: true alone would fit: make the model smaller");
}

}  // namespace
}  // namespace heed::train
