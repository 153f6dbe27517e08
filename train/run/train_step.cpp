#include "train/run/train_step.h"

#include <chrono>
#include <cmath>
#include <optional>
#include <span>
#include <vector>

#include "autograd/ops.h"
#include "nn/lora.h"
#include "optim/adafactor.h"
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

std::vector<Tensor> trainable_tensors(const nn::Module& model) {
  std::vector<Tensor> out;
  for (auto& [name, t] : nn::trainable_parameters(model)) out.push_back(t);
  return out;
}

int64_t real_tokens(const data::Batch& b) {
  int64_t n = 0;
  for (int64_t m : b.attention_mask) n += m;
  for (int64_t m : b.decoder_attention_mask) n += m;
  return n;
}

// A step's micro-batches, read before the first forward. A micro-batch without a labelled
// position (an MLM batch that drew no mask) has no loss: a mean over no targets is 0/0. It is
// read and skipped, and the step's mean runs over the micro-batches that have targets. Data
// parallel, what counts is the global micro-batch: a rank whose rows have no target still takes
// part, with nothing to add.
struct MicroBatches {
  std::vector<data::Batch> batches;  // this process's rows
  std::vector<int64_t> counts;       // per micro-batch, over the ranks: targets, then tokens
  std::vector<size_t> kept;          // the micro-batches with a target somewhere

  int64_t global_targets(size_t micro) const { return counts[2 * micro]; }
};

MicroBatches read_micro_batches(const std::function<data::Batch()>& next_batch, int64_t n,
                                const StepSync& sync, StepOutcome& r) {
  MicroBatches m;
  for (int64_t micro = 0; micro < n; ++micro) {
    m.batches.push_back(next_batch());
    m.counts.push_back(m.batches.back().num_target_tokens);
    m.counts.push_back(real_tokens(m.batches.back()));
  }
  sync.sum(m.counts);
  for (size_t micro = 0; micro < m.batches.size(); ++micro) {
    r.tokens += m.counts[2 * micro + 1];
    if (m.global_targets(micro) == 0) {
      ++r.skipped_micro_batches;
    } else {
      m.kept.push_back(micro);
    }
  }
  return m;
}

// The forward and backward of the k-th kept micro-batch; false when its loss (on any rank) is
// not finite, before any backward of it ran.
bool forward_backward(const TrainingTask& task, nn::PretrainedModel& model, const MicroBatches& m,
                      size_t k, const StepOptions& o, StepSync& sync, StepOutcome& r) {
  const data::Batch& batch = m.batches[m.kept[k]];
  // The global mean over a micro-batch's N targets is the sum over the ranks of each rank's
  // mean over its n targets times n/N; the gradients' sums then make the global gradient.
  const double weight = static_cast<double>(batch.num_target_tokens) / m.global_targets(m.kept[k]);
  const double accum = static_cast<double>(m.kept.size());
  auto start = Clock::now();
  std::optional<BatchLoss> b;
  double contribution = 0.0;
  if (batch.num_target_tokens > 0) {
    b = task.loss(model, batch,
                  {.label_smoothing = o.label_smoothing, .outputs = nn::HeadOutputs::loss_only});
    contribution = b->loss.item() * weight;
  }
  sync.sum(std::span<double>(&contribution, 1));  // a NaN on any rank reaches all
  r.seconds.forward += seconds_since(start);
  if (!std::isfinite(contribution)) {
    r.nonfinite_loss = contribution;
    r.nonfinite_micro = static_cast<int64_t>(m.kept[k]);
    return false;
  }
  r.loss += contribution / accum;
  if (k + 1 == m.kept.size()) sync.sync_next_backward();  // its gradients complete the step
  if (!b) return true;
  // Nothing here reads logits that a model returned anyway: letting go of them lets
  // cross-entropy's backward write its gradient over them instead of beside them (a
  // logits-sized buffer less at the step's peak).
  b->logits = Tensor();
  start = Clock::now();
  mul(b->loss, weight / accum).backward();
  r.seconds.backward += seconds_since(start);
  return true;
}

}  // namespace

std::unique_ptr<optim::Optimizer> make_optimizer(const OptimConfig& c, const nn::Module& model) {
  // Frozen parameters (LoRA's base weights) have no gradient and get no optimizer state.
  auto groups = optim::weight_decay_groups(nn::trainable_parameters(model), c.weight_decay);
  if (c.name == OptimizerName::kAdamW) {
    return std::make_unique<optim::AdamW>(groups,
                                          optim::AdamWOptions{.lr = c.lr,
                                                              .beta1 = c.betas[0],
                                                              .beta2 = c.betas[1],
                                                              .eps = c.eps,
                                                              .weight_decay = c.weight_decay});
  }
  if (c.name == OptimizerName::kAdafactor) {
    return std::make_unique<optim::Adafactor>(
        groups, optim::AdafactorOptions{.lr = c.lr,
                                        .eps1 = c.adafactor_eps[0],
                                        .eps2 = c.adafactor_eps[1],
                                        .clip_threshold = c.clip_threshold,
                                        .decay_rate = c.decay_rate,
                                        .beta1 = c.beta1,
                                        .weight_decay = c.weight_decay,
                                        .scale_parameter = c.scale_parameter,
                                        .relative_step = false});
  }
  return std::make_unique<optim::SGD>(
      groups,
      optim::SGDOptions{.lr = c.lr, .momentum = c.momentum, .weight_decay = c.weight_decay});
}

StepOutcome train_step(const TrainingTask& task, nn::PretrainedModel& model,
                       optim::Optimizer& optimizer, const std::function<data::Batch()>& next_batch,
                       const StepOptions& o) {
  StepSync alone;
  StepSync& sync = o.sync ? *o.sync : alone;
  StepOutcome r;
  const MicroBatches micro = read_micro_batches(next_batch, o.grad_accum_steps, sync, r);
  if (micro.kept.empty()) return r;  // nothing to learn from: no parameter changes
  for (size_t k = 0; k < micro.kept.size(); ++k) {
    if (!forward_backward(task, model, micro, k, o, sync, r)) {
      optimizer.zero_grad();
      return r;
    }
  }
  const auto start = Clock::now();
  r.reduction = sync.wait_for_gradients();
  r.grad_norm = o.max_grad_norm > 0 ? optim::grad_norm(optimizer)
                                    : optim::grad_norm(trainable_tensors(model));
  // Clipping happens inside the update (one pass over the gradients fewer); the gradients
  // are zeroed right after, so nothing else reads them clipped.
  optimizer.step(o.max_grad_norm > 0 ? optim::clip_coefficient(r.grad_norm, o.max_grad_norm) : 1.0);
  optimizer.zero_grad();
  r.seconds.optimizer = seconds_since(start);
  r.updated = true;
  return r;
}

}  // namespace heed::train
