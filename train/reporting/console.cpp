#include "train/reporting/console.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace heed::train {

std::string duration(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

Console::Console(Progress mode, int64_t every_steps, bool quiet)
    : mode_(mode), every_steps_(every_steps), quiet_(quiet) {}

void Console::say(const std::string& line) {
  if (quiet_) return;
  if (bar_visible_) {
    std::fputs("\n", stderr);
    bar_visible_ = false;
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

bool Console::show_bar() const {
  if (mode_ == Progress::kAlways) return true;
  if (mode_ == Progress::kNever) return false;
  return ::isatty(STDERR_FILENO);
}

void Console::step(int64_t step, int64_t max_steps, double loss, double lr, double tokens_per_s,
                   double elapsed_seconds, double eta_seconds) {
  if (quiet_) return;
  if (show_bar()) {
    const int width = 24;
    const int filled = static_cast<int>(width * step / max_steps);
    std::fprintf(stderr, "\r[%s%s] %ld/%ld loss %.4f lr %.2e %.0f tok/s ETA %s   ",
                 std::string(filled, '=').c_str(), std::string(width - filled, ' ').c_str(),
                 static_cast<long>(step), static_cast<long>(max_steps), loss, lr, tokens_per_s,
                 duration(eta_seconds).c_str());
    bar_visible_ = true;
  } else if (step % every_steps_ == 0 || step == max_steps) {
    say(fmt::format("step {}/{} | loss {:.4f} | lr {:.2e} | {:.0f} tok/s | elapsed {} | eta {}",
                    step, max_steps, loss, lr, tokens_per_s, duration(elapsed_seconds),
                    duration(eta_seconds)));
  }
}

}  // namespace heed::train
