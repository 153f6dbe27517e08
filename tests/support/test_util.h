#pragma once
// Helpers shared by the test suites.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "autograd/random.h"

namespace heed::testing {

// A random f64 leaf that requires grad, values from N(0, 1) (or uniform in [low, high)).
inline Tensor param(const Shape& shape, uint64_t seed) {
  Generator g(seed);
  Tensor t = randn(shape, g, DType::f64);
  t.set_requires_grad(true);
  return t;
}

inline Tensor positive_param(const Shape& shape, uint64_t seed) {
  Generator g(seed);
  Tensor t = uniform(shape, g, 0.5, 2.0, DType::f64);
  t.set_requires_grad(true);
  return t;
}

inline void expect_gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                             const std::vector<Tensor>& inputs) {
  GradcheckResult r = gradcheck(f, inputs);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_GT(r.checked, 0);
}

// A tensor of N(0, 1) values of `dtype` (no grad), the same for the same seed.
inline Tensor random_tensor(const Shape& shape, uint64_t seed, DType dtype) {
  Generator g(seed);
  return randn(shape, g, dtype);
}

// For fused ops that promise the unfused path's results exactly.
inline void expect_same_bits(const Tensor& a, const Tensor& b, const char* what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>()) << what;
}

// The larger of a running worst error and a new one, NaN once either is NaN: std::max(worst, d)
// passes over a NaN d, so an error that is NaN would never fail the bound it is compared with.
inline double worse_of(double worst, double d) {
  return std::isnan(worst) || std::isnan(d) ? std::numeric_limits<double>::quiet_NaN()
                                            : std::max(worst, d);
}

// Largest |a - b| / max(1, |b|) over all elements; infinite where one is NaN and the other is
// not (std::max would pass over a NaN difference, so a NaN would never fail a bound).
inline double max_relative_error(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  EXPECT_EQ(x.size(), y.size());
  double worst = 0.0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) {
      if (std::isnan(x[i]) != std::isnan(y[i])) return std::numeric_limits<double>::infinity();
      continue;
    }
    worst = std::max(worst, std::abs(x[i] - y[i]) / std::max(1.0, std::abs(y[i])));
  }
  return worst;
}

// Sets the matrix-product precision for a scope and puts f32 back however the scope ends, so
// that a failing test does not leave the tests after it in bf16.
class MatmulPrecisionScope {
 public:
  explicit MatmulPrecisionScope(MatmulPrecision precision) { set_matmul_precision(precision); }
  ~MatmulPrecisionScope() { set_matmul_precision(MatmulPrecision::f32); }
  MatmulPrecisionScope(const MatmulPrecisionScope&) = delete;
  MatmulPrecisionScope& operator=(const MatmulPrecisionScope&) = delete;
};

}  // namespace heed::testing
