#include "train/config/task_names.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "base/error.h"

namespace heed::train {
namespace {

// A function's static rather than a namespace-scope one: the tasks add their names while the
// program's statics are initialized, in an order across files that C++ leaves open, so the
// list must exist before the first of them runs.
struct TaskEntry {
  int rank;
  std::string name;
  std::function<std::string()> describe;
};
std::vector<TaskEntry>& ranked_names() {
  static std::vector<TaskEntry> names;
  return names;
}

}  // namespace

void add_task_name(std::string_view name, int rank, std::function<std::string()> describe) {
  auto& names = ranked_names();
  if (std::ranges::count(names, name, &TaskEntry::name)) {
    fail("task '{}' is registered twice", name);
  }
  names.push_back({rank, std::string(name), std::move(describe)});
  std::ranges::sort(names, {}, [](const TaskEntry& e) { return std::tie(e.rank, e.name); });
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const TaskEntry& entry : ranked_names()) names.push_back(entry.name);
  return names;
}

std::string task_list_doc() {
  std::string doc;
  for (const TaskEntry& entry : ranked_names()) {
    if (!doc.empty()) doc += ", ";
    doc += fmt::format("`{}` ({})", entry.name, entry.describe());
  }
  return doc;
}

}  // namespace heed::train
