#pragma once
// Reductions along a row with kLanes independent partial results. GCC keeps a plain
// `total += x[c]` in source order, one element at a time (float addition is not associative);
// partial results it may keep in separate vector lanes, so these run a vector at a time.
// (-fassociative-math would do it too, but it folds kernels/fast_math.h's rounding trick.)
// The order of additions is fixed by the row's length alone, not by the thread count.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "autograd/kernels/fast_math.h"

namespace heed::rows {

constexpr int64_t kLanes = 16;

// f(c) summed over c in [0, n).
template <typename T, typename F>
[[gnu::always_inline]] inline T sum_of(int64_t n, F f) {
  T acc[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) acc[j] += f(c + j);
  }
  T total = 0;
  for (; c < n; ++c) total += f(c);
  for (int64_t j = 0; j < kLanes; ++j) total += acc[j];
  return total;
}

template <typename T>
[[gnu::always_inline]] inline T sum(const T* x, int64_t n) {
  return sum_of<T>(n, [x](int64_t c) { return x[c]; });
}

template <typename T>
[[gnu::always_inline]] inline T dot(const T* x, const T* y, int64_t n) {
  return sum_of<T>(n, [x, y](int64_t c) { return x[c] * y[c]; });
}

// sum of e^(x[c] - m) for m >= every x[c].
template <typename T>
[[gnu::always_inline]] inline T sum_exp(const T* x, T m, int64_t n) {
  return sum_of<T>(n, [x, m](int64_t c) { return fast::exp_nonpositive(x[c] - m); });
}

// The largest x[c] (`lowest` for an empty row). NaNs are passed over, as std::max(m, x)
// passes over a NaN x; the softmax of such a row is NaN anyway, through its exp.
template <typename T>
[[gnu::always_inline]] inline T max(const T* x, int64_t n, T lowest) {
  if constexpr (std::is_same_v<T, float>) {
    // GCC 12 at -O3 keeps the array form below one element at a time for float (a scalar
    // maxss per element, 3-5x slower over rows of 128 and 8,192; a 16-lane vector type is
    // worse still on AVX2): two 8-lane vectors, one register each in the AVX-512 and AVX2
    // builds. Lanes 0-7 and 8-15 of the array, combined in its order: the same bits.
    using Lanes8 = float __attribute__((vector_size(32)));
    Lanes8 a = {lowest, lowest, lowest, lowest, lowest, lowest, lowest, lowest}, b = a;
    int64_t c = 0;
    for (; c + 16 <= n; c += 16) {
      Lanes8 u, v;
      std::memcpy(&u, x + c, sizeof u);
      std::memcpy(&v, x + c + 8, sizeof v);
      a = u > a ? u : a;
      b = v > b ? v : b;
    }
    float m = lowest;
    for (; c < n; ++c) m = std::max(m, x[c]);
    for (int j = 0; j < 8; ++j) m = std::max(m, a[j]);
    for (int j = 0; j < 8; ++j) m = std::max(m, b[j]);
    return m;
  } else {
    T acc[kLanes];
    for (int64_t j = 0; j < kLanes; ++j) acc[j] = lowest;
    int64_t c = 0;
    for (; c + kLanes <= n; c += kLanes) {
      for (int64_t j = 0; j < kLanes; ++j) acc[j] = x[c + j] > acc[j] ? x[c + j] : acc[j];
    }
    T m = lowest;
    for (; c < n; ++c) m = std::max(m, x[c]);
    for (int64_t j = 0; j < kLanes; ++j) m = std::max(m, acc[j]);
    return m;
  }
}

// row[0, limit) holds scaled, masked scores (-inf where removed): writes their softmax over
// [0, limit) and zeros over [limit, width). Returns false, with the row all zeros, when every
// score is -inf (no key to attend to).
template <typename T>
[[gnu::always_inline]] inline bool softmax_in_place(T* row, int64_t limit, int64_t width) {
  constexpr T neg_inf = -std::numeric_limits<T>::infinity();
  const T m = max(static_cast<const T*>(row), limit, neg_inf);
  if (m == neg_inf) {
    std::fill(row, row + width, T(0));
    return false;
  }
  for (int64_t c = 0; c < limit; ++c) row[c] = fast::exp_nonpositive(row[c] - m);
  const T inv = T(1) / sum(static_cast<const T*>(row), limit);
  for (int64_t c = 0; c < limit; ++c) row[c] *= inv;
  std::fill(row + limit, row + width, T(0));
  return true;
}

}  // namespace heed::rows
