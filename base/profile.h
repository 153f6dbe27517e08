#pragma once
// Per-op wall time, for finding where a step goes: on when the environment variable
// HEED_PROFILE is set (to anything but 0), off and free otherwise. Forward ops time
// themselves with an OpTimer; backward nodes are timed by the engine under their node names
// ("LinearBackward"), and the engine's summing of gradients that fan in as "(gradient sum)".
// Each op's time also says how much of it oneDNN's products took (ProductTimer): on a CPU
// whose products are fast (AMX), the rest is the step.
#include <chrono>
#include <string>
#include <vector>

namespace heed {

bool profiling();
// Turns the timing on or off from here on (tests; programs follow HEED_PROFILE).
void set_profiling(bool on);

struct OpTime {
  std::string name;
  double seconds = 0.0;
  double product_seconds = 0.0;  // the part of `seconds` inside oneDNN's products
  int64_t calls = 0;
};

void record_op_time(const char* name, double seconds, double product_seconds = 0.0);
// Every op timed since the last reset, longest first.
std::vector<OpTime> op_times();
void reset_op_times();
// The table of op_times(), with each op's share of the total, the time per call and the
// seconds spent in products, then the totals.
std::string op_time_report();

// Times its own lifetime as `name` when profiling, unless it runs inside another timed op
// (a Linear's products, a backward node's ops): each op's time is then counted once, under
// the outermost op, and the shares add up to the step.
class OpTimer {
 public:
  // profiling() is read once: set_profiling may change it while an op runs.
  explicit OpTimer(const char* name) : counted_(profiling()) {
    if (counted_ && depth_++ == 0) {
      name_ = name;
      products_before_ = product_seconds_;
      start_ = std::chrono::steady_clock::now();
    }
  }
  ~OpTimer() {
    if (counted_) --depth_;
    if (name_) {
      record_op_time(
          name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(),
          product_seconds_ - products_before_);
    }
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  friend class ProductTimer;
  static thread_local int depth_;
  // Seconds this thread has spent in oneDNN's products since it started.
  static thread_local double product_seconds_;
  const char* name_ = nullptr;
  bool counted_;
  double products_before_ = 0.0;
  std::chrono::steady_clock::time_point start_;
};

// Times a oneDNN product (its execution, not the packing or conversions around it) when
// profiling: the time counts towards the enclosing OpTimer's products, or is recorded as
// "(products outside ops)" when no op is timed. Both are per thread: ops run their products on
// the thread that called them (oneDNN parallelises inside), which this relies on.
class ProductTimer {
 public:
  ProductTimer() : on_(profiling()) {
    if (on_) start_ = std::chrono::steady_clock::now();
  }
  ~ProductTimer() {
    if (!on_) return;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (OpTimer::depth_ > 0) {
      OpTimer::product_seconds_ += seconds;
    } else {
      record_op_time("(products outside ops)", seconds, seconds);
    }
  }
  ProductTimer(const ProductTimer&) = delete;
  ProductTimer& operator=(const ProductTimer&) = delete;

 private:
  bool on_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace heed
