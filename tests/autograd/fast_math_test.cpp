// The f32 approximations behind the fast GELU, softmax and cross-entropy, measured against
// double-precision libm over dense grids. The bounds come from the approximations (Taylor
// truncation below float precision for exp, Abramowitz & Stegun's 1.5e-7 for erf) plus the
// rounding of their float evaluation.
#include "autograd/kernels/fast_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace heed;

namespace {
// Every float step of 1e-4 in [-12, 12]: covers the polynomial's whole range and both tails.
template <typename F>
void for_grid(F&& f) {
  for (int i = -120000; i <= 120000; ++i) f(static_cast<float>(i) * 1e-4f);
}
}  // namespace

TEST(FastMath, ExpMinusAbsIsWithinAFewUlps) {
  double worst = 0.0;
  for_grid([&](float x) {
    const double exact = std::exp(-std::fabs(static_cast<double>(x)));
    worst = std::max(worst, std::fabs(fast::exp_minus_abs(x) - exact) / exact);
  });
  // And the whole range down to the flush, where 2^n reaches the smallest exponents.
  for (int i = 0; i < 87000; ++i) {
    const float x = static_cast<float>(i) * 1e-3f;
    const double exact = std::exp(-static_cast<double>(x));
    worst = std::max(worst, std::fabs(fast::exp_minus_abs(x) - exact) / exact);
  }
  EXPECT_LT(worst, 3.0 * std::numeric_limits<float>::epsilon());
  EXPECT_EQ(fast::exp_minus_abs(0.0f), 1.0f);
  EXPECT_EQ(fast::exp_minus_abs(-0.0f), 1.0f);
  // Just inside the cap the result is still a normal float; from e^-87 on it is 0.
  const double exact = std::exp(-static_cast<double>(86.9f));
  EXPECT_NEAR(fast::exp_minus_abs(86.9f), exact,
              3.0 * std::numeric_limits<float>::epsilon() * exact);
  EXPECT_EQ(fast::exp_minus_abs(87.0f), 0.0f);
  EXPECT_EQ(fast::exp_minus_abs(1e30f), 0.0f);
  EXPECT_EQ(fast::exp_minus_abs(-std::numeric_limits<float>::infinity()), 0.0f);
  // A NaN stays a NaN: softmax or a loss over it must not hide it.
  EXPECT_TRUE(std::isnan(fast::exp_minus_abs(std::numeric_limits<float>::quiet_NaN())));
}

TEST(FastMath, ErfIsWithinAbramowitzStegunBoundPlusRounding) {
  double worst = 0.0;
  for_grid([&](float x) {
    worst = std::max(worst, std::fabs(fast::erf(x) - std::erf(static_cast<double>(x))));
  });
  // 1.5e-7 is the formula's own error; evaluating t, the polynomial and 1 - poly·e^{-x²} in
  // float rounds each step by half an ulp of numbers up to 1, a few ulps in all.
  EXPECT_LT(worst, 1.5e-7 + 4.0 * std::numeric_limits<float>::epsilon());
  EXPECT_EQ(fast::erf(0.0f), 0.0f);
  EXPECT_EQ(fast::erf(30.0f), 1.0f);
  EXPECT_EQ(fast::erf(-30.0f), -1.0f);
  EXPECT_TRUE(std::isnan(fast::erf(std::numeric_limits<float>::quiet_NaN())));
}

TEST(FastMath, ErfHandsBackTheGaussianItUsed) {
  for (float x : {-3.0f, -0.5f, 0.0f, 0.25f, 2.0f}) {
    float gaussian = -1.0f;
    fast::erf(x, gaussian);
    EXPECT_NEAR(gaussian, std::exp(-static_cast<double>(x) * x), 2e-7);
  }
}

TEST(FastMath, TanhIsWithinAFewUlpsAbsolute) {
  double worst = 0.0;
  for_grid([&](float x) {
    worst = std::max(worst, std::fabs(fast::tanh(x) - std::tanh(static_cast<double>(x))));
  });
  EXPECT_LT(worst, 3.0 * std::numeric_limits<float>::epsilon());
  EXPECT_EQ(fast::tanh(0.0f), 0.0f);
  EXPECT_EQ(fast::tanh(50.0f), 1.0f);
  EXPECT_EQ(fast::tanh(-50.0f), -1.0f);
}
