#pragma once
// A run's checkpoints from the run's side: what a checkpoint holds of it (the Hugging Face model
// directory, the optimizer state, trainer_state.json, the resolved config) and how a resume puts
// all of it back. train/checkpoint/ makes them durable and finds them.
#include <optional>
#include <string>

#include "train/checkpoint/training_state.h"
#include "train/run/run_parts.h"

namespace heed::train {

// With train.resume: auto, continues from the job's newest whole checkpoint, if any: weights,
// optimizer state, schedule, loader position, dropout stream, best model, counters. Returns what
// it read; nullopt when there was none to resume from. Every rank calls it.
std::optional<TrainingState> resume_run(RunParts& run, RunProgress& progress);

// Writes checkpoint-STEP. Every rank calls it: a data-parallel run gathers each rank's dropout
// position and (ZeRO-1) optimizer state onto rank 0, which alone writes. Returns the path (empty
// on other ranks).
std::string save_run_checkpoint(RunParts& run, const RunProgress& progress);

// What a stopped run leaves to resume from, for its last message.
std::string resumable_state(const RunConfig& config);

}  // namespace heed::train
