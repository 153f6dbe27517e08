#include "train/train_step.h"

#include <chrono>
#include <cmath>

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
  const double accum = static_cast<double>(o.grad_accum_steps);
  for (int64_t micro = 0; micro < o.grad_accum_steps; ++micro) {
    data::Batch batch = next_batch();
    auto start = Clock::now();
    BatchLoss b = task.loss(model, batch, o.label_smoothing);
    const double value = b.loss.item();
    r.seconds.forward += seconds_since(start);
    if (!std::isfinite(value)) {
      optimizer.zero_grad();
      r.nonfinite_loss = value;
      r.nonfinite_micro = micro;
      return r;
    }
    r.loss += value / accum;
    start = Clock::now();
    mul(b.loss, 1.0 / accum).backward();
    r.seconds.backward += seconds_since(start);
    r.tokens += real_tokens(batch);
  }
  const auto start = Clock::now();
  r.grad_norm = o.max_grad_norm > 0 ? optim::clip_grad_norm_(optimizer, o.max_grad_norm)
                                    : optim::grad_norm(model.parameters());
  optimizer.step();
  optimizer.zero_grad();
  r.seconds.optimizer = seconds_since(start);
  return r;
}

}  // namespace heed::train
