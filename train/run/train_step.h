#pragma once
// One optimizer step as `train` runs it: forward and backward over the micro-batches, global-norm
// clipping, the optimizer's update. bench/train_step_bench.cpp times this same function, so the
// benchmark's figures are the trainer's.
#include <functional>
#include <memory>
#include <optional>

#include "data/batch.h"
#include "nn/models/pretrained.h"
#include "optim/optimizer.h"
#include "train/config/config.h"
#include "train/run/step_sync.h"
#include "train/tasks/task.h"

namespace heed::train {

// The run's optimizer over the model's parameters: AdamW or SGD, with weight decay on every
// parameter but biases and LayerNorm weights.
std::unique_ptr<optim::Optimizer> make_optimizer(const OptimConfig& config,
                                                 const nn::Module& model);

struct StepOptions {
  int64_t grad_accum_steps = 1;
  double max_grad_norm = 1.0;  // 0 = no clipping (the norm is still measured)
  double label_smoothing = 0.0;
  // Data parallel: each micro-batch holds this rank's rows of the global one, and `sync` sums
  // the step's counts and gradients over the ranks (ZeRO-1 lives in the optimizer's step
  // hooks). Null: one process.
  StepSync* sync = nullptr;
};

// Wall seconds of each phase of a step, summed over its micro-batches.
struct StepSeconds {
  double forward = 0.0, backward = 0.0, optimizer = 0.0;
};

struct StepOutcome {
  double loss = 0.0;       // mean over the micro-batches that have targets
  double grad_norm = 0.0;  // before clipping
  int64_t tokens = 0;      // real (unpadded) tokens read
  // Set when a micro-batch's loss was not finite: its value and index. The step then stopped
  // before that micro-batch's backward, and no parameter changed.
  std::optional<double> nonfinite_loss;
  int64_t nonfinite_micro = 0;
  // Micro-batches without a labelled position, read and skipped. When every micro-batch of the
  // step was one, the step made no update (`updated` is false).
  int64_t skipped_micro_batches = 0;
  bool updated = false;
  StepSeconds seconds;
  ReductionStats reduction;  // data parallel: what the gradients' sums cost
};

// One step over `grad_accum_steps` batches from `next_batch`; gradients are zero after it. With
// a sync, the loss, tokens and skips are those of the global batch, the same on every rank,
// and the update is the one a single process makes on the global batch.
StepOutcome train_step(const TrainingTask& task, nn::PretrainedModel& model,
                       optim::Optimizer& optimizer, const std::function<data::Batch()>& next_batch,
                       const StepOptions& options);

}  // namespace heed::train
