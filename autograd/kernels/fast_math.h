#pragma once
// Branch-free float versions of exp, erf and tanh for the f32 fast path. libm's expf/erff/
// tanhf are scalar calls that keep the compiler from vectorising a loop over them; these
// inline into the loop, so GELU, softmax and cross-entropy run 8 lanes at a time. exp is
// within a few float ulps (relative); erf and tanh within a few ulps of 1 (absolute), which
// is what GELU needs, though not a relative bound near 0 or in erf's tails.
// tests/autograd/fast_math_test.cpp measures them against double libm; the f64 reference
// path keeps libm.
#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace heed::fast {

// e^{-|x|}: -|x| = n·ln2 + r with |r| <= ln2/2, e^r by its Taylor series to r^7
// (truncation error below 1e-8 relative), 2^n put straight into the exponent bits. For
// |x| >= 87, where 2^n would leave the normal floats, the result is 0 (e^-87 is 1.6e-38);
// a NaN comes back as itself, so that a NaN loss still shows. Clamps and selects work on
// the bits as integers: a float clamp before the polynomial lets GCC split the loop into
// branches (one per clamped constant), which stops vectorisation.
[[gnu::always_inline]] inline float exp_minus_abs(float x) {
  constexpr int32_t kBitsOf87 = 0x42AE0000;   // 87.0f
  constexpr int32_t kBitsOfInf = 0x7F800000;  // above: NaN
  const int32_t bits = std::bit_cast<int32_t>(std::fabs(x));
  const float y = -std::bit_cast<float>(std::min(bits, kBitsOf87));
  // Round to nearest by adding and subtracting 1.5·2^23 (std::floor would not vectorise).
  constexpr float kRound = 12582912.0f;
  const float n = (y * 1.44269504088896341f + kRound) - kRound;
  // ln2 split in two so that n·ln2_hi is exact in float.
  float r = y - n * 0.693145751953125f;
  r = r - n * 1.42860682030941723212e-6f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t biased = static_cast<int32_t>(n) + 127;
  const int32_t result = std::bit_cast<int32_t>(p * std::bit_cast<float>(biased << 23));
  const int32_t in_range = -static_cast<int32_t>(bits < kBitsOf87);  // all ones or 0
  const int32_t nan = -static_cast<int32_t>(bits > kBitsOfInf);
  return std::bit_cast<float>((result & in_range) | (std::bit_cast<int32_t>(x) & nan));
}

// e^x for x <= 0 (softmax and cross-entropy shift by the row's maximum, so every exponent
// is): fast::exp_minus_abs for float, libm for the f64 reference path. A positive x would
// give e^{-x} on float: the precondition is checked in debug builds.
template <typename T>
[[gnu::always_inline]] inline T exp_nonpositive(T x) {
  assert(!(x > 0));
  if constexpr (std::is_same_v<T, float>) {
    return exp_minus_abs(x);
  } else {
    return std::exp(x);
  }
}

// erf(x) by Abramowitz & Stegun 7.1.26 (absolute error <= 1.5e-7), the form oneDNN's
// gelu_erf uses as well; `gaussian` receives e^{-x²}, which GELU's derivative needs too.
[[gnu::always_inline]] inline float erf(float x, float& gaussian) {
  const float a = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float poly = 1.061405429f;
  poly = poly * t - 1.453152027f;
  poly = poly * t + 1.421413741f;
  poly = poly * t - 0.284496736f;
  poly = poly * t + 0.254829592f;
  poly = poly * t;
  gaussian = exp_minus_abs(a * a);
  return std::copysign(1.0f - poly * gaussian, x);
}

[[gnu::always_inline]] inline float erf(float x) {
  float gaussian;
  return fast::erf(x, gaussian);
}

// tanh(x) = sign(x)·(1 - e) / (1 + e) with e = e^{-2|x|}. Its error is absolute (~1e-7),
// not relative, near 0: fine inside GELU, not a general tanh. `sech2` receives
// 1 - tanh² = 4e / (1 + e)², computed without the cancellation of 1 - t·t near |t| = 1.
[[gnu::always_inline]] inline float tanh(float x, float& sech2) {
  const float e = exp_minus_abs(2.0f * x);
  const float inv = 1.0f / (1.0f + e);
  sech2 = 4.0f * e * inv * inv;
  return std::copysign((1.0f - e) * inv, x);
}

[[gnu::always_inline]] inline float tanh(float x) {
  float sech2;
  return fast::tanh(x, sech2);
}

}  // namespace heed::fast
