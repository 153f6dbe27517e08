#pragma once
// A run's evaluations with their records (metrics.jsonl, the console, report.html), and its end:
// the best model loaded if chosen, the final evaluations, final_metrics.json, the task's
// examples.
#include <map>
#include <memory>
#include <string>

#include "train/run/run_parts.h"

namespace heed::train {

using Metrics = std::map<std::string, double>;
using SplitMetrics = std::map<std::string, Metrics>;  // split -> metrics

// Evaluates `split` (named `name`) and records the result; the model is in training mode after.
Metrics evaluate_and_log(RunParts& run, const RunProgress& progress, const std::string& name,
                         const std::shared_ptr<const data::Dataset>& split);

// Rank 0, after the last step: evaluates for the whole job and writes its results; returns the
// directory of the model it ended with (`last_checkpoint` unless the best model was loaded).
std::string finish_run_on_main(RunParts& run, RunProgress& progress,
                               const std::string& last_checkpoint, SplitMetrics& final_metrics);

}  // namespace heed::train
