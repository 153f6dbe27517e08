#pragma once
// What a resumed run does with a key whose value differs from the one its checkpoint ran with
// (the checkpoint's run_config.yaml): each key's schema row says (OnResume, config_schema.h).
// Keys that only steer the rest of the run apply: the learning rate from now on, the step
// budget, evaluation, checkpoint and logging cadence, threads. Keys that shaped what the model
// has already learnt (model, tokenizer, training data, task, optimizer kind and its betas,
// schedule shape, batch, seed) are refused: with them changed the run would no longer be the
// one its checkpoints and metrics describe.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "train/config/config.h"

namespace heed::train {

struct ConfigChange {
  std::string key, was, now;  // dotted key; values as run_config.yaml writes them
};

// The keys whose values differ between two configs, in key order (a key of one only, as of
// another architecture, counts, with "absent" for the other). Keys that say how a run was
// started (OnResume::kHowStarted) are never a change.
std::vector<ConfigChange> config_changes(const RunConfig& saved, const RunConfig& current);

// The config of a file written by to_yaml (a checkpoint's run_config.yaml), read through the
// schema: its types and keys are checked, not its values, nor that its files still exist.
RunConfig read_config_as_written(const std::string& path);

// Whether a resumed run may take `key`'s new value.
bool applies_on_resume(std::string_view key);

// Whether `key` changes what a finished run made (its model, metrics and examples): not where
// its files are, how fast it ran, or how it logged. A pipeline's finished stage with such a key
// changed no longer matches its config.
bool changes_what_a_run_made(std::string_view key);

// Compares `config` with the run_config.yaml of `checkpoint_dir`: logs the changes that apply,
// and throws a ConfigError naming where the first refused key was set.
void check_resume_changes(const std::string& checkpoint_dir, const RunConfig& config,
                          const std::function<void(const std::string&)>& log);

}  // namespace heed::train
