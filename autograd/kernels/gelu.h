#pragma once
// GELU and its derivative, exact (erf) and tanh-approximated, for one element: shared by the
// gelu op and the Linear fused with it.
#include <cmath>
#include <type_traits>

#include "autograd/kernels/fast_math.h"

namespace heed {

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kInvSqrt2 = 0.7071067811865476;
constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1/sqrt(2*pi)

// float takes the vectorisable approximations of fast_math.h, double the libm functions
// (the reference that gradient checks and the fast-path tests compare against). Always
// inlined: an out-of-line call in the map loops would stop them vectorising.
template <typename T>
[[gnu::always_inline]] inline T gelu_erf(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return 0.5f * x * (1.0f + fast::erf(x * static_cast<float>(kInvSqrt2)));
  } else {
    return 0.5 * x * (1 + std::erf(x * kInvSqrt2));
  }
}
template <typename T>
[[gnu::always_inline]] inline T gelu_erf_grad(T x) {
  if constexpr (std::is_same_v<T, float>) {
    float gaussian;  // e^{-x²/2}
    const float erf = fast::erf(x * static_cast<float>(kInvSqrt2), gaussian);
    return 0.5f * (1.0f + erf) + x * static_cast<float>(kInvSqrt2Pi) * gaussian;
  } else {
    const double cdf = 0.5 * (1 + std::erf(x * kInvSqrt2));
    const double pdf = kInvSqrt2Pi * std::exp(-0.5 * x * x);
    return cdf + x * pdf;
  }
}
template <typename T>
[[gnu::always_inline]] inline T gelu_tanh(T x) {
  const T inner = static_cast<T>(kSqrt2OverPi) * (x + static_cast<T>(0.044715) * x * x * x);
  if constexpr (std::is_same_v<T, float>) {
    return 0.5f * x * (1.0f + fast::tanh(inner));
  } else {
    return 0.5 * x * (1 + std::tanh(inner));
  }
}
template <typename T>
[[gnu::always_inline]] inline T gelu_tanh_grad(T x) {
  const T c = static_cast<T>(kSqrt2OverPi);
  const T inner = c * (x + static_cast<T>(0.044715) * x * x * x);
  const T dinner = c * (1 + static_cast<T>(3 * 0.044715) * x * x);
  T t, sech2;  // tanh(inner) and its derivative 1 - tanh²
  if constexpr (std::is_same_v<T, float>) {
    t = fast::tanh(inner, sech2);
  } else {
    t = std::tanh(inner);
    sech2 = 1 - t * t;
  }
  return static_cast<T>(0.5) * (1 + t) + static_cast<T>(0.5) * x * sech2 * dinner;
}

}  // namespace heed
