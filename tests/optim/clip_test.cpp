#include "optim/clip.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "optim/adamw.h"
#include "optim/param_groups.h"
#include "optim/sgd.h"
#include "optim_test_util.h"

namespace heed::optim {
namespace {

using heed::testing::bitwise_equal;
using heed::testing::leaf;
using heed::testing::set_grad;

TEST(ClipGradNorm, BelowMaxNormLeavesGradientsAndReturnsTotal) {
  Tensor a = leaf<float>({0, 0}, {2}), b = leaf<double>({0}, {1});
  set_grad(a, from_vector<float>({3.0f, 4.0f}, {2}));
  set_grad(b, from_vector<double>({12.0}, {1}));
  // sqrt(9 + 16 + 144) = 13.
  EXPECT_EQ(clip_grad_norm_({a, b}, 26.0), 13.0);
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{3.0f, 4.0f}));
  EXPECT_EQ(b.grad().to_vector<double>(), std::vector<double>{12.0});
}

TEST(ClipGradNorm, ScalesByMaxNormOverTotalPlusEpsilon) {
  Tensor a = leaf<float>({0, 0}, {2}), b = leaf<double>({0}, {1});
  set_grad(a, from_vector<float>({3.0f, 4.0f}, {2}));
  set_grad(b, from_vector<double>({12.0}, {1}));
  const double total = clip_grad_norm_({a, b}, 6.5);
  EXPECT_EQ(total, 13.0);  // the norm from before clipping
  const double coef = 6.5 / (13.0 + 1e-6);
  const float coef_f = static_cast<float>(coef);
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{3.0f * coef_f, 4.0f * coef_f}));
  EXPECT_EQ(b.grad().to_vector<double>(), std::vector<double>{12.0 * coef});
  // The clipped norm is max_norm, less the epsilon's share.
  EXPECT_NEAR(grad_norm({a, b}), 6.5, 1e-6);
}

TEST(ClipGradNorm, OverAnOptimizersParameters) {
  Tensor a = leaf<float>({0, 0}, {2}), b = leaf<float>({0}, {1});
  AdamW adamw(weight_decay_groups({{"w", a}, {"bias", b}}, 0.1));
  set_grad(a, from_vector<float>({3.0f, 4.0f}, {2}));
  set_grad(b, from_vector<float>({12.0f}, {1}));
  EXPECT_EQ(clip_grad_norm_(adamw, 1.0), 13.0);
  EXPECT_NEAR(grad_norm({a, b}), 1.0, 1e-6);
}

TEST(ClipGradNorm, SkipsParametersWithoutGradient) {
  Tensor a = leaf<float>({0, 0}, {2}), none = leaf<float>({5.0f}, {1});
  set_grad(a, from_vector<float>({3.0f, 4.0f}, {2}));
  EXPECT_EQ(clip_grad_norm_({a, none}, 1.0), 5.0);
  EXPECT_FALSE(none.grad().defined());
  EXPECT_NEAR(a.grad().to_vector<float>()[0], 0.6, 1e-6);
}

// Squares of 3e20 and 4e20 overflow f32 (max ~3.4e38) but not the double accumulator.
TEST(ClipGradNorm, NormIsAccumulatedInDouble) {
  Tensor a = leaf<float>({0, 0}, {2});
  set_grad(a, from_vector<float>({3e20f, 4e20f}, {2}));
  const double total = clip_grad_norm_({a}, 1.0);
  EXPECT_NEAR(total / 5e20, 1.0, 1e-7);
  EXPECT_NEAR(a.grad().to_vector<float>()[1], 0.8, 1e-6);
}

TEST(ClipGradNorm, NonFiniteNormIsReportedAndGradientsKept) {
  for (float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    Tensor a = leaf<float>({0, 0}, {2});
    set_grad(a, from_vector<float>({bad, 1.0f}, {2}));
    const double total = clip_grad_norm_({a}, 1.0);
    EXPECT_FALSE(std::isfinite(total));
    EXPECT_EQ(std::isnan(total), std::isnan(bad));
    EXPECT_EQ(a.grad().to_vector<float>()[1], 1.0f);
    try {
      clip_grad_norm_({a}, 1.0, /*error_if_nonfinite=*/true);
      FAIL() << "a non-finite norm did not throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("NaN or Inf"), std::string::npos) << e.what();
    }
  }
}

TEST(ClipGradNorm, CoefficientIsWhatClippingMultipliesBy) {
  EXPECT_EQ(clip_coefficient(13.0, 6.5), 6.5 / (13.0 + 1e-6));
  EXPECT_EQ(clip_coefficient(13.0, 26.0), 1.0);
  EXPECT_EQ(clip_coefficient(std::numeric_limits<double>::quiet_NaN(), 1.0), 1.0);
  EXPECT_EQ(clip_coefficient(std::numeric_limits<double>::infinity(), 1.0), 1.0);
}

// Clipping inside the update (step(clip_coefficient(...))) gives the parameters and state
// that clipping the gradients first gives, to the bit, for both optimizers and both types;
// and leaves the gradients as they were.
TEST(ClipGradNorm, InsideTheUpdateGivesTheSameBitsAsClippingFirst) {
  for (bool sgd : {false, true}) {
    for (DType type : {DType::f32, DType::f64}) {
      for (double max_norm : {0.5, 1e9}) {  // clipping, and a norm under the limit
        Generator gen(5);
        const Tensor w0 = randn({1000}, gen).to(type), b0 = randn({7}, gen).to(type);
        const Tensor gw = randn({1000}, gen).to(type), gb = randn({7}, gen).to(type);
        auto run = [&](bool inside) {
          Tensor w = w0.clone(), b = b0.clone();
          w.set_requires_grad(true);
          b.set_requires_grad(true);
          std::unique_ptr<Optimizer> opt;
          if (sgd) {
            opt = std::make_unique<SGD>(NamedTensors{{"w", w}, {"b", b}},
                                        SGDOptions{.lr = 0.1, .momentum = 0.9});
          } else {
            opt = std::make_unique<AdamW>(NamedTensors{{"w", w}, {"b", b}},
                                          AdamWOptions{.lr = 0.01, .weight_decay = 0.1});
          }
          for (int step = 0; step < 3; ++step) {
            set_grad(w, gw);
            set_grad(b, gb);
            if (inside) {
              opt->step(clip_coefficient(grad_norm(*opt), max_norm));
              EXPECT_TRUE(bitwise_equal(w.grad(), gw));  // not clipped in place
            } else {
              clip_grad_norm_(*opt, max_norm);
              opt->step();
            }
          }
          return std::vector<Tensor>{w, b};
        };
        const std::vector<Tensor> first = run(false), inside = run(true);
        for (size_t i = 0; i < first.size(); ++i) {
          EXPECT_TRUE(bitwise_equal(first[i], inside[i]))
              << (sgd ? "SGD " : "AdamW ") << dtype_name(type) << " max_norm " << max_norm
              << " tensor " << i;
        }
      }
    }
  }
}

TEST(ClipGradNorm, LargeTensorsSameBitsOnAnyThreadCount) {
  Generator gen(3);
  Tensor a = randn({100003}, gen);
  a.set_requires_grad(true);
  set_grad(a, randn({100003}, gen));
  const int threads = num_threads();
  set_num_threads(1);
  const double one = grad_norm({a});
  set_num_threads(2);
  const double two = grad_norm({a});
  set_num_threads(threads);
  EXPECT_EQ(one, two);
  double expected = 0.0;
  for (double g : a.grad().to_vector<double>()) expected += g * g;
  EXPECT_NEAR(one, std::sqrt(expected), 1e-12 * std::sqrt(expected));
}

}  // namespace
}  // namespace heed::optim
