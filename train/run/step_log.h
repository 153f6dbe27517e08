#pragma once
// What each training step reports: the progress line or bar, and every logging.every_steps (and
// at the last step) a metrics.jsonl record of the means over the steps since the last one.
#include <chrono>

#include "train/run/run_parts.h"
#include "train/run/train_step.h"

namespace heed::train {

class StepLog {
 public:
  // Starts the first interval now.
  void start() { interval_ = Interval{.start = Clock::now()}; }
  // After step `progress.step`, taken at learning rate `lr`; `record`: a metrics.jsonl record is
  // due.
  void after_step(RunParts& run, const RunProgress& progress, const StepOutcome& outcome, double lr,
                  bool record);

 private:
  using Clock = std::chrono::steady_clock;
  struct Interval {  // the steps since the last metrics.jsonl record
    double loss = 0.0, reduce_wait = 0.0;
    int64_t steps = 0, tokens = 0;
    Clock::time_point start;
  };
  Interval interval_;
};

}  // namespace heed::train
