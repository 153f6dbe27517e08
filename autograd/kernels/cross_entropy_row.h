#pragma once
// The loss of one row of logits, which cross_entropy and linear_cross_entropy share, and
// linear_cross_entropy's pass over a row: loss, gradient and prediction.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/row_reduce.h"
#include "base/dtype.h"

namespace heed {

// One row's cross-entropy from its log-sum-exp, its logit at the target and the sum of its
// logits: (1 - ε)·(lse - x[target]) + ε·(lse - mean(x)), PyTorch's label smoothing ε.
template <typename T>
double smoothed_row_loss(T lse, T at_target, T sum_x, int64_t classes, double smoothing) {
  const double nll = static_cast<double>(lse - at_target);
  const double smooth = static_cast<double>(lse) - static_cast<double>(sum_x) / classes;
  return (1.0 - smoothing) * nll + smoothing * smooth;
}

struct CrossEntropyRowOptions {
  int64_t ignore_index = -100;
  double smoothing = 0.0;
  double scale = 0.0;  // 1 / the number of targets that count: the mean's factor
  bool gradient = false;
};

// One row of logits: returns its loss (0 for an ignored target) and, with o.gradient, writes
// the row's gradient, scale * (softmax - smoothing / classes - (1 - smoothing) at the target)
// (zeros for an ignored target), over the row, or only its bf16 rounding to `rounded` when
// that is given (what bf16 products read). `prediction`, if given, receives the row's arg max
// (its first largest logit, as argmax()).
template <typename T>
[[gnu::always_inline]] inline double cross_entropy_row(T* row, int64_t classes, int64_t target,
                                                       const CrossEntropyRowOptions& o,
                                                       bf16* rounded, int64_t* prediction) {
  const bool ignored = target == o.ignore_index;
  const T m = rows::max(row, classes, -std::numeric_limits<T>::infinity());
  if (prediction != nullptr) {
    *prediction = 0;
    for (int64_t c = 0; c < classes; ++c) {
      if (row[c] == m) {
        *prediction = c;
        break;
      }
    }
  }
  const T sum_x = o.smoothing > 0 ? rows::sum(row, classes) : T(0);
  const T at_target = ignored ? T(0) : row[target];
  T s;
  if (o.gradient && !ignored) {
    // The exponentials are kept in the row, so the gradient's pass needs no second exp.
    s = rows::sum_of<T>(classes, [row, m](int64_t c) {
      const T e = fast::exp_nonpositive(row[c] - m);
      row[c] = e;
      return e;
    });
  } else {
    s = rows::sum_exp(row, m, classes);
  }
  if (o.gradient && ignored) {
    if (rounded != nullptr) {
      std::fill(rounded, rounded + classes, bf16{});
    } else {
      std::fill(row, row + classes, T(0));
    }
  }
  if (ignored) return 0.0;
  const double loss = smoothed_row_loss<T>(m + std::log(s), at_target, sum_x, classes, o.smoothing);
  if (o.gradient) {
    const T factor = static_cast<T>(o.scale / static_cast<double>(s));
    const T off = static_cast<T>(o.scale * o.smoothing / static_cast<double>(classes));
    const T at_target_factor = static_cast<T>(o.scale * (1.0 - o.smoothing));
    if constexpr (std::is_same_v<T, float>) {
      if (rounded != nullptr) {
        for (int64_t c = 0; c < classes; ++c) rounded[c].bits = bf16_bits_of(row[c] * factor - off);
        rounded[target].bits = bf16_bits_of(row[target] * factor - off - at_target_factor);
        return loss;
      }
    }
    for (int64_t c = 0; c < classes; ++c) row[c] = row[c] * factor - off;
    row[target] -= at_target_factor;
  }
  return loss;
}

}  // namespace heed
