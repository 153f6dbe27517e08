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

#include "autograd/generator.h"
#include "data/loader.h"
#include "io/json_fields.h"
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

// The settings that decide which examples the loader's saved position points at, as
// trainer_state.json records them: a resume with any of them changed would silently train on a
// different rest of the epoch, so it is refused.
nlohmann::json data_order(const RunConfig& config);
// Throws ConfigError naming the setting when `config`'s data order differs from the one
// that `state` (checkpoint `dir`'s trainer_state.json) records. Checkpoints older than the
// check record none.
void check_data_order(const io::JsonFields& state, const RunConfig& config, const std::string& dir);

// What a resume restores from trainer_state.json besides the schedule and the best model.
struct ResumePoint {
  int64_t step = 0;
  int64_t tokens_seen = 0;
  double elapsed_seconds = 0.0;
  data::LoaderState loader;
  Generator::State dropout_rng;  // rank 0's (a single process's)
  // A data-parallel run's dropout offset of each rank, in rank order; empty for one process.
  std::vector<uint64_t> rank_dropout_offsets;
  // metrics.jsonl's size when the checkpoint was written (older checkpoints do not say).
  std::optional<uint64_t> metrics_size;
};
// Reads it, every field checked: one missing, of the wrong type, or out of its range is a
// heed::Error naming the file and the field.
ResumePoint read_resume_point(const io::JsonFields& state);

// A note for a resume by a job of another number of ranks than the one that wrote `state`:
// the run goes on, but not bit for bit as it would have (each rank's dropout stream and the
// order of the gradients' sums differ). nullopt when the numbers agree or were not recorded.
std::optional<std::string> world_size_note(const io::JsonFields& state, int world_size);

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
