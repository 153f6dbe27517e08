// linear_cross_entropy against the two ops it fuses (linear, with or without a bias, then
// cross_entropy).
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "support/test_util.h"

using namespace heed;
using heed::testing::expect_gradcheck;
using heed::testing::param;
using heed::testing::random_tensor;
using Inputs = std::vector<Tensor>;

namespace {

struct Result {
  double loss = 0;
  Tensor x_grad, weight_grad, bias_grad;
};

// Forward and backward of one path on fresh leaves, with the bias b_in if defined; the loss is
// scaled by `upstream` before backward, as the trainer scales it for gradient accumulation.
Result run_path(bool fused, const Tensor& x_in, const Tensor& w_in, const Tensor& targets,
                double smoothing, int64_t chunk_rows, double upstream = 1.0,
                const Tensor& b_in = Tensor()) {
  Tensor x = x_in.clone(), w = w_in.clone(), b = b_in.defined() ? b_in.clone() : Tensor();
  x.set_requires_grad(true);
  w.set_requires_grad(true);
  if (b.defined()) b.set_requires_grad(true);
  const Tensor loss = fused ? linear_cross_entropy(x, w, b, targets, -100, smoothing, chunk_rows)
                            : cross_entropy(linear(x, w, b).reshape({-1, w.size(0)}),
                                            targets.reshape({-1}), -100, smoothing);
  mul(loss, upstream).backward();
  return {loss.item(), x.grad(), w.grad(), b.defined() ? b.grad() : Tensor()};
}

// Largest |a - b| over the largest |b|: the gradients of a mean over many rows are all small,
// so an error relative to 1 would say nothing.
double error_relative_to_largest(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  EXPECT_EQ(x.size(), y.size());
  double worst = 0.0, largest = 0.0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    worst = heed::testing::worse_of(worst, std::abs(x[i] - y[i]));
    largest = std::max(largest, std::abs(y[i]));
  }
  return largest > 0 ? worst / largest : worst;
}

// 23 rows (5 of them ignored) of 16 features against 37 classes.
Tensor example_targets() {
  std::vector<int64_t> t;
  for (int64_t r = 0; r < 23; ++r) t.push_back(r % 5 == 3 ? -100 : (r * 7 + 2) % 37);
  return from_vector<int64_t>(t, {23});
}

}  // namespace

TEST(LinearCrossEntropy, MatchesLinearThenCrossEntropy) {
  // Any chunking (one chunk, uneven chunks, a chunk per row) gives the unfused loss and
  // gradients: to f64 rounding in f64, to f32 rounding in f32 (the chunks' weight gradients are
  // summed in another order, and the softmax divides by the row's sum where cross_entropy
  // subtracts its log).
  // The same with a bias, whose gradient sums each chunk's rows, then the chunks.
  const Tensor targets = example_targets();
  for (DType dtype : {DType::f64, DType::f32}) {
    const double tolerance = dtype == DType::f64 ? 1e-12 : 2e-6;
    const Tensor x = random_tensor({23, 16}, 11, dtype), w = random_tensor({37, 16}, 12, dtype);
    for (const Tensor& b : {Tensor(), random_tensor({37}, 13, dtype)}) {
      for (double smoothing : {0.0, 0.1}) {
        const Result unfused = run_path(false, x, w, targets, smoothing, 0, 1.0, b);
        for (int64_t chunk_rows : {0, 5, 7, 1}) {
          SCOPED_TRACE(::testing::Message()
                       << dtype_name(dtype) << (b.defined() ? ", bias" : "") << ", smoothing "
                       << smoothing << ", chunk_rows " << chunk_rows);
          const Result fused = run_path(true, x, w, targets, smoothing, chunk_rows, 1.0, b);
          EXPECT_NEAR(fused.loss, unfused.loss, tolerance * std::abs(unfused.loss));
          EXPECT_LT(error_relative_to_largest(fused.x_grad, unfused.x_grad), tolerance);
          EXPECT_LT(error_relative_to_largest(fused.weight_grad, unfused.weight_grad), tolerance);
          ASSERT_EQ(fused.bias_grad.defined(), b.defined());
          if (b.defined()) {
            EXPECT_LT(error_relative_to_largest(fused.bias_grad, unfused.bias_grad), tolerance);
          }
        }
      }
    }
  }
}

TEST(LinearCrossEntropy, MatchesTheUnfusedPathWithBf16Products) {
  // Both paths round x, the weight and the logits' gradient to bf16 for the products and sum
  // in f32. A gradient element a float ulp away from a bf16 rounding boundary may round the
  // other way in one path (the softmax is computed differently), so the gradients agree to
  // bf16 rounding (2^-8 relative), not to the bit.
  heed::testing::MatmulPrecisionScope scope(MatmulPrecision::bf16);
  const Tensor targets = example_targets();
  const Tensor x = random_tensor({23, 16}, 21, DType::f32),
               w = random_tensor({37, 16}, 22, DType::f32);
  const Tensor b = random_tensor({37}, 23, DType::f32);
  for (bool with_bias : {false, true}) {
    const Tensor bias = with_bias ? b : Tensor();
    const Result unfused = run_path(false, x, w, targets, 0.1, 0, 1.0, bias);
    for (int64_t chunk_rows : {0, 6}) {
      SCOPED_TRACE(::testing::Message()
                   << "chunk_rows " << chunk_rows << (with_bias ? ", bias" : ""));
      const Result fused = run_path(true, x, w, targets, 0.1, chunk_rows, 1.0, bias);
      EXPECT_NEAR(fused.loss, unfused.loss, 1e-6 * std::abs(unfused.loss));
      EXPECT_LT(error_relative_to_largest(fused.x_grad, unfused.x_grad), 4e-3);
      EXPECT_LT(error_relative_to_largest(fused.weight_grad, unfused.weight_grad), 4e-3);
      // The bias gradient is summed from the f32 gradient in both paths, before rounding.
      if (with_bias) {
        EXPECT_LT(error_relative_to_largest(fused.bias_grad, unfused.bias_grad), 2e-6);
      }
    }
  }
}

TEST(LinearCrossEntropy, BackwardScalesByTheIncomingGradient) {
  const Tensor targets = example_targets();
  const Tensor x = random_tensor({23, 16}, 31, DType::f64),
               w = random_tensor({37, 16}, 32, DType::f64);
  const Result once = run_path(true, x, w, targets, 0.0, 5);
  const Result scaled = run_path(true, x, w, targets, 0.0, 5, 0.25);
  EXPECT_LT(error_relative_to_largest(scaled.x_grad, mul(once.x_grad, 0.25)), 1e-15);
  EXPECT_LT(error_relative_to_largest(scaled.weight_grad, mul(once.weight_grad, 0.25)), 1e-15);
}

TEST(LinearCrossEntropy, TakesBatchedInputAndGivesPredictionsAndNoGradientWithoutGradMode) {
  const Tensor x = random_tensor({2, 3, 8}, 41, DType::f32),
               w = random_tensor({11, 8}, 42, DType::f32);
  const Tensor targets = from_vector<int64_t>({1, 10, -100, 0, 4, 4}, {2, 3});
  const double expected = cross_entropy(linear(x, w).reshape({6, 11}), targets.reshape({6})).item();
  Tensor leaf = x.clone();
  leaf.set_requires_grad(true);
  NoGradGuard no_grad;
  Tensor predictions;
  const Tensor loss = linear_cross_entropy(leaf, w, targets, -100, 0.0, 4, &predictions);
  EXPECT_NEAR(loss.item(), expected, 1e-6 * expected);
  EXPECT_EQ(loss.grad_fn(), nullptr);
  ASSERT_EQ(predictions.shape(), targets.shape());
  EXPECT_EQ(predictions.to_vector<int64_t>(), argmax(linear(x, w), -1).to_vector<int64_t>());
  // With a bias, the predictions are the biased logits' arg max.
  const Tensor b = mul(random_tensor({11}, 43, DType::f32), 10.0);
  const Tensor biased = linear_cross_entropy(leaf, w, b, targets, -100, 0.0, 4, &predictions);
  EXPECT_EQ(predictions.to_vector<int64_t>(), argmax(linear(x, w, b), -1).to_vector<int64_t>());
  const double expected_biased =
      cross_entropy(linear(x, w, b).reshape({6, 11}), targets.reshape({6})).item();
  EXPECT_NEAR(biased.item(), expected_biased, 1e-6 * expected_biased);
}

TEST(LinearCrossEntropy, WithoutFeaturesEveryRowsLogitsAreTheBias) {
  const Tensor x = Tensor::empty({3, 0}), w = Tensor::empty({5, 0});
  const Tensor b_in = random_tensor({5}, 53, DType::f32);
  const Tensor targets = from_vector<int64_t>({0, 4, 2}, {3});
  Tensor b = b_in.clone(), b_ref = b_in.clone();
  b.set_requires_grad(true);
  b_ref.set_requires_grad(true);
  const Tensor row = b_ref.reshape({1, 5}), logits = concat({row, row, row}, 0);
  const Tensor loss = linear_cross_entropy(x, w, b, targets, -100, 0.0);
  const Tensor expected = cross_entropy(logits, targets);
  EXPECT_NEAR(loss.item(), expected.item(), 1e-6);
  loss.backward();
  expected.backward();
  EXPECT_LT(error_relative_to_largest(b.grad(), b_ref.grad()), 1e-6);
}

TEST(LinearCrossEntropy, ABiasWithoutGradientStillShiftsTheLogits) {
  // Only x and the weight learn (BART's final_logits_bias is such a buffer): no bias gradient,
  // the others as the unfused path's. And only the bias learning: its gradient alone.
  const Tensor targets = example_targets();
  const Tensor x = random_tensor({23, 16}, 91, DType::f64),
               w = random_tensor({37, 16}, 92, DType::f64);
  const Tensor b = random_tensor({37}, 93, DType::f64);
  Tensor xf = x.clone(), wf = w.clone(), xu = x.clone(), wu = w.clone();
  for (Tensor* t : {&xf, &wf, &xu, &wu}) t->set_requires_grad(true);
  const Tensor fused = linear_cross_entropy(xf, wf, b, targets, -100, 0.1, 5);
  const Tensor unfused = cross_entropy(linear(xu, wu, b), targets, -100, 0.1);
  EXPECT_NEAR(fused.item(), unfused.item(), 1e-12 * std::abs(unfused.item()));
  fused.backward();
  unfused.backward();
  EXPECT_LT(error_relative_to_largest(xf.grad(), xu.grad()), 1e-12);
  EXPECT_LT(error_relative_to_largest(wf.grad(), wu.grad()), 1e-12);
  Tensor bf = b.clone(), bu = b.clone();
  bf.set_requires_grad(true);
  bu.set_requires_grad(true);
  linear_cross_entropy(x, w, bf, targets, -100, 0.1, 5).backward();
  cross_entropy(linear(x, w, bu), targets, -100, 0.1).backward();
  EXPECT_FALSE(x.grad().defined());
  EXPECT_LT(error_relative_to_largest(bf.grad(), bu.grad()), 1e-12);
}

TEST(LinearCrossEntropy, NoTargetThatCountsIsANan) {
  const Tensor x = random_tensor({2, 8}, 51, DType::f32), w = random_tensor({5, 8}, 52, DType::f32);
  EXPECT_TRUE(
      std::isnan(linear_cross_entropy(x, w, from_vector<int64_t>({-100, -100}, {2})).item()));
}

TEST(LinearCrossEntropy, RejectsMismatchedShapesAndTargetsOutOfRange) {
  const Tensor x = random_tensor({4, 8}, 61, DType::f32), w = random_tensor({5, 8}, 62, DType::f32);
  const Tensor targets = from_vector<int64_t>({0, 1, 2, 3}, {4});
  EXPECT_THROW(linear_cross_entropy(x, random_tensor({5, 7}, 63, DType::f32), targets), Error);
  EXPECT_THROW(linear_cross_entropy(x, w, from_vector<int64_t>({0, 1, 2}, {3})), Error);
  EXPECT_THROW(linear_cross_entropy(x, w, from_vector<int64_t>({0, 1, 2, 5}, {4})), Error);
  EXPECT_THROW(linear_cross_entropy(x, w, targets, -100, 1.5), Error);
  EXPECT_THROW(linear_cross_entropy(x, w, random_tensor({4}, 64, DType::f32), targets, -100, 0.0),
               Error);
  EXPECT_THROW(linear_cross_entropy(x, w, random_tensor({5}, 65, DType::f64), targets, -100, 0.0),
               Error);
}

TEST(Gradcheck, LinearCrossEntropy) {
  const Tensor t = from_vector<int64_t>({2, -100, 0, 4, 1}, {5});
  expect_gradcheck(
      [t](const Inputs& x) { return linear_cross_entropy(x[0], x[1], t, -100, 0.1, 2); },
      {param({5, 3}, 71), param({6, 3}, 72)});
}

TEST(Gradcheck, LinearCrossEntropyWithBias) {
  const Tensor t = from_vector<int64_t>({2, -100, 0, 4, 1}, {5});
  expect_gradcheck(
      [t](const Inputs& x) { return linear_cross_entropy(x[0], x[1], x[2], t, -100, 0.1, 2); },
      {param({5, 3}, 81), param({6, 3}, 82), param({6}, 83)});
}
