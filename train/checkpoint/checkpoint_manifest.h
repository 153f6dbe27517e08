#pragma once
// A checkpoint's manifest.json: written last into a filled checkpoint directory, it records each
// file's size and SHA-256 and the step, so that its presence says the rest was written whole and
// a reader can tell a whole checkpoint from one cut short, altered or renamed.
#include <cstdint>
#include <optional>
#include <string>

namespace heed::train {

// Fsyncs every file of `dir` (a checkpoint being written, step `step`), then writes
// manifest.json. Throws heed::Error when a file resuming needs is missing or `dir` holds a
// directory.
void write_manifest(const std::string& dir, int64_t step);

// How closely a checkpoint is checked against its manifest: the files' sizes (cheap: rotation),
// or also their contents' SHA-256 (reads every byte: resume).
enum class CheckpointCheck { sizes, contents };

// Why checkpoint-STEP directory `dir` is not a complete checkpoint (a file missing, of another
// size or contents than its manifest.json recorded, a step in the manifest or
// trainer_state.json other than the directory's), or nullopt when it is one. Manifests of sizes
// only (older ones) are read too; a checkpoint without one must have its files, none empty.
std::optional<std::string> checkpoint_problem(const std::string& dir,
                                              CheckpointCheck check = CheckpointCheck::sizes);

}  // namespace heed::train
