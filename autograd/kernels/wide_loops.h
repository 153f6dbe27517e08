#pragma once
// Hot f32 loops built for AVX-512 as well as for the build's baseline (AVX2): the CPU picks
// its version when the program loads (wide_loops.cpp). Each is a loop written once (inline in
// a kernels/ header or here) whose arithmetic leaves the compiler no choice that differs
// between the two builds, so both versions give the same bits (tests/autograd/wide_loops_test.cpp).
#include <cstdint>

#include "autograd/kernels/cross_entropy_row.h"
#include "base/dtype.h"

namespace heed::wide {

// out[i] = gelu(h[i]), exact (erf) or tanh-approximated.
void gelu(bool tanh, const float* h, int64_t n, float* out);

// out[i] = g[i] * gelu'(h[i]), h in f32 or its bf16 rounding; out may be g.
void gelu_gradient(bool tanh, const float* g, const float* h, int64_t n, float* out);
void gelu_gradient(bool tanh, const float* g, const bf16* h, int64_t n, float* out);

// dst[i] = bf16(src[i]), as round_to_bf16.
void round_to_bf16(const float* src, int64_t n, bf16* dst);

// sums[i] += row[i] in double.
void add_to_sums(const float* row, int64_t n, double* sums);

// out[i] = x[i] * scale where keep is null or keep[i] != 0, else -inf: attention's scores
// scaled and masked for softmax_row. out must not overlap x or keep.
void scale_and_mask(const float* x, const uint8_t* keep, float scale, int64_t n, float* out);

// row[0, limit) holds scaled, masked scores (-inf where removed): writes their softmax over
// [0, limit) and zeros over [limit, width). Returns false, with the row all zeros, when every
// score is -inf (no key to attend to).
bool softmax_row(float* row, int64_t limit, int64_t width);

// kernels/dropout_draws.h's apply_dropout_draws and apply_keep_bits for f32.
void apply_dropout_draws(const uint16_t* draws, int64_t count, uint32_t threshold, float scale,
                         const float* in, float* out, uint8_t* keep_bits);
void apply_keep_bits(const uint8_t* keep_bits, int64_t count, float scale, const float* g,
                     float* out);

// kernels/layer_norm_rows.h's rows of LayerNorm and of its backward, for f32 (gx may be g).
void layer_norm_row(const float* x, const float* w, const float* b, int64_t width, float eps,
                    float* out, float* mean, float* rstd);
void layer_norm_backward_row(const float* x, const float* g, const float* w, int64_t width,
                             float mean, float rstd, float* gx, double* sum_w, double* sum_b);

// One row of linear_cross_entropy's logits: kernels/cross_entropy_row.h's cross_entropy_row.
double cross_entropy_row(float* row, int64_t classes, int64_t target,
                         const CrossEntropyRowOptions& options, bf16* rounded, int64_t* prediction);

}  // namespace heed::wide
