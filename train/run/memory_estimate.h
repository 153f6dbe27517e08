#pragma once
// What a run will hold in memory, estimated from its config before the model is built: the
// parameters with their gradients and optimizer state, and the activations that one
// micro-batch's forward keeps for its backward. A run that cannot fit is refused before it
// spends minutes and is killed by the kernel without a word.
#include <cstdint>
#include <optional>
#include <string>

#include "train/config/config.h"
#include "train/tasks/task_data.h"

namespace heed::train {

struct MemoryEstimate {
  double parameters = 0;        // count
  double trainable = 0;         // count of those with gradients and optimizer state
  double parameter_bytes = 0;   // weights, gradients, optimizer state (and bf16 copies)
  double activation_bytes = 0;  // saved for backward by one micro-batch, logits included
  double runtime_bytes = 0;     // the program itself, its libraries and the tokenized data
  double total() const { return parameter_bytes + activation_bytes + runtime_bytes; }
};

// `trainable`: how many parameters train (LoRA freezes the others); unset: all.
MemoryEstimate estimate_memory(const RunConfig& config, const TaskData& data,
                               std::optional<double> trainable = std::nullopt);
// The same with the products' precision given: bf16 (weights copied to bf16, the products'
// operands saved in bf16) or f32. The above takes train.dtype bf16 as bf16 products only on a
// CPU that has them, as `train` does.
MemoryEstimate estimate_memory(const RunConfig& config, const TaskData& data,
                               std::optional<double> trainable, bool bf16_products);

// Rows of a micro-batch: train.batch_size, or the whole training set when that is smaller.
double batch_rows(const RunConfig& config, const TaskData& data);

// The memory this process may use: the machine's, or its cgroup's limit when lower; nullopt
// when neither can be read.
std::optional<double> available_memory_bytes();

// "1.23 GB"
std::string format_bytes(double bytes);

// When the run does not fit in `machine` bytes, what would, each alone: a smaller
// train.batch_size with as many more train.grad_accum_steps (the same examples a step), a
// shorter data.max_seq_length, train.gradient_checkpointing: true; each with its estimate.
std::string fitting_advice(const RunConfig& config, const TaskData& data, double machine,
                           std::optional<double> trainable = std::nullopt);

// Logs the estimate; with train.check_memory, a run that exceeds the machine's memory is a
// ConfigError before anything is allocated.
void check_memory(const RunConfig& config, const TaskData& data, const Log& log,
                  std::optional<double> trainable = std::nullopt);

// Warns when train.threads times the ranks on this machine is more than its CPUs.
void warn_of_oversubscription(const RunConfig& config, int ranks_here, const Log& log);

}  // namespace heed::train
