// train: runs the job a YAML config describes, or a pipeline of such jobs.
//   train --config configs/bert_mlm.yaml [--set optim.lr=3e-4 ...] [--resume] [--print-config]
//   train --config configs/spam_pipeline.yaml
// Exit codes: 0 done (or stopped cleanly by SIGINT/SIGTERM/SIGUSR1 with a checkpoint), 1 a failure
// during the run (a non-finite loss, an I/O error), 2 a config or usage error.
// Output lost to a full disk (--print-config > /dev/full) is an I/O error: exit 1, in one line.
#include "programs/stdout_check.h"
#include "train/train_command.h"

int main(int argc, char** argv) {
  return heed::programs::finish_stdout("train", heed::train::train_command(argc, argv), 1);
}
