#include "train/train_step.h"

#include <chrono>
#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "optim/adamw.h"
#include "optim/clip.h"
#include "optim/param_groups.h"
#include "optim/sgd.h"

namespace heed::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t real_tokens(const data::Batch& b) {
  int64_t n = 0;
  for (int64_t m : b.attention_mask) n += m;
  for (int64_t m : b.decoder_attention_mask) n += m;
  return n;
}

}  // namespace

std::unique_ptr<optim::Optimizer> make_optimizer(const OptimConfig& c, const nn::Module& model) {
  auto groups = optim::weight_decay_groups(model.named_parameters(), c.weight_decay);
  if (c.name == OptimizerName::kAdamW) {
    return std::make_unique<optim::AdamW>(groups,
                                          optim::AdamWOptions{.lr = c.lr,
                                                              .beta1 = c.betas[0],
                                                              .beta2 = c.betas[1],
                                                              .eps = c.eps,
                                                              .weight_decay = c.weight_decay});
  }
  return std::make_unique<optim::SGD>(
      groups,
      optim::SGDOptions{.lr = c.lr, .momentum = c.momentum, .weight_decay = c.weight_decay});
}

StepOutcome train_step(const TrainingTask& task, nn::PretrainedModel& model,
                       optim::Optimizer& optimizer, const std::function<data::Batch()>& next_batch,
                       const StepOptions& o) {
  StepOutcome r;
  // A micro-batch without a labelled position (an MLM batch that drew no mask) has no loss: a
  // mean over no targets is 0/0. It is read and skipped, and the step's mean runs over the
  // micro-batches that have targets; so all batches are read before the first forward.
  std::vector<data::Batch> batches;
  for (int64_t micro = 0; micro < o.grad_accum_steps; ++micro) {
    batches.push_back(next_batch());
    r.tokens += real_tokens(batches.back());
    if (batches.back().num_target_tokens == 0) {
      batches.pop_back();
      ++r.skipped_micro_batches;
    }
  }
  if (batches.empty()) return r;  // nothing to learn from: no parameter changes
  const double accum = static_cast<double>(batches.size());
  for (size_t micro = 0; micro < batches.size(); ++micro) {
    auto start = Clock::now();
    BatchLoss b = task.loss(model, batches[micro], o.label_smoothing);
    const double value = b.loss.item();
    r.seconds.forward += seconds_since(start);
    if (!std::isfinite(value)) {
      optimizer.zero_grad();
      r.nonfinite_loss = value;
      r.nonfinite_micro = static_cast<int64_t>(micro);
      return r;
    }
    r.loss += value / accum;
    start = Clock::now();
    mul(b.loss, 1.0 / accum).backward();
    r.seconds.backward += seconds_since(start);
  }
  const auto start = Clock::now();
  r.grad_norm = o.max_grad_norm > 0 ? optim::clip_grad_norm_(optimizer, o.max_grad_norm)
                                    : optim::grad_norm(model.parameters());
  optimizer.step();
  optimizer.zero_grad();
  r.seconds.optimizer = seconds_since(start);
  r.updated = true;
  return r;
}

}  // namespace heed::train
