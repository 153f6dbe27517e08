// What the estimate means on this machine: the memory it has, the line `train` logs, a run
// refused before it is built when it would not fit, with what would; and threads beyond its CPUs.
#include "train/run/memory_estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "train/config/config_origins.h"

namespace heed::train {
namespace {

// The number after the word `after` in a file of words (its first word when `after` is empty);
// nullopt when absent or not a number.
std::optional<double> read_number(const std::string& path, const std::string& after) {
  std::ifstream in(path);
  std::string word;
  while (in >> word) {
    if (after.empty() || word == after) {
      if (!after.empty() && !(in >> word)) return std::nullopt;
      try {
        return std::stod(word);
      } catch (const std::exception&) {
        return std::nullopt;  // "max": no limit
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> available_memory_bytes() {
  std::optional<double> kib = read_number("/proc/meminfo", "MemTotal:");
  std::optional<double> bytes;
  if (kib) bytes = *kib * 1024;
  if (std::optional<double> limit = read_number("/sys/fs/cgroup/memory.max", "")) {
    bytes = bytes ? std::min(*bytes, *limit) : *limit;
  }
  return bytes;
}

std::string format_bytes(double bytes) {
  if (bytes >= 1e12) return fmt::format("{:.0f} TB", bytes / 1e12);
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  return fmt::format("{:.0f} MB", bytes / 1e6);
}

std::string fitting_advice(const RunConfig& c, const TaskData& d, double machine,
                           std::optional<double> trainable) {
  const auto fits = [&](const RunConfig& changed) {
    return estimate_memory(changed, d, trainable).total() <= machine;
  };
  const auto about = [&](const RunConfig& changed) {
    return format_bytes(estimate_memory(changed, d, trainable).total());
  };
  std::vector<std::string> ways;
  // Fewer rows a micro-batch, as many more micro-batches a step: the same examples a step.
  const auto rows = static_cast<int64_t>(batch_rows(c, d));
  for (int64_t k = 2; k <= rows; ++k) {
    if (rows % k != 0) continue;
    RunConfig smaller = c;
    smaller.train.batch_size = c.train.batch_size / k;
    smaller.train.grad_accum_steps = c.train.grad_accum_steps * k;
    if (!fits(smaller)) continue;
    ways.push_back(fmt::format(
        "train.batch_size: {} with train.grad_accum_steps: {} (the same {} examples a step; "
        "about {})",
        smaller.train.batch_size, smaller.train.grad_accum_steps,
        c.train.batch_size * c.train.grad_accum_steps, about(smaller)));
    break;
  }
  // Shorter windows (the encoder-decoders' two lengths are left to the user).
  if (c.model.arch() != Arch::kBart && c.model.arch() != Arch::kT5) {
    RunConfig shorter = c;
    while (shorter.data.max_seq_length > 1 && !fits(shorter)) shorter.data.max_seq_length /= 2;
    if (shorter.data.max_seq_length < c.data.max_seq_length && fits(shorter)) {
      ways.push_back(fmt::format("data.max_seq_length: {} (about {})", shorter.data.max_seq_length,
                                 about(shorter)));
    }
  }
  if (!c.train.gradient_checkpointing) {
    RunConfig recomputed = c;
    recomputed.train.gradient_checkpointing = true;
    if (fits(recomputed)) {
      ways.push_back(
          fmt::format("train.gradient_checkpointing: true (about {})", about(recomputed)));
    }
  }
  if (ways.empty()) {
    return fmt::format(
        "none of a smaller train.batch_size, a shorter data.max_seq_length or "
        "train.gradient_checkpointing: true alone would fit: make the model "
        "smaller");
  }
  std::string text = "it would fit with " + ways[0];
  for (size_t i = 1; i < ways.size(); ++i) {
    text += (i + 1 == ways.size() ? ", or " : ", ") + ways[i];
  }
  return text;
}

void check_memory(const RunConfig& c, const TaskData& data, const Log& log,
                  std::optional<double> trainable) {
  const MemoryEstimate e = estimate_memory(c, data, trainable);
  const std::optional<double> machine = available_memory_bytes();
  const auto count = [](double n) {
    return n >= 1e9 ? fmt::format("{:.1f}B", n / 1e9) : fmt::format("{:.1f}M", n / 1e6);
  };
  const std::string parameters =
      e.trainable == e.parameters
          ? fmt::format("{} parameters with gradients and optimizer state", count(e.parameters))
          : fmt::format("{} parameters, {} of them with gradients and optimizer state",
                        count(e.parameters),
                        e.trainable >= 1e5 ? count(e.trainable)
                                           : fmt::format("{:.1f}K", e.trainable / 1e3));
  const std::string estimate = fmt::format(
      "about {} ({}: {}; activations of a micro-batch of {}: {}; the program: {})",
      format_bytes(e.total()), parameters, format_bytes(e.parameter_bytes), batch_rows(c, data),
      format_bytes(e.activation_bytes), format_bytes(e.runtime_bytes));
  if (machine && e.total() > *machine && c.train.check_memory) {
    config_fail(c.origins.where("model"),
                "model: the run needs {}, more than this machine's {}; {}; or set "
                "train.check_memory: false to try anyway",
                estimate, format_bytes(*machine), fitting_advice(c, data, *machine, trainable));
  }
  log(fmt::format("memory: {}{}", estimate,
                  machine ? fmt::format(" of the machine's {}", format_bytes(*machine)) : ""));
}

void warn_of_oversubscription(const RunConfig& c, int ranks_here, const Log& log) {
  const unsigned cpus = std::thread::hardware_concurrency();
  const int64_t ranks = ranks_here;
  if (c.train.threads * ranks > static_cast<int64_t>(cpus) && cpus > 0) {
    log(fmt::format(
        "warning: train.threads {}{} is more than the {} CPUs here; steps will be slower than "
        "with {}",
        c.train.threads, ranks > 1 ? fmt::format(" × {} ranks", ranks) : "", cpus,
        std::max<int64_t>(1, cpus / ranks)));
  }
}

}  // namespace heed::train
