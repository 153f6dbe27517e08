// tile_product: C (+)= A . B over tiles, in blocks of up to 4 rows by 64 columns held in
// registers (16 AVX-512 vectors of sums, 4 of B's row), each A element broadcast once per block
// row. Written with GCC's vector types rather than left to the auto-vectoriser: the block has to
// stay in registers, which a plain loop nest does not promise. Built for AVX-512 and for the
// baseline, picked at load time as kernels/wide_loops.cpp's loops are.
#include "autograd/kernels/attention_tiles.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/row_reduce.h"
#include "base/dtype.h"

#define HEED_WIDE [[gnu::target_clones("arch=x86-64-v4", "default")]]

namespace heed::kernels {
namespace {

// Sixteen floats: one AVX-512 register (two AVX2 ones in the baseline build). The helpers that
// pass them by value are always inlined, so GCC's note that such an argument's ABI differs
// without AVX-512 (-Wpsabi) concerns no call that exists.
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float Lanes __attribute__((vector_size(64)));

[[gnu::always_inline]] inline Lanes load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(float* p, Lanes v) {
  std::memcpy(p, &v, sizeof v);
}

// Rows [0, R) by vectors [0, V) of C.
template <int R, int V>
[[gnu::always_inline]] inline void block(int64_t K, const float* a, int64_t a_m, int64_t a_k,
                                         const float* b, int64_t ldb, float* c, int64_t ldc,
                                         bool accumulate) {
  Lanes sums[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) sums[r][v] = accumulate ? load(c + r * ldc + 16 * v) : Lanes{};
  }
  for (int64_t k = 0; k < K; ++k) {
    Lanes row[V];
    for (int v = 0; v < V; ++v) row[v] = load(b + k * ldb + 16 * v);
    for (int r = 0; r < R; ++r) {
      const float x = a[r * a_m + k * a_k];
      for (int v = 0; v < V; ++v) sums[r][v] += x * row[v];
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) store(c + r * ldc + 16 * v, sums[r][v]);
  }
}

template <int R>
[[gnu::always_inline]] inline void rows_block(int64_t vectors, int64_t K, const float* a,
                                              int64_t a_m, int64_t a_k, const float* b, int64_t ldb,
                                              float* c, int64_t ldc, bool accumulate) {
  switch (vectors) {
    case 1:
      return block<R, 1>(K, a, a_m, a_k, b, ldb, c, ldc, accumulate);
    case 2:
      return block<R, 2>(K, a, a_m, a_k, b, ldb, c, ldc, accumulate);
    case 3:
      return block<R, 3>(K, a, a_m, a_k, b, ldb, c, ldc, accumulate);
    default:
      return block<R, 4>(K, a, a_m, a_k, b, ldb, c, ldc, accumulate);
  }
}

template <typename T>
[[gnu::always_inline]] inline T score_row_loop(T* __restrict row, int64_t n,
                                               const T* __restrict bias,
                                               const uint8_t* __restrict keep, T scale,
                                               int64_t visible) {
  constexpr T neg_inf = -std::numeric_limits<T>::infinity();
  if (bias) {
    for (int64_t c = 0; c < n; ++c) row[c] = (row[c] + bias[c]) * scale;
  } else {
    for (int64_t c = 0; c < n; ++c) row[c] *= scale;
  }
  if (keep) {
    for (int64_t c = 0; c < n; ++c) row[c] = keep[c] ? row[c] : neg_inf;
  }
  for (int64_t c = std::max<int64_t>(visible, 0); c < n; ++c) row[c] = neg_inf;
  return rows::max(static_cast<const T*>(row), n, neg_inf);
}

template <typename T>
[[gnu::always_inline]] inline T exp_row_loop(T* row, int64_t n, T m) {
  for (int64_t c = 0; c < n; ++c) row[c] = fast::exp_nonpositive<T>(row[c] - m);
  return rows::sum(static_cast<const T*>(row), n);
}

template <typename T>
[[gnu::always_inline]] inline void gradient_row_loop(T* __restrict p, T* __restrict ds,
                                                     const T* __restrict z, int64_t n, T lse,
                                                     T delta, T scale,
                                                     double* __restrict bias_sums) {
  // score <= lse in exact arithmetic; the min keeps exp_nonpositive in its domain.
  for (int64_t c = 0; c < n; ++c) p[c] = fast::exp_nonpositive<T>(std::min(p[c] - lse, T(0)));
  if (z) {
    for (int64_t c = 0; c < n; ++c) {
      ds[c] = scale * p[c] * (ds[c] * z[c] - delta);
      p[c] *= z[c];
    }
  } else {
    for (int64_t c = 0; c < n; ++c) ds[c] = scale * p[c] * (ds[c] - delta);
  }
  if (bias_sums) {
    for (int64_t c = 0; c < n; ++c) bias_sums[c] += ds[c];
  }
}

template <typename T>
[[gnu::always_inline]] inline void dropout_factors_loop(const uint16_t* __restrict draws, int64_t n,
                                                        uint32_t threshold, T inv_keep,
                                                        T* __restrict z) {
  if (threshold > UINT16_MAX) {
    for (int64_t c = 0; c < n; ++c) z[c] = 0;
    return;
  }
  const uint16_t limit = static_cast<uint16_t>(threshold);
  for (int64_t c = 0; c < n; ++c) z[c] = draws[c] >= limit ? inv_keep : T(0);
}

}  // namespace

HEED_WIDE void dropout_factors(const uint16_t* draws, int64_t n, uint32_t threshold, float inv_keep,
                               float* z) {
  dropout_factors_loop(draws, n, threshold, inv_keep, z);
}
void dropout_factors(const uint16_t* draws, int64_t n, uint32_t threshold, double inv_keep,
                     double* z) {
  dropout_factors_loop(draws, n, threshold, inv_keep, z);
}

HEED_WIDE float score_row(float* row, int64_t n, const float* bias, const uint8_t* keep,
                          float scale, int64_t visible) {
  return score_row_loop(row, n, bias, keep, scale, visible);
}
double score_row(double* row, int64_t n, const double* bias, const uint8_t* keep, double scale,
                 int64_t visible) {
  return score_row_loop(row, n, bias, keep, scale, visible);
}

HEED_WIDE float exp_row(float* row, int64_t n, float m) {
  return exp_row_loop(row, n, m);
}
double exp_row(double* row, int64_t n, double m) {
  return exp_row_loop(row, n, m);
}

HEED_WIDE void gradient_row(float* p, float* ds, const float* z, int64_t n, float lse, float delta,
                            float scale, double* bias_sums) {
  gradient_row_loop(p, ds, z, n, lse, delta, scale, bias_sums);
}
void gradient_row(double* p, double* ds, const double* z, int64_t n, double lse, double delta,
                  double scale, double* bias_sums) {
  gradient_row_loop(p, ds, z, n, lse, delta, scale, bias_sums);
}

HEED_WIDE void round_row_to_bf16(float* x, int64_t n) {
  for (int64_t c = 0; c < n; ++c) {
    x[c] = std::bit_cast<float>(static_cast<uint32_t>(bf16_bits_of(x[c])) << 16);
  }
}

HEED_WIDE void tile_product(int64_t M, int64_t N, int64_t K, const float* a, int64_t a_m,
                            int64_t a_k, const float* b, int64_t ldb, float* c, int64_t ldc,
                            bool accumulate) {
  for (int64_t n0 = 0; n0 < N; n0 += 64) {
    const int64_t vectors = (N - n0 < 64 ? N - n0 : 64) / 16;
    for (int64_t m0 = 0; m0 < M; m0 += 4) {
      const float* am = a + m0 * a_m;
      float* cm = c + m0 * ldc + n0;
      switch (M - m0 < 4 ? M - m0 : 4) {
        case 1:
          rows_block<1>(vectors, K, am, a_m, a_k, b + n0, ldb, cm, ldc, accumulate);
          break;
        case 2:
          rows_block<2>(vectors, K, am, a_m, a_k, b + n0, ldb, cm, ldc, accumulate);
          break;
        case 3:
          rows_block<3>(vectors, K, am, a_m, a_k, b + n0, ldb, cm, ldc, accumulate);
          break;
        default:
          rows_block<4>(vectors, K, am, a_m, a_k, b + n0, ldb, cm, ldc, accumulate);
      }
    }
  }
}

void tile_product(int64_t M, int64_t N, int64_t K, const double* a, int64_t a_m, int64_t a_k,
                  const double* b, int64_t ldb, double* c, int64_t ldc, bool accumulate) {
  for (int64_t m = 0; m < M; ++m) {
    double* cm = c + m * ldc;
    if (!accumulate) {
      for (int64_t n = 0; n < N; ++n) cm[n] = 0.0;
    }
    for (int64_t k = 0; k < K; ++k) {
      const double x = a[m * a_m + k * a_k];
      for (int64_t n = 0; n < N; ++n) cm[n] += x * b[k * ldb + n];
    }
  }
}

}  // namespace heed::kernels
