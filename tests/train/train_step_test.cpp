// train::train_step, the step `train` runs and bench/train_step_bench.cpp times: a tiny BERT
// trained with bf16 matrix products follows the f32 run's loss curve; a LoRA step moves only
// what trains.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "autograd/generator.h"
#include "autograd/ops.h"
#include "nn/lora.h"
#include "nn/models/bert.h"
#include "support/test_util.h"
#include "train/run/train_step.h"

using namespace heed;

namespace {

// Masked-LM batches over sequences that count up (token t+1 = token t + 1, wrapping), so a
// masked token follows from its neighbours and the loss can fall far.
std::vector<data::Batch> counting_batches(int64_t count, int64_t batch, int64_t seq,
                                          int64_t vocab) {
  Generator g(4);
  std::vector<data::Batch> batches;
  for (int64_t k = 0; k < count; ++k) {
    data::Batch b{.batch_size = batch, .seq_len = seq, .label_len = seq};
    for (int64_t r = 0; r < batch; ++r) {
      const int64_t start = static_cast<int64_t>(g.next_below(vocab - 5));
      for (int64_t t = 0; t < seq; ++t) {
        const int64_t id = 5 + (start + t) % (vocab - 5);
        const bool masked = g.next_double() < 0.15;
        b.input_ids.push_back(masked ? 3 : id);  // 3 plays [MASK]
        b.labels.push_back(masked ? id : -100);
        b.num_target_tokens += masked;
      }
    }
    b.attention_mask.assign(batch * seq, 1);
    b.token_type_ids.assign(batch * seq, 0);
    batches.push_back(std::move(b));
  }
  return batches;
}

std::vector<double> loss_curve(MatmulPrecision precision, int64_t steps) {
  heed::testing::MatmulPrecisionScope products(precision);
  nn::BertConfig c{.vocab_size = 40,
                   .hidden_size = 32,
                   .num_hidden_layers = 2,
                   .num_attention_heads = 2,
                   .intermediate_size = 64,
                   .hidden_dropout_prob = 0.0,
                   .attention_probs_dropout_prob = 0.0,
                   .max_position_embeddings = 16};
  nn::BertForMaskedLM model(c, 7);
  model.train();
  auto optimizer = train::make_optimizer({.lr = 3e-3, .weight_decay = 0.01}, model);
  const std::vector<data::Batch> batches = counting_batches(4, 16, 16, c.vocab_size);
  size_t next = 0;
  std::vector<double> losses;
  for (int64_t s = 0; s < steps; ++s) {
    train::StepOutcome o =
        train::train_step(train::task_for("mlm"), model, *optimizer,
                          [&] { return batches[next++ % batches.size()]; }, {.max_grad_norm = 1.0});
    losses.push_back(o.loss);
  }
  return losses;
}

}  // namespace

TEST(TrainStep, Bf16FollowsTheF32LossCurve) {
  // Same initialisation, batches and optimizer. bf16 rounds each product's operands to 8
  // significant bits. The curves agree step by step at first (within 5% over the first 60
  // steps); after that the two trajectories separate as any two runs that differ in rounding
  // do (measured: up to 20% on single steps near a loss of 0.7, either way), so the learning
  // they reach is compared instead: the mean of the last 30 steps within 15% of each other,
  // and both below a quarter of the starting loss.
  const std::vector<double> f32 = loss_curve(MatmulPrecision::f32, 150);
  const std::vector<double> bf16 = loss_curve(MatmulPrecision::bf16, 150);
  for (size_t s = 0; s < 60; ++s) {
    EXPECT_NEAR(bf16[s], f32[s], 0.05 * f32[s]) << "step " << s + 1;
  }
  const auto tail_mean = [](const std::vector<double>& v) {
    double total = 0;
    for (size_t s = v.size() - 30; s < v.size(); ++s) total += v[s];
    return total / 30;
  };
  EXPECT_NEAR(tail_mean(bf16), tail_mean(f32), 0.15 * tail_mean(f32));
  EXPECT_LT(tail_mean(f32), 0.25 * f32.front());
  EXPECT_LT(tail_mean(bf16), 0.25 * bf16.front());
}

TEST(TrainStep, AMicroBatchWithoutTargetsIsSkippedAndAStepOfOnlySuchMakesNoUpdate) {
  nn::BertConfig c{.vocab_size = 40,
                   .hidden_size = 16,
                   .num_hidden_layers = 1,
                   .num_attention_heads = 2,
                   .intermediate_size = 32,
                   .hidden_dropout_prob = 0.0,
                   .attention_probs_dropout_prob = 0.0,
                   .max_position_embeddings = 16};
  nn::BertForMaskedLM model(c, 7);
  auto optimizer = train::make_optimizer({.lr = 1e-2}, model);
  const train::TrainingTask& mlm = train::task_for("mlm");
  data::Batch with = counting_batches(1, 4, 8, c.vocab_size).front();
  ASSERT_GT(with.num_target_tokens, 0);
  data::Batch without = with;
  std::ranges::replace_if(
      without.labels, [](int64_t) { return true; }, -100);
  without.num_target_tokens = 0;

  // Without targets the loss is 0/0; the step reads the batch and changes nothing.
  const Tensor before = model.parameters().front().clone();
  train::StepOutcome none = train::train_step(mlm, model, *optimizer, [&] { return without; }, {});
  EXPECT_FALSE(none.updated);
  EXPECT_FALSE(none.nonfinite_loss.has_value());
  EXPECT_EQ(none.skipped_micro_batches, 1);
  EXPECT_EQ(none.tokens, 32);
  EXPECT_EQ(model.parameters().front().to_vector<float>(), before.to_vector<float>());

  // Accumulating an empty micro-batch with a full one is the full one's step alone.
  nn::BertForMaskedLM twin(c, 7);
  auto twin_optimizer = train::make_optimizer({.lr = 1e-2}, twin);
  int calls = 0;
  train::StepOutcome mixed =
      train::train_step(mlm, model, *optimizer, [&] { return calls++ == 0 ? without : with; },
                        {.grad_accum_steps = 2});
  train::StepOutcome alone =
      train::train_step(mlm, twin, *twin_optimizer, [&] { return with; }, {});
  EXPECT_TRUE(mixed.updated);
  EXPECT_EQ(mixed.skipped_micro_batches, 1);
  EXPECT_DOUBLE_EQ(mixed.loss, alone.loss);
  EXPECT_EQ(model.parameters().front().to_vector<float>(),
            twin.parameters().front().to_vector<float>());
}

// LoRA: the step's optimizer holds the adapters and the modules_to_save alone; a frozen base
// weight gets no gradient and no state and stays as it was, bit for bit, through steps with and
// without clipping.
TEST(TrainStep, LoraStepsOnlyAdaptersAndSavedModules) {
  nn::BertConfig c{.vocab_size = 40,
                   .hidden_size = 32,
                   .num_hidden_layers = 2,
                   .num_attention_heads = 2,
                   .intermediate_size = 64,
                   .max_position_embeddings = 16};
  nn::BertForMaskedLM model(c, 7);
  model.train();
  Generator init(8);
  nn::attach_lora(model,
                  {.options = {.r = 4, .alpha = 8, .dropout = 0.1},
                   .target_modules = {"query", "value"},
                   .modules_to_save = {"cls.predictions.transform"}},
                  init);
  auto optimizer = train::make_optimizer({.lr = 1e-2, .weight_decay = 0.01}, model);
  std::vector<std::string> stepped;
  for (const optim::ParamGroup& group : optimizer->param_groups()) {
    for (const auto& [name, p] : group.params) stepped.push_back(name);
  }
  std::vector<std::string> expected;
  for (const auto& [name, p] : nn::trainable_parameters(model)) expected.push_back(name);
  std::ranges::sort(stepped);
  std::ranges::sort(expected);
  EXPECT_EQ(stepped, expected);
  EXPECT_EQ(stepped.size(), 4u + 2 * 2 * 2);  // the transform's dense and LayerNorm; 4 A, 4 B

  const std::string frozen = "bert.encoder.layer.0.attention.self.query.weight";
  Tensor weight;
  for (const auto& [name, p] : model.named_parameters()) {
    if (name == frozen) weight = p;
  }
  const std::vector<float> before = weight.to_vector<float>();
  const std::vector<data::Batch> batches = counting_batches(2, 8, 16, c.vocab_size);
  for (double clip : {1.0, 0.0}) {
    const train::StepOutcome o =
        train::train_step(train::task_for("mlm"), model, *optimizer, [&] { return batches[0]; },
                          {.max_grad_norm = clip});
    EXPECT_TRUE(o.updated);
    EXPECT_GT(o.grad_norm, 0.0);
  }
  EXPECT_EQ(weight.to_vector<float>(), before);
  EXPECT_FALSE(weight.grad().defined());
  EXPECT_THROW(optimizer->state(frozen), Error);  // not one of its parameters
  const optim::ParamState* adapter =
      optimizer->state("bert.encoder.layer.0.attention.self.query.lora_B.weight");
  ASSERT_NE(adapter, nullptr);
  EXPECT_EQ(adapter->step, 2);
}
