#pragma once
// A head and its cross-entropy as one op (autograd's linear_cross_entropy), with the options
// named at the call. The op keeps its positional signature, which its own tests use.
#include <cstdint>

#include "autograd/tensor.h"

namespace heed::nn {

struct FusedLossOptions {
  Tensor bias;  // [classes] added to the logits, or undefined: none
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  int64_t chunk_rows = 0;         // 0: linear_cross_entropy's own chunks
  Tensor* predictions = nullptr;  // if given, receives each row's arg max (i64, as targets)
};

// cross_entropy(linear(x, weight, bias), targets) without ever holding the whole logits: x
// [.., in], weight [classes, in], targets shaped as x's leading dims.
Tensor fused_linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& targets,
                                  const FusedLossOptions& options = {});

}  // namespace heed::nn
