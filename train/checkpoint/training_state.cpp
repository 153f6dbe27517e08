#include "train/checkpoint/training_state.h"

#include <fmt/format.h>

#include "base/error.h"
#include "train/config/config_origins.h"

namespace heed::train {

nlohmann::json data_order(const RunConfig& c) {
  return {{"train.batch_size", c.train.batch_size},
          {"train.grad_accum_steps", c.train.grad_accum_steps},
          {"train.seed", c.train.seed},
          {"data.shuffle", c.data.shuffle},
          {"data.group_by_length", c.data.group_by_length},
          {"data.max_train_samples", c.data.max_train_samples.value_or(0)}};
}

nlohmann::json to_json(const TrainingState& s) {
  nlohmann::json j = {
      {"step", s.step},
      {"tokens_seen", s.tokens_seen},
      {"elapsed_seconds", s.elapsed_seconds},
      {"scheduler", s.scheduler},
      {"loader", {{"epoch", s.loader.epoch}, {"batch", s.loader.batch}}},
      {"dropout_rng", {{"seed", s.dropout_rng.seed}, {"offset", s.dropout_rng.offset}}},
      {"data_order", s.data_order},
      {"task", s.task}};
  if (s.metrics_size) j["metrics_size"] = *s.metrics_size;
  if (s.world_size) j["world_size"] = *s.world_size;
  for (size_t r = 0; r < s.rank_dropout_offsets.size(); ++r) {
    j["dropout_rng"]["rank_offsets"][std::to_string(r)] = s.rank_dropout_offsets[r];
  }
  if (s.best_model) j["best_model"] = *s.best_model;
  return j;
}

TrainingState read_training_state(const io::JsonFields& state) {
  TrainingState s;
  s.where = state.where();
  s.step = state.int64("step");
  HEED_CHECK(s.step >= 0, "{}: field 'step' must be >= 0, not {}", state.where(), s.step);
  s.tokens_seen = state.int64_or("tokens_seen", 0);  // older checkpoints have neither
  s.elapsed_seconds = state.number_or("elapsed_seconds", 0.0);
  const io::JsonFields loader = state.object("loader"), rng = state.object("dropout_rng");
  s.loader = {loader.uint64("epoch"), loader.uint64("batch")};
  s.dropout_rng = {rng.uint64("seed"), rng.uint64("offset")};
  if (rng.has("rank_offsets")) {  // written by a data-parallel run: each rank's own
    const io::JsonFields ranks = rng.object("rank_offsets");
    for (int r = 0; ranks.has(std::to_string(r)); ++r) {
      s.rank_dropout_offsets.push_back(ranks.uint64(std::to_string(r)));
    }
  }
  if (state.has("metrics_size")) s.metrics_size = state.uint64("metrics_size");
  if (state.has("world_size")) s.world_size = state.int64("world_size");
  if (state.has("task")) s.task = state.string("task");
  if (state.has("data_order")) s.data_order = state.object("data_order").json();
  s.scheduler = state.object("scheduler").json();
  if (state.has("best_model")) s.best_model = state.object("best_model").json();
  return s;
}

io::JsonFields scheduler_fields(const TrainingState& s) {
  return io::JsonFields(s.scheduler, s.where, "scheduler.");
}

io::JsonFields best_model_fields(const TrainingState& s) {
  HEED_CHECK(s.best_model.has_value(), "{}: has no field 'best_model'", s.where);
  return io::JsonFields(*s.best_model, s.where, "best_model.");
}

void check_data_order(const io::JsonFields& state, const RunConfig& config,
                      const std::string& dir) {
  if (!state.has("data_order")) return;
  const nlohmann::json now = data_order(config);
  for (const auto& [key, saved] : state.object("data_order").json().items()) {
    if (now.contains(key) && now.at(key) != saved) {
      throw ConfigError(fmt::format(
          "{}: is {} but was {} in {}; resuming would train on another order of the data "
          "(start a new train.output_dir, or set it back)",
          key, now.at(key).dump(), saved.dump(), dir));
    }
  }
}

std::optional<std::string> world_size_note(const TrainingState& state, int world_size) {
  if (!state.world_size || *state.world_size == world_size) return std::nullopt;
  const int64_t written_by = *state.world_size;
  return fmt::format(
      "resume: {} was written by a job of {} rank{}, and this one has {}: training goes on with "
      "the same global batches, but its results will not match those of an uninterrupted run "
      "bit for bit (each rank draws its own dropout, and the gradients are summed in another "
      "order)",
      state.where, written_by, written_by == 1 ? "" : "s", world_size);
}

}  // namespace heed::train
