#pragma once
// The small matrix products inside a tile of fused attention (ops/flash_attention.cpp): a
// query tile against a key tile, probabilities against values, and backward's four products.
// Tiles are a few dozen rows by a few dozen to a few hundred columns, so a oneDNN call per
// tile would cost about what the product does; these are register-blocked loops instead.
#include <cstdint>

namespace heed::kernels {

// c[m * ldc + n] (+)= sum_k a[m * a_m + k * a_k] * b[k * ldb + n] for m < M, n < N, k < K:
// A read through any strides (so a transposed tile costs nothing), B and C dense rows. N must
// be a multiple of 16 (tiles pad their columns with zeros). `accumulate`: add to C rather than
// overwrite it. Each c element sums its K terms in order k = 0, 1, ..., so an element gets the
// same bits whatever tile it sits in (backward's recomputed scores equal forward's).
void tile_product(int64_t M, int64_t N, int64_t K, const float* a, int64_t a_m, int64_t a_k,
                  const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate);
// The f64 reference (gradient checks): the same sums by plain loops.
void tile_product(int64_t M, int64_t N, int64_t K, const double* a, int64_t a_m, int64_t a_k,
                  const double* b, int64_t ldb, double* c, int64_t ldc, bool accumulate);

// Tiles pad their columns to this: tile_product's N.
constexpr int64_t kTileLanes = 16;
inline int64_t padded_to_lanes(int64_t n) {
  return (n + kTileLanes - 1) / kTileLanes * kTileLanes;
}

}  // namespace heed::kernels
