#pragma once
// What a run prints on stderr: its messages, and after each step a progress bar (on a terminal)
// or a plain line every logging.every_steps. A data-parallel run's other ranks are quiet: rank 0
// speaks for the job.
#include <cstdint>
#include <string>

#include "train/config/config.h"

namespace heed::train {

// "1h02m", "3m07s", "12s".
std::string duration(double seconds);

class Console {
 public:
  Console(Progress mode, int64_t every_steps, bool quiet);

  // One line; a bar being drawn is ended first.
  void say(const std::string& line);
  // The bar, redrawn, or every `every_steps` steps (and at the last) a line.
  void step(int64_t step, int64_t max_steps, double loss, double lr, double tokens_per_s,
            double elapsed_seconds, double eta_seconds);

 private:
  bool show_bar() const;

  Progress mode_;
  int64_t every_steps_;
  bool quiet_;
  bool bar_visible_ = false;
};

}  // namespace heed::train
