#pragma once
// An evaluation of one split: the task's teacher-forced metrics (loss, perplexity, accuracy,
// per-class scores) and, where the task has them, the metrics of the model's own outputs.
#include <map>
#include <memory>
#include <string>

#include "train/config/config.h"
#include "train/tasks/task.h"

namespace heed::train {

// Leaves the model in eval mode; records no gradient.
std::map<std::string, double> evaluate(const TrainingTask& task, nn::PretrainedModel& model,
                                       const TaskData& data,
                                       const std::shared_ptr<const data::Dataset>& split,
                                       const RunConfig& config);

}  // namespace heed::train
