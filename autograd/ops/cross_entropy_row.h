#pragma once
// The loss of one row of logits, which cross_entropy and linear_cross_entropy share.
#include <cstdint>

namespace heed {

// One row's cross-entropy from its log-sum-exp, its logit at the target and the sum of its
// logits: (1 - ε)·(lse - x[target]) + ε·(lse - mean(x)), PyTorch's label smoothing ε.
template <typename T>
double smoothed_row_loss(T lse, T at_target, T sum_x, int64_t classes, double smoothing) {
  const double nll = static_cast<double>(lse - at_target);
  const double smooth = static_cast<double>(lse) - static_cast<double>(sum_x) / classes;
  return (1.0 - smoothing) * nll + smoothing * smooth;
}

}  // namespace heed
