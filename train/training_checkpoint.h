#pragma once
// Training checkpoints: output_dir/checkpoint-STEP/ holds the Hugging Face model directory
// (config.json, model.safetensors, the tokenizer files) plus what resuming needs to continue
// bit for bit: optimizer.safetensors, trainer_state.json (step, schedule, dropout RNG, loader
// position) and the resolved run_config.yaml. A checkpoint is written into a temporary
// directory, every file fsynced, then renamed into place, so a crash at any moment leaves
// the previous checkpoint whole.
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "train/config/config.h"

namespace heed::train {

// Writes checkpoint-`step` in `output_dir` by calling `write_files(tmp_dir)`, then makes it
// durable and visible; keeps the newest `keep_last` checkpoints, and checkpoint-`also_keep`
// (the best model's) besides them. Returns its path.
std::string write_checkpoint(const std::string& output_dir, int64_t step, int64_t keep_last,
                             const std::function<void(const std::string&)>& write_files,
                             std::optional<int64_t> also_keep = std::nullopt);

// The settings that decide which examples the loader's saved position points at, as
// trainer_state.json records them: a resume with any of them changed would silently train on a
// different rest of the epoch, so it is refused.
nlohmann::json data_order(const RunConfig& config);

// output_dir/checkpoint-`step`.
std::string checkpoint_path(const std::string& output_dir, int64_t step);

// The newest complete checkpoint directory in `output_dir`, if any.
std::optional<std::string> latest_checkpoint(const std::string& output_dir);

// What an earlier run left in `output_dir` that a new run would mix with its own: the
// checkpoint directories (complete or not), metrics.jsonl and final_metrics.json. Names
// relative to `output_dir`, sorted; empty when there is none.
std::vector<std::string> earlier_run_files(const std::string& output_dir);

}  // namespace heed::train
