// The f32 approximations behind the fast GELU, measured against double-precision libm over
// a dense grid: the bounds are what the approximations promise (Abramowitz & Stegun's
// 1.5e-7 for erf, plus float rounding), not fitted to the output.
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
  EXPECT_LT(worst, 3.0 * std::numeric_limits<float>::epsilon());
  EXPECT_EQ(fast::exp_minus_abs(0.0f), 1.0f);
  EXPECT_EQ(fast::exp_minus_abs(-0.0f), 1.0f);
  // Beyond the cap at 87 the result stays at e^-87, a normal float, never garbage.
  EXPECT_NEAR(fast::exp_minus_abs(1e30f), std::exp(-87.0), 1e-40);
  EXPECT_GT(fast::exp_minus_abs(1e30f), 0.0f);
}

TEST(FastMath, ErfIsWithinAbramowitzStegunBoundPlusRounding) {
  double worst = 0.0;
  for_grid([&](float x) {
    worst = std::max(worst, std::fabs(fast::erf(x) - std::erf(static_cast<double>(x))));
  });
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
