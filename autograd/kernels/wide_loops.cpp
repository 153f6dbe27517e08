// Each loop is compiled twice, for x86-64-v4 (AVX-512) and for the build's -march (AVX2), and
// an ifunc resolver picks one when the library loads. Only these loops are built for AVX-512,
// not the whole build (CMakeLists.txt says why). They are the elementwise and row passes that
// a bf16 step spends most of its non-product time in (docs/performance_history.md).
#include "autograd/kernels/wide_loops.h"

#include <algorithm>
#include <limits>

#include "autograd/kernels/dropout_draws.h"
#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/gelu.h"
#include "autograd/kernels/layer_norm_rows.h"
#include "autograd/kernels/row_reduce.h"

#define HEED_WIDE [[gnu::target_clones("arch=x86-64-v4", "default")]]

namespace heed::wide {

HEED_WIDE void gelu(bool tanh, const float* h, int64_t n, float* out) {
  if (tanh) {
    for (int64_t i = 0; i < n; ++i) out[i] = gelu_tanh(h[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = gelu_erf(h[i]);
  }
}

HEED_WIDE void gelu_gradient(bool tanh, const float* g, const float* h, int64_t n, float* out) {
  if (tanh) {
    for (int64_t i = 0; i < n; ++i) out[i] = g[i] * gelu_tanh_grad(h[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = g[i] * gelu_erf_grad(h[i]);
  }
}

HEED_WIDE void gelu_gradient(bool tanh, const float* g, const bf16* h, int64_t n, float* out) {
  if (tanh) {
    for (int64_t i = 0; i < n; ++i) out[i] = g[i] * gelu_tanh_grad(static_cast<float>(h[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = g[i] * gelu_erf_grad(static_cast<float>(h[i]));
  }
}

HEED_WIDE void round_to_bf16(const float* src, int64_t n, bf16* dst) {
  heed::round_to_bf16(src, n, dst);  // dtype.h's loop, inlined into each build
}

HEED_WIDE void add_to_sums(const float* __restrict row, int64_t n, double* __restrict sums) {
  for (int64_t i = 0; i < n; ++i) sums[i] += row[i];
}

HEED_WIDE void scale_and_mask(const float* __restrict x, const uint8_t* __restrict keep,
                              float scale, int64_t n, float* __restrict out) {
  if (keep == nullptr) {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale;
    return;
  }
  constexpr float neg_inf = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) out[i] = keep[i] ? x[i] * scale : neg_inf;
}

HEED_WIDE bool softmax_row(float* row, int64_t limit, int64_t width) {
  return rows::softmax_in_place(row, limit, width);
}

HEED_WIDE void apply_dropout_draws(const uint16_t* draws, int64_t count, uint32_t threshold,
                                   float scale, const float* in, float* out, uint8_t* keep_bits) {
  apply_dropout_draws_loop<float>(draws, count, threshold, scale, in, out, keep_bits);
}

HEED_WIDE void apply_keep_bits(const uint8_t* keep_bits, int64_t count, float scale, const float* g,
                               float* out) {
  apply_keep_bits_loop<float>(keep_bits, count, scale, g, out);
}

HEED_WIDE void layer_norm_row(const float* __restrict x, const float* __restrict w,
                              const float* __restrict b, int64_t width, float eps,
                              float* __restrict out, float* mean, float* rstd) {
  rows::layer_norm_row(x, w, b, width, eps, out, mean, rstd);
}

HEED_WIDE void layer_norm_backward_row(const float* __restrict x, const float* g,
                                       const float* __restrict w, int64_t width, float mean,
                                       float rstd, float* gx, double* __restrict sum_w,
                                       double* __restrict sum_b) {
  rows::layer_norm_backward_row(x, g, w, width, mean, rstd, gx, sum_w, sum_b);
}

HEED_WIDE double cross_entropy_row(float* row, int64_t classes, int64_t target,
                                   const CrossEntropyRowOptions& options, bf16* rounded,
                                   int64_t* prediction) {
  return heed::cross_entropy_row(row, classes, target, options, rounded, prediction);
}

}  // namespace heed::wide
