#pragma once
// LayerNorm's row kernels, shared by layer_norm and the fused residual + dropout + LayerNorm so
// that both give the same bits. Files that include this must be compiled with the flags
// autograd/CMakeLists.txt gives ops/layer_norm.cpp (the row sums are reassociated).
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "autograd/kernels/parallel.h"

namespace heed {

// out = (x - mean) * rstd * w + b over one row of `width`; mean_rstd receives mean and rstd.
template <typename T>
inline void layer_norm_row(const T* x, int64_t width, const T* w, const T* b, double eps, T* out,
                           T* mean_rstd) {
  T sum = 0;
  for (int64_t c = 0; c < width; ++c) sum += x[c];
  const T mean = sum / static_cast<T>(width);
  T sq = 0;
  for (int64_t c = 0; c < width; ++c) sq += (x[c] - mean) * (x[c] - mean);
  const T rstd = T(1) / std::sqrt(sq / static_cast<T>(width) + static_cast<T>(eps));
  for (int64_t c = 0; c < width; ++c) out[c] = (x[c] - mean) * rstd * w[c] + b[c];
  mean_rstd[0] = mean;
  mean_rstd[1] = rstd;
}

// LayerNorm's backward over `rows` rows of `width`: gx from the output gradient g, the saved
// input x and stats ([rows, 2]: mean, rstd); gw and gb (zeroed by the caller) receive the sums
// over rows, through per-thread partials in double added in thread order. after_row(r) runs on row
// r's thread once its gx is written, for a fused op's own per-row work.
template <typename T, typename AfterRow>
void layer_norm_backward_rows(const T* x, const T* g, const T* w, const T* stats, int64_t rows,
                              int64_t width, T* gx, T* gw, T* gb, AfterRow after_row) {
  const bool parallel = rows * width > kParallelGrain;
  const int threads = parallel ? omp_get_max_threads() : 1;
  std::vector<double> partial(static_cast<size_t>(threads) * 2 * width, 0.0);
#pragma omp parallel num_threads(threads)
  {
    double* pw = partial.data() + static_cast<size_t>(omp_get_thread_num()) * 2 * width;
    double* pb = pw + width;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * width;
      const T* gr = g + r * width;
      T* out = gx + r * width;
      const T mean = stats[2 * r], rstd = stats[2 * r + 1];
      T sum_dy = 0, sum_dy_xhat = 0;
      for (int64_t c = 0; c < width; ++c) {
        const T xhat = (xr[c] - mean) * rstd;
        const T dy = gr[c] * w[c];
        sum_dy += dy;
        sum_dy_xhat += dy * xhat;
        pw[c] += gr[c] * xhat;
        pb[c] += gr[c];
      }
      const T inv_n = T(1) / static_cast<T>(width);
      for (int64_t c = 0; c < width; ++c) {
        const T xhat = (xr[c] - mean) * rstd;
        out[c] = rstd * (gr[c] * w[c] - inv_n * sum_dy - xhat * inv_n * sum_dy_xhat);
      }
      after_row(r);
    }
  }
  for (int t = 0; t < threads; ++t) {
    const double* pw = partial.data() + static_cast<size_t>(t) * 2 * width;
    for (int64_t c = 0; c < width; ++c) {
      gw[c] += static_cast<T>(pw[c]);
      gb[c] += static_cast<T>(pw[width + c]);
    }
  }
}

}  // namespace heed
