#pragma once
// The `train` program: its command line, and a run config or a pipeline of them to run.
#include "train/run/trainer.h"

namespace heed::train {

// Parses `argv` and runs what --config names. Returns the process's exit code: 0 done (or
// stopped cleanly by SIGINT/SIGTERM/SIGUSR1 with a checkpoint), 1 a failure during the run (a
// non-finite loss, an I/O error), 2 a config or usage error. Errors are one line on stderr.
int train_command(int argc, char** argv, const TrainerHooks& hooks = {});

}  // namespace heed::train
