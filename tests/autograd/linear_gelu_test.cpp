// linear_gelu against the two ops it fuses (linear, then gelu).
#include <gtest/gtest.h>

#include "autograd/ops.h"
#include "autograd/random.h"
#include "support/test_util.h"

using namespace heed;
using heed::testing::expect_same_bits;
using heed::testing::random_tensor;

namespace {

struct Gradients {
  Tensor out, next_out, x, weight, bias, next_weight;
};

// Forward and backward of one path on fresh leaves.
Gradients run_path(bool fused, const Tensor& x_in, const Tensor& w_in, const Tensor& b_in,
                   GeluApproximation approximation, WeightLayout layout,
                   const Tensor& next_weight) {
  Tensor x = x_in.clone(), w = w_in.clone(), b = b_in.clone(), w2 = next_weight.clone();
  for (Tensor* t : {&x, &w, &b, &w2}) t->set_requires_grad(true);
  Gradients r;
  r.out = fused ? linear_gelu(x, w, b, approximation, layout)
                : gelu(linear(x, w, b, layout), approximation);
  // A second Linear reads the output as a feed-forward block's does (with bf16 products, the
  // rounded copy linear_gelu writes in its own pass).
  r.next_out = linear(r.out, w2);
  sum(mul(r.next_out, r.next_out)).backward();
  r.x = x.grad();
  r.weight = w.grad();
  r.bias = b.grad();
  r.next_weight = w2.grad();
  return r;
}

}  // namespace

TEST(LinearGelu, GivesTheSameBitsAsLinearThenGelu) {
  // The same products, the same GELU and derivative functions and the same bias-sum order:
  // forward and all three gradients agree to the bit, in f32, f64 and with bf16 products, for
  // both GELUs and both weight layouts. 37 rows do not split evenly into the sum's blocks.
  for (MatmulPrecision precision : {MatmulPrecision::f32, MatmulPrecision::bf16}) {
    heed::testing::MatmulPrecisionScope scope(precision);
    for (DType dtype : {DType::f32, DType::f64}) {
      if (precision == MatmulPrecision::bf16 && dtype == DType::f64) continue;  // f64 stays f64
      for (GeluApproximation approximation : {GeluApproximation::none, GeluApproximation::tanh}) {
        for (WeightLayout layout : {WeightLayout::out_in, WeightLayout::in_out}) {
          SCOPED_TRACE(::testing::Message()
                       << "bf16 products " << (precision == MatmulPrecision::bf16) << ", "
                       << dtype_name(dtype) << ", tanh "
                       << (approximation == GeluApproximation::tanh) << ", out_in "
                       << (layout == WeightLayout::out_in));
          Tensor x = random_tensor({37, 24}, 71, dtype);
          Tensor w = random_tensor(layout == WeightLayout::out_in ? Shape{40, 24} : Shape{24, 40},
                                   72, dtype);
          Tensor b = random_tensor({40}, 73, dtype);
          Tensor next_weight = random_tensor({6, 40}, 74, dtype);
          Gradients fused = run_path(true, x, w, b, approximation, layout, next_weight);
          Gradients unfused = run_path(false, x, w, b, approximation, layout, next_weight);
          expect_same_bits(fused.out, unfused.out, "output");
          expect_same_bits(fused.next_out, unfused.next_out, "next Linear's output");
          expect_same_bits(fused.next_weight, unfused.next_weight, "next Linear's weight gradient");
          expect_same_bits(fused.x, unfused.x, "input gradient");
          expect_same_bits(fused.weight, unfused.weight, "weight gradient");
          expect_same_bits(fused.bias, unfused.bias, "bias gradient");
        }
      }
    }
  }
}

TEST(LinearGelu, BatchedInputKeepsItsShape) {
  Tensor x = random_tensor({2, 3, 8}, 81, DType::f64);
  Tensor w = random_tensor({5, 8}, 82, DType::f64), b = random_tensor({5}, 83, DType::f64);
  Tensor out = linear_gelu(x, w, b, GeluApproximation::none);
  ASSERT_EQ(out.shape(), (Shape{2, 3, 5}));
  expect_same_bits(out, gelu(linear(x, w, b)), "output");
}

TEST(LinearGelu, RejectsAMissingBiasAndMismatchedShapes) {
  Tensor x = random_tensor({4, 8}, 91, DType::f32), w = random_tensor({5, 8}, 92, DType::f32);
  EXPECT_THROW(linear_gelu(x, w, Tensor(), GeluApproximation::none), Error);
  EXPECT_THROW(linear_gelu(x, random_tensor({5, 7}, 93, DType::f32),
                           random_tensor({5}, 94, DType::f32), GeluApproximation::none),
               Error);
}

TEST(LinearGelu, ARetainedGraphKeepsItsSavedPreActivation) {
  // With bf16 products backward writes the pre-activation's gradient over the saved bf16
  // pre-activation, unless the graph is retained: a second backward then must find it intact
  // and add the same gradients again.
  heed::testing::MatmulPrecisionScope scope(MatmulPrecision::bf16);
  Tensor x = random_tensor({37, 24}, 75, DType::f32).set_requires_grad(true);
  Tensor w = random_tensor({40, 24}, 76, DType::f32).set_requires_grad(true);
  Tensor b = random_tensor({40}, 77, DType::f32).set_requires_grad(true);
  Tensor loss = sum(linear_gelu(x, w, b, GeluApproximation::none));
  loss.backward(Tensor(), /*retain_graph=*/true);
  const Tensor once[] = {x.grad().clone(), w.grad().clone(), b.grad().clone()};
  loss.backward();
  const Tensor twice[] = {x.grad(), w.grad(), b.grad()};
  for (int i = 0; i < 3; ++i) expect_same_bits(twice[i], once[i] * 2.0, "gradient");
}
