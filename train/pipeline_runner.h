#pragma once
// Running a pipeline file's stages one after another, each from the model the stage before it
// ended with (train/config/pipeline.h reads the file). Run again, a pipeline reports the stages
// that finished with their current config and trains the rest: an interrupted stage continues,
// a stage whose config changed continues when the change can apply (more steps) and is refused
// otherwise, naming the key, and every stage after one that trained trains again from the
// start. Every stage is checked before the first trains: its config, that it is not a pipeline
// itself, and that no two stages share an output_dir.
#include <optional>
#include <string>
#include <vector>

#include "train/config/config.h"
#include "train/config/pipeline.h"
#include "train/run/trainer.h"

namespace heed::train {

// Runs the stages (`overrides` apply to every one); with `print_config`, prints their resolved
// configs instead. Returns the exit code of the stage that failed, or 0.
int run_pipeline(const std::string& path, const std::vector<PipelineStage>& stages,
                 const std::vector<std::string>& overrides, bool print_config,
                 const TrainerHooks& hooks);

// The model directory of a finished run of exactly `config` (another seed or learning rate is
// another run), as rank 0 sees its output_dir, on every rank; nullopt when there is none.
std::optional<std::string> finished_model(const RunConfig& config);

}  // namespace heed::train
