#pragma once
// Training checkpoints: output_dir/checkpoint-STEP/ holds the Hugging Face model directory
// (config.json, model.safetensors, the tokenizer files) plus what resuming needs to continue
// bit for bit: optimizer.safetensors, trainer_state.json (step, schedule, dropout RNG, loader
// position) and the resolved run_config.yaml. A checkpoint is written into a temporary
// directory, every file checked and fsynced, its manifest.json (each file's size and SHA-256)
// written last, then renamed into place; older checkpoints are deleted only after the new one is
// verified against its manifest, and only checkpoints that verify count towards keep_last. So a
// crash or a full disk at any moment leaves the previous checkpoint whole, resuming never takes
// a partial or altered checkpoint for a whole one, and a damaged one never pushes good ones out.
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "train/checkpoint/checkpoint_manifest.h"
#include "train/config/config.h"
#include "train/distributed/world.h"

namespace heed::train {

// Writes checkpoint-`step` in `output_dir` by calling `write_files(tmp_dir)`, then makes it
// durable and visible; keeps the newest `keep_last` checkpoints, and checkpoint-`also_keep`
// (the best model's) besides them. Returns its path.
std::string write_checkpoint(const std::string& output_dir, int64_t step, int64_t keep_last,
                             const std::function<void(const std::string&)>& write_files,
                             std::optional<int64_t> also_keep = std::nullopt);

// Removes what an interrupted run left half done: checkpoints it was writing or deleting.
void remove_unfinished_checkpoints(const std::string& output_dir);

// output_dir/checkpoint-`step`.
std::string checkpoint_path(const std::string& output_dir, int64_t step);

// Called with a checkpoint directory that is not complete, and why.
using OnSkippedCheckpoint = std::function<void(const std::string& dir, const std::string& reason)>;

// The newest complete checkpoint directory in `output_dir`, if any; each newer, incomplete one
// is passed to `on_skipped`.
std::optional<std::string> latest_checkpoint(const std::string& output_dir,
                                             const OnSkippedCheckpoint& on_skipped = nullptr,
                                             CheckpointCheck check = CheckpointCheck::sizes);

// A job's checkpoint to resume from: rank 0 removes unfinished ones, picks the newest one whose
// contents verify, and moves each newer one that does not aside (skipped-checkpoint-STEP, with
// SKIPPED.txt saying why), telling `on_skipped`; every rank of `world` gets the path. A
// collective.
std::optional<std::string> job_checkpoint(
    const World& world, const std::string& output_dir,
    const std::function<void(const std::string&)>& on_skipped = nullptr);

// What an earlier run left in `output_dir` that a new run would mix with its own: the
// checkpoint directories (complete, unfinished or set aside), metrics.jsonl and
// final_metrics.json. Names
// relative to `output_dir`, sorted; empty when there is none.
std::vector<std::string> earlier_run_files(const std::string& output_dir);

}  // namespace heed::train
