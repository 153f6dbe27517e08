#pragma once
// Setting a run up from its config: the output directory, the CPU, the data, the model, the
// optimizer and its schedule, data parallelism and the loader; then, after any resume, every
// rank on the same parameters.
#include "train/checkpoint/training_state.h"
#include "train/run/run_parts.h"

namespace heed::train {

void set_up_run(RunParts& run);

// Every rank starts from rank 0's parameters and draws its own dropout stream (`resumed`: the
// state a resume read, whose offsets continue each rank's). Nothing in a process alone.
void start_data_parallel(RunParts& run, const std::optional<TrainingState>& resumed);

}  // namespace heed::train
