#pragma once
// Helpers shared by the optimizer tests.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "autograd/random.h"
#include "optim/optimizer.h"
#include "support/test_util.h"

namespace heed::testing {

// A leaf that requires grad holding `values`.
template <typename T>
Tensor leaf(const std::vector<T>& values, const Shape& shape) {
  Tensor t = from_vector<T>(values, shape);
  t.set_requires_grad(true);
  return t;
}

inline void set_grad(const Tensor& p, const Tensor& g) {
  Tensor(p).set_grad(g.clone());
}

// True when both tensors hold the same bits.
inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.raw_data(), y.raw_data(), x.numel() * dtype_size(x.dtype())) == 0;
}

// Largest |a - b|.
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  EXPECT_EQ(x.size(), y.size());
  double worst = 0.0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    worst = heed::testing::worse_of(worst, std::abs(x[i] - y[i]));
  }
  return worst;
}

// A path in the test's temporary directory.
inline std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "heed_optim_" + name;
}

}  // namespace heed::testing
