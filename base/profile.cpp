#include "base/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
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

std::atomic<bool>& profiling_flag() {
  static std::atomic<bool> on = [] {
    const char* value = std::getenv("HEED_PROFILE");
    return value != nullptr && std::string(value) != "0" && std::string(value) != "";
  }();
  return on;
}

}  // namespace

thread_local int OpTimer::depth_ = 0;
thread_local double OpTimer::product_seconds_ = 0.0;

bool profiling() {
  return profiling_flag().load(std::memory_order_relaxed);
}

void set_profiling(bool on) {
  profiling_flag().store(on, std::memory_order_relaxed);
}

void record_op_time(const char* name, double seconds, double product_seconds) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.ops.find(name);
  if (it == t.ops.end()) it = t.ops.emplace(name, OpTime{name, 0.0, 0.0, 0}).first;
  it->second.seconds += seconds;
  it->second.product_seconds += product_seconds;
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
  double total = 0.0, products = 0.0;
  for (const OpTime& op : ops) {
    total += op.seconds;
    products += op.product_seconds;
  }
  std::string out = fmt::format("{:<36} {:>10} {:>7} {:>8} {:>10} {:>10}\n", "op", "seconds",
                                "share", "calls", "ms/call", "products");
  for (const OpTime& op : ops) {
    out += fmt::format("{:<36} {:>10.3f} {:>6.1f}% {:>8} {:>10.3f} {:>10.3f}\n", op.name,
                       op.seconds, total > 0 ? 100.0 * op.seconds / total : 0.0, op.calls,
                       1e3 * op.seconds / static_cast<double>(op.calls), op.product_seconds);
  }
  out += fmt::format("{:<36} {:>10.3f} {:>6.1f}% {:>8} {:>10} {:>10.3f}\n", "(all ops)", total,
                     total > 0 ? 100.0 : 0.0, "", "", products);
  out += fmt::format("oneDNN's products: {:.3f} s ({:.1f}%), everything around them: {:.3f} s\n",
                     products, total > 0 ? 100.0 * products / total : 0.0, total - products);
  return out;
}

}  // namespace heed
