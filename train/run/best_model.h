#pragma once
// Hugging Face's load_best_model_at_end: which evaluation of data.valid has been the best so
// far by eval.metric_for_best_model, so that the trainer can keep that checkpoint through
// rotation and load it for the final evaluation.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/datasets.h"
#include "io/json_fields.h"
#include "train/config/config.h"
#include "train/tasks/task.h"

namespace heed::train {

// A metric name as the user wrote it, without Hugging Face's "eval_" prefix ("eval_loss" ->
// "loss"); unset means "loss", Hugging Face's default.
std::string best_model_metric(const std::optional<std::string>& configured);

// Hugging Face's default direction (a name ending in "loss" is better lower), extended to
// this trainer's other lower-is-better metrics: perplexity, bits_per_byte and the error rates.
bool greater_is_better_by_default(std::string_view metric);

class BestModel {
 public:
  BestModel(std::string metric, bool greater_is_better)
      : metric_(std::move(metric)), greater_is_better_(greater_is_better) {}

  // Records the evaluation `metrics` of `step` when they beat the best so far (strictly: on a
  // tie the earlier step stays best, as in Hugging Face). Returns whether they did.
  bool consider(const std::map<std::string, double>& metrics, int64_t step);

  const std::string& metric() const { return metric_; }
  bool greater_is_better() const { return greater_is_better_; }
  bool has_value() const { return value_.has_value(); }
  double value() const { return value_.value(); }
  int64_t step() const { return step_; }

  // What trainer_state.json keeps, in Hugging Face's field names (best_metric,
  // best_global_step), so that a resumed run goes on comparing against the same best.
  nlohmann::json state() const;
  // Restores state() (read from checkpoint `where`); throws ConfigError if it was tracking another
  // metric or direction.
  void load_state(const io::JsonFields& state, const std::string& where);

 private:
  std::string metric_;
  bool greater_is_better_;
  std::optional<double> value_;
  int64_t step_ = 0;
};

// The best-model tracker that eval.load_best_model_at_end asks for. load_run_config has already
// checked the metric's name, a classifier's classes against its training file; a RunConfig
// built in code has not been through it, so the names this run's evaluation reports (`labels`
// are its classes) are the final word: another name is a ConfigError.
BestModel best_model_for(const RunConfig& config, const TrainingTask& task,
                         const data::LabelNames& labels);

}  // namespace heed::train
