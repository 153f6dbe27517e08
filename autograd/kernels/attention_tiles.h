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

// The passes over a row of a tile, for f32 (built for AVX-512 too) and f64. They are the
// elementwise half of the fused attention's work, beside the products.
//
// A row's scores from its products q . k in row[0, n): (x + bias[c]) * scale (bias null: none),
// -inf where keep[c] == 0 (keep null: none) and from column `visible` on. Returns their maximum.
float score_row(float* row, int64_t n, const float* bias, const uint8_t* keep, float scale,
                int64_t visible);
double score_row(double* row, int64_t n, const double* bias, const uint8_t* keep, double scale,
                 int64_t visible);
// row[c] = exp(row[c] - m) for m >= every row[c]; returns their sum.
float exp_row(float* row, int64_t n, float m);
double exp_row(double* row, int64_t n, double m);
// Backward's row: the probabilities p[c] = exp(min(p[c] - lse, 0)) from the scores, the
// scores' gradient ds[c] = scale * p[c] * (ds[c] * z[c] - delta) from the probabilities'
// gradient (z: dropout's factors, null for none), then p[c] *= z[c] (the dropped
// probabilities). bias_sums (null: none) gains ds[c].
void gradient_row(float* p, float* ds, const float* z, int64_t n, float lse, float delta,
                  float scale, double* bias_sums);
void gradient_row(double* p, double* ds, const double* z, int64_t n, double lse, double delta,
                  double scale, double* bias_sums);
// Dropout's factors from its 16-bit draws: z[c] = draws[c] >= threshold ? inv_keep : 0 (as
// apply_dropout_draws keeps elements; a threshold above 65,535 keeps none).
void dropout_factors(const uint16_t* draws, int64_t n, uint32_t threshold, float inv_keep,
                     float* z);
void dropout_factors(const uint16_t* draws, int64_t n, uint32_t threshold, double inv_keep,
                     double* z);
// x[c] = bf16(x[c]) (as a value), what a bf16 product reads of x.
void round_row_to_bf16(float* x, int64_t n);

// Tiles pad their columns to this: tile_product's N.
constexpr int64_t kTileLanes = 16;
inline int64_t padded_to_lanes(int64_t n) {
  return (n + kTileLanes - 1) / kTileLanes * kTileLanes;
}

}  // namespace heed::kernels
