#pragma once
// trainer_state.json: what a checkpoint records of the run besides the model, the optimizer and
// the config, so that a resume continues bit for bit. Written and read here only.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "data/loader.h"
#include "io/json_fields.h"
#include "train/config/config.h"

namespace heed::train {

struct TrainingState {
  int64_t step = 0;
  int64_t tokens_seen = 0;
  double elapsed_seconds = 0.0;
  data::LoaderState loader;
  Generator::State dropout_rng;  // rank 0's (a single process's)
  // A data-parallel run's dropout offset of each rank, in rank order; empty for one process.
  std::vector<uint64_t> rank_dropout_offsets;
  // metrics.jsonl's size when the checkpoint was written (older checkpoints do not say).
  std::optional<uint64_t> metrics_size;
  // The number of ranks of the job that wrote it (older checkpoints do not say).
  std::optional<int64_t> world_size;
  std::string task;
  nlohmann::json data_order;  // data_order(config) of the run that wrote it
  // The parts their owners read and write: LRScheduler::state_dict(), BestModel::state().
  nlohmann::json scheduler;
  std::optional<nlohmann::json> best_model;
  std::string where;  // the file it was read from, for errors
};

// The settings that decide which examples the loader's saved position points at: a resume with
// any of them changed would silently train on a different rest of the epoch, so it is refused.
nlohmann::json data_order(const RunConfig& config);

nlohmann::json to_json(const TrainingState& state);
// Reads it, every field of its own checked: one missing, of the wrong type, or out of its range
// is a heed::Error naming the file and the field. The scheduler and best model are checked by
// their owners, through scheduler_fields() and best_model_fields().
TrainingState read_training_state(const io::JsonFields& state);
io::JsonFields scheduler_fields(const TrainingState& state);
io::JsonFields best_model_fields(const TrainingState& state);

// Throws ConfigError naming the setting when `config`'s data order differs from the one that
// `state` (checkpoint `dir`'s) records. Checkpoints older than the check record none.
void check_data_order(const io::JsonFields& state, const RunConfig& config, const std::string& dir);

// A note for a resume by a job of another number of ranks than the one that wrote `state`:
// the run goes on, but not bit for bit as it would have (each rank's dropout stream and the
// order of the gradients' sums differ). nullopt when the numbers agree or were not recorded.
std::optional<std::string> world_size_note(const TrainingState& state, int world_size);

}  // namespace heed::train
