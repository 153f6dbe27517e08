#include "train/tasks/load_run_config.h"

#include "train/config/config_check.h"
#include "train/run/best_model.h"
#include "train/tasks/task.h"

namespace heed::train {
namespace {

// The metric names come from the task; a classifier's class names (spam_f1, ham_recall) from
// data.labels or its training file, read here so that a misspelt name stops the run before a
// vocabulary is trained or a token cache built.
void check_best_model_metric(const RunConfig& config, const TrainingTask& task) {
  if (!config.eval.load_best_model_at_end) return;
  Checker(config.origins)
      .one_of("eval.metric_for_best_model", best_model_metric(config.eval.metric_for_best_model),
              task.metric_names(task.scored_classes_from_config(config), config.eval), "metric");
}

}  // namespace

RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides,
                          const ConfigChecks& checks) {
  RunConfig config = read_run_config(path, overrides, checks);
  const TrainingTask& task = task_for(config.task.name);
  task.check(config);
  validate(config);
  check_files(config, checks);
  check_best_model_metric(config, task);
  return config;
}

}  // namespace heed::train
