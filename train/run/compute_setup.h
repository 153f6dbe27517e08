#pragma once
// How a run uses the CPU: its OpenMP threads and the precision of its matrix products.
#include "train/config/config.h"
#include "train/tasks/task_data.h"

namespace heed::train {

// Sets train.threads (when given) and, for train.dtype bf16, bf16 matrix products. A CPU
// without native bf16 products (oneDNN 2.6 needs AVX-512) would only emulate them, slower
// than f32: there the run trains in f32 and `log` says so.
void set_up_compute(const RunConfig& config, const Log& log);

}  // namespace heed::train
