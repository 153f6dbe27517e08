#pragma once
// What a resumed run does with a key whose value differs from the one its checkpoint ran with
// (the checkpoint's run_config.yaml). Keys that only steer the rest of the run apply: the
// learning rate from now on, the step budget, evaluation, checkpoint and logging cadence,
// threads. Keys that shaped what the model has already learnt (model, tokenizer, training
// data, task, optimizer kind and its betas, schedule shape, batch, seed) are refused: with them
// changed the run would no longer be the one its checkpoints and metrics describe.
#include <string>
#include <string_view>
#include <vector>

#include "train/config/config.h"
#include "train/tasks/task_data.h"

namespace heed::train {

struct ConfigChange {
  std::string key, was, now;  // dotted key; values as run_config.yaml writes them
};

// The keys whose values differ between two configs written by to_yaml (a key present in one
// only counts, with "absent" for the other).
std::vector<ConfigChange> config_changes(std::string_view saved_yaml,
                                         std::string_view current_yaml);

// Whether a resumed run may take `key`'s new value.
bool applies_on_resume(std::string_view key);

// Whether `key` changes what a finished run made (its model, metrics and examples): not where
// its files are, how fast it ran, or how it logged. A pipeline's finished stage with such a key
// changed no longer matches its config.
bool changes_what_a_run_made(std::string_view key);

// Compares `config` with the run_config.yaml of `checkpoint_dir`: logs the changes that apply,
// and throws a ConfigError naming where the first refused key was set.
void check_resume_changes(const std::string& checkpoint_dir, const RunConfig& config,
                          const Log& log);

}  // namespace heed::train
