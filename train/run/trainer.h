#pragma once
// The training loop: gradient accumulation, clipping, the LR schedule, periodic evaluation,
// logging (a progress bar on a terminal, plain lines elsewhere, metrics.jsonl), periodic and
// final checkpoints, a stop on a non-finite loss, SIGINT/SIGTERM/SIGUSR1 -> checkpoint and a
// clean exit (train/run/stop_signals.h), resuming that continues exactly as if the run had never
// stopped, and (with eval.load_best_model_at_end) keeping and finally loading the best validated
// checkpoint.
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "train/config/config.h"

namespace heed::train {

struct TrainerResult {
  int exit_code = 0;  // 0: done or interrupted cleanly; 1: stopped on a non-finite loss
  int64_t steps = 0;
  std::string last_checkpoint;
  std::map<std::string, std::map<std::string, double>> final_metrics;  // split -> metrics
};

// Calls into a run, for tests: `after_step(step)` runs once each step is done and checkpointed,
// before the run looks for a stop signal (a test sends one there to stop at a known step).
struct TrainerHooks {
  std::function<void(int64_t step)> after_step;
};

// Runs the whole job the config describes and returns how it ended.
TrainerResult run_training(const RunConfig& config, const TrainerHooks& hooks = {});

}  // namespace heed::train
