#include "train/config/task_names.h"

#include <algorithm>
#include <utility>

#include "base/error.h"

namespace heed::train {
namespace {

// A function's static rather than a namespace-scope one: the tasks add their names while the
// program's statics are initialized, in an order across files that C++ leaves open, so the
// list must exist before the first of them runs.
std::vector<std::pair<int, std::string>>& ranked_names() {
  static std::vector<std::pair<int, std::string>> names;
  return names;
}

}  // namespace

void add_task_name(std::string_view name, int rank) {
  auto& names = ranked_names();
  if (std::ranges::count(names, name, &std::pair<int, std::string>::second)) {
    fail("task '{}' is registered twice", name);
  }
  names.emplace_back(rank, std::string(name));
  std::ranges::sort(names);
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const auto& [rank, name] : ranked_names()) names.push_back(name);
  return names;
}

}  // namespace heed::train
