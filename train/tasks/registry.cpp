#include "train/tasks/registry.h"

#include <fmt/format.h>

#include <map>
#include <string>

#include "train/config/task_names.h"

namespace heed::train {
namespace {

using TaskMaker = const TrainingTask& (*)();

// A function's static: registrations run while statics are initialized, in an order across
// files that C++ leaves open.
std::map<std::string, TaskMaker, std::less<>>& tasks() {
  static std::map<std::string, TaskMaker, std::less<>> tasks;
  return tasks;
}

}  // namespace

bool register_task(std::string_view name, int rank, TaskMaker task) {
  // The description asks the task itself, so it runs after the statics exist.
  add_task_name(name, rank, [task] {
    const TrainingTask& t = task();
    return fmt::format("{}; needs `model.arch` {}", t.summary(), arch_names(t.architectures()));
  });  // fails on a name taken twice
  tasks().emplace(name, task);
  return true;
}

const TrainingTask& task_for(std::string_view name) {
  const auto it = tasks().find(name);
  if (it == tasks().end()) fail("task: unknown task '{}'", name);
  return it->second();
}

}  // namespace heed::train
