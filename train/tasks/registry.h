#pragma once
// The tasks by their YAML name. Each task's file registers itself at namespace scope:
//   const bool kRegistered = register_task("mlm", 10, masked_lm_task);
// so a new task is its file and its line in train/CMakeLists.txt, which also says how these
// registrations survive static linking.
#include <string_view>

#include "train/tasks/task.h"

namespace heed::train {

// Adds `task` under `name`, the value of the config's `task` key, and the name to the config's
// list (config/task_names.h). `rank` orders the names in messages and docs; the tasks so far
// use 10, 20, ... so that a new one can go between. `task` is called at the first task_for,
// after the program's statics exist. Returns true, to initialize a namespace-scope constant.
bool register_task(std::string_view name, int rank, const TrainingTask& (*task)());

}  // namespace heed::train
