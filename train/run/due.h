#pragma once
// What is due after a training step: a metrics.jsonl record, an evaluation of data.valid, a
// checkpoint. One place for the rules that the loop, its tests and its readers share.
#include <cstdint>

#include "train/config/config.h"

namespace heed::train {

struct Due {
  bool log = false;         // a metrics.jsonl record: every logging.every_steps, and the last
  bool evaluate = false;    // data.valid: every eval.every_steps but the last (the end's), or
                            // the last when the best model's choice must judge it
  bool checkpoint = false;  // every checkpoint.every_steps, and the last (a new best adds one)
  bool last = false;        // the step is train.max_steps
};

// `step` has just been taken; `has_valid`: the run has data.valid. Evaluating and checkpointing
// are rank 0's decisions to act on; every rank computes the same.
Due due_after(int64_t step, const RunConfig& config, bool has_valid);

}  // namespace heed::train
