#pragma once
// The ops' row and elementwise kernels, one call for both element types: f32 runs the wide
// build of the loop (kernels/wide_loops.h, AVX-512 where the CPU has it), f64 the reference
// loop that gradient checks trust and the fast-path tests compare against. The choice is made
// here, once, so that an op's body reads the same for both types (as kernels/dropout_draws.h's
// apply_dropout_draws does for dropout).
#include <cstdint>
#include <limits>
#include <type_traits>

#include "autograd/kernels/cross_entropy_row.h"
#include "autograd/kernels/gelu.h"
#include "autograd/kernels/layer_norm_rows.h"
#include "autograd/kernels/row_reduce.h"
#include "autograd/kernels/wide_loops.h"
#include "base/dtype.h"

namespace heed::kernels {

// out[i] = gelu(h[i]), exact (erf) or tanh-approximated.
template <typename T>
inline void gelu(bool tanh, const T* h, int64_t n, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    wide::gelu(tanh, h, n, out);
  } else if (tanh) {
    for (int64_t i = 0; i < n; ++i) out[i] = gelu_tanh(h[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = gelu_erf(h[i]);
  }
}

// out[i] = g[i] * gelu'(h[i]); h is T or its bf16 rounding (read as f32, as the gelu op's
// backward reads it). out may be g.
template <typename T, typename H>
inline void gelu_gradient(bool tanh, const T* g, const H* h, int64_t n, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    wide::gelu_gradient(tanh, g, h, n, out);
  } else {
    const auto at = [h](int64_t i) -> T {
      if constexpr (std::is_same_v<H, bf16>) {
        return static_cast<float>(h[i]);
      } else {
        return h[i];
      }
    };
    if (tanh) {
      for (int64_t i = 0; i < n; ++i) out[i] = g[i] * gelu_tanh_grad(at(i));
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = g[i] * gelu_erf_grad(at(i));
    }
  }
}

// dst[i] = bf16(src[i]). Only f32 data is rounded for bf16 products; f64 (which never runs
// them) rounds through f32 so that a body written for both types compiles.
template <typename T>
inline void round_to_bf16(const T* src, int64_t n, bf16* dst) {
  if constexpr (std::is_same_v<T, float>) {
    wide::round_to_bf16(src, n, dst);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i].bits = bf16_bits_of(static_cast<float>(src[i]));
  }
}

// sums[i] += row[i] in double.
template <typename T>
inline void add_to_sums(const T* row, int64_t n, double* sums) {
  if constexpr (std::is_same_v<T, float>) {
    wide::add_to_sums(row, n, sums);
  } else {
    for (int64_t i = 0; i < n; ++i) sums[i] += row[i];
  }
}

// out[i] = x[i] * scale where keep is null or keep[i] != 0, else -inf: attention's scores
// scaled and masked for softmax_row. out must not overlap x or keep.
template <typename T>
inline void scale_and_mask(const T* x, const uint8_t* keep, T scale, int64_t n, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    wide::scale_and_mask(x, keep, scale, n, out);
  } else {
    constexpr T neg_inf = -std::numeric_limits<T>::infinity();
    for (int64_t i = 0; i < n; ++i) out[i] = keep == nullptr || keep[i] ? x[i] * scale : neg_inf;
  }
}

// row[0, limit) holds scaled, masked scores (-inf where removed): writes their softmax over
// [0, limit) and zeros over [limit, width). Returns false, with the row all zeros, when every
// score is -inf (no key to attend to).
template <typename T>
inline bool softmax_row(T* row, int64_t limit, int64_t width) {
  if constexpr (std::is_same_v<T, float>) {
    return wide::softmax_row(row, limit, width);
  } else {
    return rows::softmax_in_place(row, limit, width);
  }
}

// kernels/layer_norm_rows.h's rows of LayerNorm and of its backward.
template <typename T>
inline void layer_norm_row(const T* x, const T* w, const T* b, int64_t width, T eps, T* out,
                           T* mean, T* rstd) {
  if constexpr (std::is_same_v<T, float>) {
    wide::layer_norm_row(x, w, b, width, eps, out, mean, rstd);
  } else {
    rows::layer_norm_row(x, w, b, width, eps, out, mean, rstd);
  }
}
template <typename T>
inline void layer_norm_backward_row(const T* x, const T* g, const T* w, int64_t width, T mean,
                                    T rstd, T* gx, double* sum_w, double* sum_b) {
  if constexpr (std::is_same_v<T, float>) {
    wide::layer_norm_backward_row(x, g, w, width, mean, rstd, gx, sum_w, sum_b);
  } else {
    rows::layer_norm_backward_row(x, g, w, width, mean, rstd, gx, sum_w, sum_b);
  }
}

// kernels/cross_entropy_row.h's pass over one row of logits: loss, gradient and prediction.
template <typename T>
inline double cross_entropy_row(T* row, int64_t classes, int64_t target,
                                const CrossEntropyRowOptions& options, bf16* rounded,
                                int64_t* prediction) {
  if constexpr (std::is_same_v<T, float>) {
    return wide::cross_entropy_row(row, classes, target, options, rounded, prediction);
  } else {
    return heed::cross_entropy_row(row, classes, target, options, rounded, prediction);
  }
}

}  // namespace heed::kernels
