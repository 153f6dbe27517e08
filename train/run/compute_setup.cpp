#include "train/run/compute_setup.h"

#include "autograd/ops.h"

namespace heed::train {

void set_up_compute(const RunConfig& config, const Log& log) {
  if (config.train.threads > 0) set_num_threads(static_cast<int>(config.train.threads));
  if (config.train.dtype != DType::bf16) return;
  if (native_bf16_products()) {
    set_matmul_precision(MatmulPrecision::bf16);
  } else {
    log("train.dtype: bf16: this CPU has no native bf16 matrix products (oneDNN needs "
        "AVX-512): training in f32");
  }
}

}  // namespace heed::train
