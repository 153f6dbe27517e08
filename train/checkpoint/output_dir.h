#pragma once
// Taking a run's output_dir: one run at a time (an advisory lock held for the run's life),
// and a fresh run never mixed with an earlier one's files.
#include "io/directory_lock.h"
#include "train/config/config.h"
#include "train/tasks/task_data.h"

namespace heed::train {

// Creates and locks train.output_dir. A fresh run into a directory that holds an earlier run
// would append to its metrics.jsonl, and the rotation that keeps the newest checkpoints by
// step would delete the new run's lower-numbered ones as soon as they were written; so that
// stops before any work (ConfigError), unless the config continues the earlier run (resume)
// or replaces it (overwrite_output_dir, whose removals are logged). Another process holding
// the lock is a ConfigError naming it.
io::DirectoryLock claim_output_dir(const RunConfig& config, const Log& log);

}  // namespace heed::train
