#pragma once
// A run config read and checked in full: the config's own checks (train/config/), then those of
// its task (TrainingTask::check), then the files it names. What the programs load.
#include <string>
#include <vector>

#include "train/config/config.h"

namespace heed::train {

// Reads `path`, applies the overrides in order ("optim.lr=3e-4"; the value is YAML, so
// "optim.betas=[0.9,0.98]" works), then checks everything, including that the data files
// exist. Relative paths resolve against the current working directory. Throws ConfigError.
RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides = {},
                          const ConfigChecks& checks = {});

}  // namespace heed::train
