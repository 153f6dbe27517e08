// The row reductions the softmax and cross-entropy kernels use, and the op-time table behind
// HEED_PROFILE.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/kernels/row_reduce.h"
#include "autograd/profile.h"

using namespace heed;

TEST(RowReduce, SumDotMaxAndSumExpAgreeWithPlainLoopsForEveryLength) {
  // Lengths below, at and around multiples of the lane count, so every tail is covered.
  for (int64_t n : {0, 1, 5, 15, 16, 17, 31, 32, 33, 100, 128}) {
    std::vector<double> x(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = std::sin(0.7 * static_cast<double>(i)) * 3.0;
      y[i] = std::cos(0.3 * static_cast<double>(i));
    }
    double sum = 0, dot = 0, sum_exp = 0, max = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
    for (int64_t i = 0; i < n; ++i) {
      sum += x[i];
      dot += x[i] * y[i];
      sum_exp += std::exp(x[i] - max);
    }
    EXPECT_NEAR(rows::sum(x.data(), n), sum, 1e-12) << n;
    EXPECT_NEAR(rows::dot(x.data(), y.data(), n), dot, 1e-12) << n;
    EXPECT_EQ(rows::max(x.data(), n, -std::numeric_limits<double>::infinity()), max) << n;
    if (n > 0) {
      EXPECT_NEAR(rows::sum_exp(x.data(), max, n), sum_exp, 1e-12) << n;
    }
  }
}

TEST(RowReduce, MaxPassesOverNaNAndKeepsTheLargest) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x(40, 1.0);
  x[3] = 9.0;
  x[19] = nan;  // in the same lane as x[3], after it
  x[35] = nan;  // in the tail
  EXPECT_EQ(rows::max(x.data(), 40, -std::numeric_limits<double>::infinity()), 9.0);
}

TEST(Profile, OpTimesAddUpPerNameLongestFirst) {
  reset_op_times();
  record_op_time("linear", 0.002);
  record_op_time("gelu", 0.001);
  record_op_time("linear", 0.003);
  const std::vector<OpTime> ops = op_times();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "linear");
  EXPECT_NEAR(ops[0].seconds, 0.005, 1e-15);
  EXPECT_EQ(ops[0].calls, 2);
  EXPECT_EQ(ops[1].name, "gelu");
  const std::string report = op_time_report();
  EXPECT_NE(report.find("linear"), std::string::npos);
  EXPECT_NE(report.find("83.3%"), std::string::npos);  // 5 of 6 ms
  reset_op_times();
  EXPECT_TRUE(op_times().empty());
}
