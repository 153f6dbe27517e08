#include <gtest/gtest.h>

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "support/test_util.h"

using namespace heed;

TEST(Engine, AccumulatesIntoLeavesAndSumsFanIn) {
  Tensor x = from_vector<double>({1.0, 2.0}, {2});
  x.set_requires_grad(true);
  // y = x*x + 3x: one leaf used three times.
  Tensor y = sum(add(mul(x, x), mul(x, 3.0)));
  y.backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{5.0, 7.0}));
  // A second backward accumulates, as in PyTorch.
  Tensor y2 = sum(mul(x, 2.0));
  y2.backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{7.0, 9.0}));
}

TEST(Engine, LeafGradientsNeverShareMemoryWithAnotherTensor) {
  // A leaf takes over an incoming gradient only when nothing else holds it: here the two
  // leaves of an add receive the same gradient tensor, and a root seed is the caller's.
  Tensor a = from_vector<double>({1.0, 2.0}, {2}), b = from_vector<double>({3.0, 4.0}, {2});
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  Tensor seed = from_vector<double>({1.0, 1.0}, {2});
  add(a, b).backward(seed);
  EXPECT_NE(a.grad().storage(), b.grad().storage());
  EXPECT_NE(a.grad().storage(), seed.storage());
  EXPECT_NE(b.grad().storage(), seed.storage());
  seed.fill_(5.0);
  a.grad().fill_(7.0);
  EXPECT_EQ(b.grad().to_vector<double>(), (std::vector<double>{1.0, 1.0}));
  // A leaf as the root: its gradient is a copy of the caller's seed.
  Tensor c = from_vector<double>({1.0, 2.0}, {2});
  c.set_requires_grad(true);
  c.backward(seed);
  seed.fill_(0.0);
  EXPECT_EQ(c.grad().to_vector<double>(), (std::vector<double>{5.0, 5.0}));
}

TEST(Engine, BackwardsWriteOverAGradientOnlyWhenNothingElseHoldsIt) {
  // GELU's backward writes over its incoming gradient when it holds the only handle. Here
  // both GELUs receive the one gradient an add hands to its two inputs, and a retained
  // gradient holds a third: each must still see it unchanged.
  const std::vector<double> xs{-1.5, -0.2, 0.3, 2.0};
  Tensor a = from_vector<double>(xs, {4}), b = from_vector<double>(xs, {4});
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  Tensor ga = gelu(a), gb = gelu(b);
  Tensor sum_ab = add(ga, gb);
  sum_ab.retain_grad();
  Tensor weights = from_vector<double>({1.0, -2.0, 3.0, 0.5}, {4});
  sum(mul(sum_ab, weights)).backward();
  const std::vector<double> w = weights.to_vector<double>();
  const std::vector<double> da = a.grad().to_vector<double>(), db = b.grad().to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    const double derivative =
        0.5 * (1 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    EXPECT_NEAR(da[i], w[i] * derivative, 1e-12) << i;
    EXPECT_NEAR(db[i], w[i] * derivative, 1e-12) << i;
  }
  EXPECT_EQ(sum_ab.grad().to_vector<double>(), w);
}

TEST(Engine, FanInSumsInPlaceOnlyWhenNothingElseHoldsTheGradient) {
  // a feeds an add (whose backward hands one gradient tensor to both a and b) and a product
  // with itself; c's three gradients are held by nothing else and are summed in place. Values
  // are small integers, exact in f32.
  Tensor x = from_vector<float>({1, 2, -3}, {3});
  x.set_requires_grad(true);
  Tensor a = mul(x, 2.0), b = mul(x, 3.0);
  Tensor c = mul(x, 1.0);
  Tensor y = add(add(add(a, b), mul(a, a)), add(mul(c, 2.0), mul(c, c)));
  sum(y).backward();
  // dx = 2 (1 + 2a) + 3 + (2 + 2c) with a = 2x, c = x: 7 + 10x.
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{17, 27, -23}));
  // add(d, d) hands the caller's seed itself to d twice: the sum must not go into the seed.
  Tensor z = from_vector<float>({1, 2}, {2});
  z.set_requires_grad(true);
  Tensor d = mul(z, 2.0);
  Tensor seed = from_vector<float>({1, -1}, {2});
  add(d, d).backward(seed);
  EXPECT_EQ(seed.to_vector<float>(), (std::vector<float>{1, -1}));
  EXPECT_EQ(z.grad().to_vector<float>(), (std::vector<float>{4, -4}));
}

TEST(Engine, DeepGraphRunsBackwardAndIsFreedWithoutRecursion) {
  // 200k nodes: recursion in backward or in the destructors would overflow the stack.
  Tensor x = from_vector<double>({0.5}, {1});
  x.set_requires_grad(true);
  Tensor y = x;
  for (int i = 0; i < 200000; ++i) y = add(y, 1e-6);
  sum(y).backward();
  EXPECT_EQ(x.grad().to_vector<double>()[0], 1.0);
  // Dropping `y` frees the chain iteratively.
  Tensor z = x;
  for (int i = 0; i < 200000; ++i) z = mul(z, 1.0);
  z = Tensor();
  SUCCEED();
}

TEST(Engine, SecondBackwardWithoutRetainGraphFailsClearly) {
  Tensor x = heed::testing::param({3}, 1);
  Tensor y = sum(exp(x));
  y.backward();
  try {
    y.backward();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("retain_graph"), std::string::npos) << e.what();
  }
}

TEST(Engine, RetainGraphAllowsASecondBackward) {
  Tensor x = heed::testing::param({3}, 2);
  Tensor y = sum(exp(x));
  y.backward(Tensor(), /*retain_graph=*/true);
  std::vector<double> first = x.grad().to_vector<double>();
  y.backward();
  std::vector<double> second = x.grad().to_vector<double>();
  for (size_t i = 0; i < first.size(); ++i) EXPECT_DOUBLE_EQ(second[i], 2 * first[i]);
}

TEST(Engine, InPlaceChangeOfASavedTensorIsAnError) {
  Tensor x = heed::testing::param({3}, 3);
  Tensor e = exp(x);  // ExpBackward saves its output e
  Tensor y = sum(mul(e, 2.0));
  {
    NoGradGuard no_grad;
    e.mul_(3.0);  // changes what ExpBackward needs
  }
  try {
    y.backward();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("modified in place"), std::string::npos) << e.what();
  }
}

TEST(Engine, InPlaceWriteToALeafThatRequiresGradIsRefused) {
  Tensor x = heed::testing::param({3}, 4);
  EXPECT_THROW(x.add_(ones({3}, DType::f64)), Error);
  NoGradGuard no_grad;
  EXPECT_NO_THROW(x.add_(ones({3}, DType::f64)));
}

TEST(Engine, NoGradGuardRecordsNothing) {
  Tensor x = heed::testing::param({3}, 5);
  Tensor y;
  {
    NoGradGuard no_grad;
    y = mul(x, 2.0);
  }
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn(), nullptr);
  EXPECT_TRUE(grad_enabled());
}

TEST(Engine, RetainGradKeepsANonLeafGradient) {
  Tensor x = heed::testing::param({2}, 6);
  Tensor h = mul(x, 3.0);
  h.retain_grad();
  sum(mul(h, h)).backward();
  std::vector<double> hv = h.to_vector<double>(), hg = h.grad().to_vector<double>();
  for (size_t i = 0; i < hv.size(); ++i) EXPECT_DOUBLE_EQ(hg[i], 2 * hv[i]);
}

TEST(Engine, SavedTensorsAreFreedAfterBackward) {
  Tensor x = heed::testing::param({1000}, 7);
  Tensor e = exp(x);
  std::weak_ptr<Storage> saved_storage = e.storage();
  Tensor y = sum(e);
  e = Tensor();  // only ExpBackward still holds the output's storage
  EXPECT_FALSE(saved_storage.expired());
  y.backward();
  EXPECT_TRUE(saved_storage.expired());
}

TEST(Engine, GradientsOfUnusedBranchesStayUndefined) {
  Tensor a = heed::testing::param({2}, 8), b = heed::testing::param({2}, 9);
  sum(mul(a, 2.0)).backward();
  EXPECT_TRUE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
}

namespace {
// An op whose backward is deliberately wrong (2x instead of 3x): gradcheck must catch it.
struct WrongTripleBackward : Node {
  const char* name() const override { return "WrongTripleBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override { return {mul(g, 2.0)}; }
};
Tensor wrong_triple(const Tensor& x) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = mul(x, 3.0);
  }
  if (needs_grad({&x})) attach_node(out, std::make_shared<WrongTripleBackward>(), {x});
  return out;
}
}  // namespace

TEST(Gradcheck, DetectsAWrongBackward) {
  GradcheckResult r = gradcheck([](const std::vector<Tensor>& x) { return wrong_triple(x[0]); },
                                {heed::testing::param({3}, 10)});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("backward 2"), std::string::npos) << r.message;
}
