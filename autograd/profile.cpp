#include "autograd/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

namespace heed {
namespace {

struct Table {
  std::mutex mutex;
  std::map<std::string, OpTime, std::less<>> ops;
};

Table& table() {
  static Table* instance = new Table();
  return *instance;
}

}  // namespace

thread_local int OpTimer::depth_ = 0;

bool profiling() {
  static const bool on = [] {
    const char* value = std::getenv("HEED_PROFILE");
    return value != nullptr && std::string(value) != "0" && std::string(value) != "";
  }();
  return on;
}

void record_op_time(const char* name, double seconds) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.ops.find(name);
  if (it == t.ops.end()) it = t.ops.emplace(name, OpTime{name, 0.0, 0}).first;
  it->second.seconds += seconds;
  it->second.calls++;
}

std::vector<OpTime> op_times() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::vector<OpTime> out;
  for (const auto& [name, op] : t.ops) out.push_back(op);
  std::ranges::sort(out, [](const OpTime& a, const OpTime& b) { return a.seconds > b.seconds; });
  return out;
}

void reset_op_times() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.ops.clear();
}

std::string op_time_report() {
  const std::vector<OpTime> ops = op_times();
  double total = 0.0;
  for (const OpTime& op : ops) total += op.seconds;
  std::string out = fmt::format("{:<36} {:>10} {:>7} {:>8} {:>10}\n", "op", "seconds", "share",
                                "calls", "ms/call");
  for (const OpTime& op : ops) {
    out += fmt::format("{:<36} {:>10.3f} {:>6.1f}% {:>8} {:>10.3f}\n", op.name, op.seconds,
                       total > 0 ? 100.0 * op.seconds / total : 0.0, op.calls,
                       1e3 * op.seconds / static_cast<double>(op.calls));
  }
  return out;
}

}  // namespace heed
