#pragma once
// Per-op wall time, for finding where a step goes: on when the environment variable
// HEED_PROFILE is set (to anything but 0), off and free otherwise. Forward ops time
// themselves with an OpTimer; backward nodes are timed by the engine under their node names
// ("LinearBackward"), and the engine's summing of gradients that fan in as "(gradient sum)".
#include <chrono>
#include <string>
#include <vector>

namespace heed {

bool profiling();

struct OpTime {
  std::string name;
  double seconds = 0.0;
  int64_t calls = 0;
};

void record_op_time(const char* name, double seconds);
// Every op timed since the last reset, longest first.
std::vector<OpTime> op_times();
void reset_op_times();
// The table of op_times(), with each op's share of the total and the time per call.
std::string op_time_report();

// Times its own lifetime as `name` when profiling, unless it runs inside another timed op
// (a Linear's products, a backward node's ops): each op's time is then counted once, under
// the outermost op, and the shares add up to the step.
class OpTimer {
 public:
  explicit OpTimer(const char* name)
      : name_(profiling() && depth_++ == 0 ? name : nullptr), counted_(profiling()) {
    if (name_) start_ = std::chrono::steady_clock::now();
  }
  ~OpTimer() {
    if (counted_) --depth_;
    if (name_) {
      record_op_time(
          name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    }
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  static thread_local int depth_;
  const char* name_;
  bool counted_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace heed
