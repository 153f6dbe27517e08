#pragma once
// The YAML names of the tasks (`task: mlm`), which config/ checks a config against. The tasks
// themselves live above config/ (train/tasks/), and each adds its name here from its own file
// through register_task (train/tasks/registry.h): the list lives down here and is filled from
// above, so config/ reads and checks `task` without depending on tasks/, and a new task touches
// no file of config/.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace heed::train {

// Adds a task's name. `rank` places it in task_names(), so that messages and docs list the
// tasks in a chosen order rather than in the link's; `describe` says what the task trains
// (called only for the docs, once every task exists). Fails on a name added twice.
void add_task_name(std::string_view name, int rank, std::function<std::string()> describe);

// The names added, by rank (ties by name).
std::vector<std::string> task_names();

// The tasks for the `task` key's docs, by rank: "`mlm` (masked LM; needs ...), `clm` (...)".
std::string task_list_doc();

}  // namespace heed::train
