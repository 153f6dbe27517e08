#pragma once
// The YAML names of the tasks (`task: mlm`), which config/ checks a config against. The tasks
// themselves live above config/ (train/tasks/), and each adds its name here from its own file
// through register_task (train/tasks/registry.h): the list lives down here and is filled from
// above, so config/ reads and checks `task` without depending on tasks/, and a new task touches
// no file of config/.
#include <string>
#include <string_view>
#include <vector>

namespace heed::train {

// Adds a task's name. `rank` places it in task_names(), so that messages and docs list the
// tasks in a chosen order rather than in the link's. Fails on a name added twice.
void add_task_name(std::string_view name, int rank);

// The names added, by rank (ties by name).
std::vector<std::string> task_names();

}  // namespace heed::train
