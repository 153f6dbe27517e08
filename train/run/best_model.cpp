#include "train/run/best_model.h"

#include <algorithm>

#include "base/error.h"
#include "train/config/config_origins.h"
#include "train/config/did_you_mean.h"

namespace heed::train {

std::string best_model_metric(const std::optional<std::string>& configured) {
  if (!configured) return "loss";
  const std::string_view prefix = "eval_";
  if (configured->starts_with(prefix)) return configured->substr(prefix.size());
  return *configured;
}

bool greater_is_better_by_default(std::string_view metric) {
  return !(metric.ends_with("loss") || metric == "perplexity" || metric == "bits_per_byte" ||
           metric.ends_with("error_rate"));
}

bool BestModel::consider(const std::map<std::string, double>& metrics, int64_t step) {
  const auto it = metrics.find(metric_);
  HEED_CHECK(it != metrics.end(),
             "eval.metric_for_best_model: the evaluation at step {} did not report '{}'", step,
             metric_);
  const double v = it->second;
  const bool better = !value_ || (greater_is_better_ ? v > *value_ : v < *value_);
  if (better) {
    value_ = v;
    step_ = step;
  }
  return better;
}

nlohmann::json BestModel::state() const {
  nlohmann::json j = {{"metric_for_best_model", metric_},
                      {"greater_is_better", greater_is_better_}};
  if (value_) {
    j["best_metric"] = *value_;
    j["best_global_step"] = step_;
  }
  return j;
}

void BestModel::load_state(const io::JsonFields& state, const std::string& where) {
  const std::string saved_metric = state.string("metric_for_best_model");
  const bool saved_greater = state.boolean("greater_is_better");
  if (saved_metric != metric_ || saved_greater != greater_is_better_) {
    throw ConfigError(fmt::format(
        "eval.metric_for_best_model: is '{}' (greater_is_better: {}) but was '{}' ({}) in {}; "
        "the best so far would be judged by another rule (start a new train.output_dir, or set "
        "it back)",
        metric_, greater_is_better_, saved_metric, saved_greater, where));
  }
  value_.reset();
  step_ = 0;
  if (state.has("best_metric")) {
    value_ = state.number("best_metric");
    step_ = state.int64("best_global_step");
  }
}

BestModel best_model_for(const RunConfig& c, const TrainingTask& task,
                         const data::LabelNames& labels) {
  const std::string metric = best_model_metric(c.eval.metric_for_best_model);
  const std::vector<std::string> names = task.metric_names(task.scored_classes(labels), c.eval);
  if (!std::ranges::count(names, metric)) {
    const std::string key = "eval.metric_for_best_model";
    config_fail(c.origins.where(key), "{}: {}", key, unknown_name("metric", metric, names));
  }
  return BestModel(metric, c.eval.greater_is_better.value_or(greater_is_better_by_default(metric)));
}

}  // namespace heed::train
