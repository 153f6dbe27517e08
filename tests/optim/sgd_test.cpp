#include "optim/sgd.h"

#include <gtest/gtest.h>

#include "optim_test_util.h"

namespace heed::optim {
namespace {

using heed::testing::leaf;
using heed::testing::set_grad;

// Two steps from p = [1, -2] with gradients g1 = [0.5, 1] and g2 = [-1, 0.25], lr 0.1; the
// expected values are worked by hand in the comments from torch.optim.SGD's rule.
std::vector<double> two_steps(const SGDOptions& options) {
  Tensor p = leaf<double>({1.0, -2.0}, {2});
  SGD sgd(NamedTensors{{"p", p}}, options);
  set_grad(p, from_vector<double>({0.5, 1.0}, {2}));
  sgd.step();
  set_grad(p, from_vector<double>({-1.0, 0.25}, {2}));
  sgd.step();
  return p.to_vector<double>();
}

void expect_values(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
}

TEST(SGD, Plain) {
  // p - 0.1 g1 = [0.95, -2.1]; - 0.1 g2 = [1.05, -2.125].
  expect_values(two_steps({.lr = 0.1}), {1.05, -2.125});
}

TEST(SGD, MomentumWithWeightDecay) {
  // d1 = g1 + 0.1 p = [0.6, 0.8] = b1; p = [0.94, -2.08].
  // d2 = g2 + 0.1 p = [-0.906, 0.042]; b2 = 0.9 b1 + d2 = [-0.366, 0.762];
  // p = [0.94 + 0.0366, -2.08 - 0.0762] = [0.9766, -2.1562].
  expect_values(two_steps({.lr = 0.1, .momentum = 0.9, .weight_decay = 0.1}), {0.9766, -2.1562});
}

TEST(SGD, Nesterov) {
  // b1 = g1; d1 = g1 + 0.9 b1 = [0.95, 1.9]; p = [0.905, -2.19].
  // b2 = 0.9 b1 + g2 = [-0.55, 1.15]; d2 = g2 + 0.9 b2 = [-1.495, 1.285];
  // p = [1.0545, -2.3185].
  expect_values(two_steps({.lr = 0.1, .momentum = 0.9, .nesterov = true}), {1.0545, -2.3185});
}

TEST(SGD, DampeningSparesTheFirstStep) {
  // b1 = g1 (no dampening on the first step); p = [0.95, -2.1].
  // b2 = 0.9 b1 + 0.5 g2 = [-0.05, 1.025]; p = [0.955, -2.2025].
  expect_values(two_steps({.lr = 0.1, .momentum = 0.9, .dampening = 0.5}), {0.955, -2.2025});
}

TEST(SGD, F32LargeTensorMatchesF64) {
  Generator gen(11);
  const int64_t n = 5 * 4096 + 7;
  Tensor p64 = randn({n}, gen, DType::f64);
  Tensor p32 = p64.to(DType::f32);
  p64 = p32.to(DType::f64);
  p64.set_requires_grad(true);
  p32.set_requires_grad(true);
  SGDOptions o{.lr = 0.05, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true};
  SGD a(NamedTensors{{"p", p64}}, o), b(NamedTensors{{"p", p32}}, o);
  for (int step = 0; step < 3; ++step) {
    Tensor g = randn({n}, gen);
    set_grad(p32, g);
    set_grad(p64, g.to(DType::f64));
    a.step();
    b.step();
  }
  EXPECT_LE(heed::testing::max_relative_error(p32, p64), 1e-6);
  EXPECT_EQ(b.state("p")->tensors.count("momentum_buffer"), 1u);
}

TEST(SGD, RejectsBadHyperParameters) {
  Tensor p = leaf<double>({1.0}, {1});
  EXPECT_THROW(SGD(NamedTensors{{"p", p}}, SGDOptions{}), Error);  // lr is required
  EXPECT_THROW(SGD(NamedTensors{{"p", p}}, {.lr = 0.1, .nesterov = true}), Error);
  EXPECT_THROW(
      SGD(NamedTensors{{"p", p}}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true}),
      Error);
  EXPECT_THROW(SGD(NamedTensors{{"p", p}}, {.lr = 0.1, .momentum = -0.1}), Error);
}

}  // namespace
}  // namespace heed::optim
