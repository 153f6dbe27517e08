#include "nn/fused_loss.h"

#include "autograd/ops.h"

namespace heed::nn {

Tensor fused_linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& targets,
                                  const FusedLossOptions& options) {
  return linear_cross_entropy(x, weight, options.bias, targets, options.ignore_index,
                              options.label_smoothing, options.chunk_rows, options.predictions);
}

}  // namespace heed::nn
