#pragma once
// One row of LayerNorm and of its backward, for f32 (built for AVX-512 and AVX2 in
// wide_loops.cpp) and f64 (the reference the gradient checks use). The row sums keep
// rows::kLanes partial sums, so they vectorise without reassociation, and every multiply-add
// is a std::fma, so that no build is left to contract them its own way: every ISA gives the
// same bits.
#include <cmath>
#include <cstdint>

#include "autograd/kernels/loop_hints.h"
#include "autograd/kernels/row_reduce.h"

namespace heed::rows {

// out = (x - mean) * rstd * w + b over one row; returns mean and rstd, which backward reads.
template <typename T>
[[gnu::always_inline]] inline void layer_norm_row(const T* __restrict x, const T* __restrict w,
                                                  const T* __restrict b, int64_t width, T eps,
                                                  T* __restrict out, T* mean, T* rstd) {
  const T m = sum(x, width) / static_cast<T>(width);
  T acc[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= width; c += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) acc[j] = std::fma(x[c + j] - m, x[c + j] - m, acc[j]);
  }
  T squares = 0;
  for (; c < width; ++c) squares = std::fma(x[c] - m, x[c] - m, squares);
  for (int64_t j = 0; j < kLanes; ++j) squares += acc[j];
  const T r = T(1) / std::sqrt(squares / static_cast<T>(width) + eps);
  for (c = 0; c < width; ++c) out[c] = std::fma((x[c] - m) * r, w[c], b[c]);
  *mean = m;
  *rstd = r;
}

// The input gradient of one row from the output gradient g:
// gx = rstd * (g*w - mean(g*w) - xhat * mean(g*w*xhat)) with xhat = (x - mean) * rstd.
// Adds the row's terms of the weight and bias gradients, g*xhat and g, to sum_w and sum_b
// (in double: they are summed over every row of the batch). gx may be g (or apart from it,
// never partly overlapping): the last pass reads each g[c] before it writes gx[c].
template <typename T>
[[gnu::always_inline]] inline void layer_norm_backward_row(const T* __restrict x, const T* g,
                                                           const T* __restrict w, int64_t width,
                                                           T mean, T rstd, T* gx,
                                                           double* __restrict sum_w,
                                                           double* __restrict sum_b) {
  // One pass for both row sums and the parameters' terms.
  T acc_dy[kLanes] = {}, acc_dy_xhat[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= width; c += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) {
      const T xhat = (x[c + j] - mean) * rstd;
      acc_dy[j] = std::fma(g[c + j], w[c + j], acc_dy[j]);
      acc_dy_xhat[j] = std::fma(g[c + j] * w[c + j], xhat, acc_dy_xhat[j]);
      sum_w[c + j] += g[c + j] * xhat;
      sum_b[c + j] += g[c + j];
    }
  }
  T sum_dy = 0, sum_dy_xhat = 0;
  for (; c < width; ++c) {
    const T xhat = (x[c] - mean) * rstd;
    sum_dy = std::fma(g[c], w[c], sum_dy);
    sum_dy_xhat = std::fma(g[c] * w[c], xhat, sum_dy_xhat);
    sum_w[c] += g[c] * xhat;
    sum_b[c] += g[c];
  }
  for (int64_t j = 0; j < kLanes; ++j) {
    sum_dy += acc_dy[j];
    sum_dy_xhat += acc_dy_xhat[j];
  }
  const T inv_n = T(1) / static_cast<T>(width);
  const T shift = inv_n * sum_dy, slope = inv_n * sum_dy_xhat;
  HEED_ASSUME_NO_LOOP_ALIAS
  for (c = 0; c < width; ++c) {
    const T xhat = (x[c] - mean) * rstd;
    gx[c] = rstd * std::fma(-xhat, slope, std::fma(g[c], w[c], -shift));
  }
}

}  // namespace heed::rows
