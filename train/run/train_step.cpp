#include "train/run/train_step.h"

#include <chrono>
#include <cmath>
#include <optional>
#include <span>
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
  GradientReducer* reducer = o.parallel ? &o.parallel->reducer() : nullptr;
  // A micro-batch without a labelled position (an MLM batch that drew no mask) has no loss: a
  // mean over no targets is 0/0. It is read and skipped, and the step's mean runs over the
  // micro-batches that have targets; so all batches are read before the first forward. Data
  // parallel, what counts is the global micro-batch: a rank whose rows have no target still
  // takes part, with nothing to add.
  std::vector<data::Batch> batches;
  std::vector<int64_t> counts;  // per micro-batch: targets, then tokens
  for (int64_t micro = 0; micro < o.grad_accum_steps; ++micro) {
    batches.push_back(next_batch());
    counts.push_back(batches.back().num_target_tokens);
    counts.push_back(real_tokens(batches.back()));
  }
  if (reducer) reducer->world().sum(counts);
  std::vector<size_t> kept;
  for (size_t micro = 0; micro < batches.size(); ++micro) {
    r.tokens += counts[2 * micro + 1];
    if (counts[2 * micro] == 0) {
      ++r.skipped_micro_batches;
    } else {
      kept.push_back(micro);
    }
  }
  if (kept.empty()) return r;  // nothing to learn from: no parameter changes
  if (reducer) reducer->prepare();
  const double accum = static_cast<double>(kept.size());
  for (size_t k = 0; k < kept.size(); ++k) {
    const data::Batch& batch = batches[kept[k]];
    // The global mean over a micro-batch's N targets is the sum over the ranks of each rank's
    // mean over its n targets times n/N; the reducer then sums the gradients.
    const double weight =
        reducer ? static_cast<double>(batch.num_target_tokens) / counts[2 * kept[k]] : 1.0;
    auto start = Clock::now();
    std::optional<BatchLoss> b;
    double contribution = 0.0;
    if (batch.num_target_tokens > 0) {
      b = task.loss(model, batch,
                    {.label_smoothing = o.label_smoothing, .outputs = nn::HeadOutputs::loss_only});
      contribution = b->loss.item() * weight;
    }
    if (reducer)
      reducer->world().sum(std::span<double>(&contribution, 1));  // a NaN on any rank reaches all
    r.seconds.forward += seconds_since(start);
    if (!std::isfinite(contribution)) {
      optimizer.zero_grad();
      r.nonfinite_loss = contribution;
      r.nonfinite_micro = static_cast<int64_t>(kept[k]);
      return r;
    }
    r.loss += contribution / accum;
    if (!b) continue;
    // Nothing here reads logits that a model returned anyway: letting go of them lets
    // cross-entropy's backward write its gradient over them instead of beside them (a
    // logits-sized buffer less at the step's peak).
    b->logits = Tensor();
    start = Clock::now();
    const Tensor scaled = mul(b->loss, weight / accum);
    if (reducer && k + 1 == kept.size()) {
      // The step's last backward: each bucket's sum starts as soon as its gradients are final.
      GradReadyHookScope hook = reducer->hook();
      scaled.backward();
    } else {
      scaled.backward();
    }
    r.seconds.backward += seconds_since(start);
  }
  const auto start = Clock::now();
  if (reducer) r.reduction = reducer->finish();
  r.grad_norm =
      o.max_grad_norm > 0 ? optim::grad_norm(optimizer) : optim::grad_norm(model.parameters());
  // Clipping happens inside the update (one pass over the gradients fewer); the gradients
  // are zeroed right after, so nothing else reads them clipped.
  const double grad_scale =
      o.max_grad_norm > 0 ? optim::clip_coefficient(r.grad_norm, o.max_grad_norm) : 1.0;
  OptimizerShards* shards = o.parallel ? o.parallel->shards() : nullptr;
  if (shards) shards->before_step();
  optimizer.step(grad_scale);
  if (shards) shards->after_step();
  optimizer.zero_grad();
  r.seconds.optimizer = seconds_since(start);
  r.updated = true;
  return r;
}

}  // namespace heed::train
