// residual_dropout and residual_dropout_layer_norm against the ops they fuse (dropout, add,
// layer_norm).
#include <gtest/gtest.h>

#include "autograd/ops.h"
#include "autograd/random.h"
#include "support/test_util.h"

using namespace heed;
using heed::testing::expect_same_bits;
using heed::testing::random_tensor;

namespace {

struct Case {
  Shape shape;
  double p;
  bool training;
};

struct Results {
  Tensor out, x, h, weight, bias;
  Tensor next_draw;  // a dropout drawn after the op: the op must use the generator's stream as
                     // the unfused ops do
};

// Forward and backward of one path on fresh leaves. x also feeds a second branch, as a layer's
// input feeds both its block and its residual, so its gradient is a sum of two.
Results run_path(bool fused, bool with_norm, const Case& c, const Tensor& x_in, const Tensor& h_in,
                 const Tensor& w_in, const Tensor& b_in, const Tensor& probe) {
  Tensor x = x_in.clone(), h = h_in.clone(), w = w_in.clone(), b = b_in.clone();
  for (Tensor* t : {&x, &h, &w, &b}) t->set_requires_grad(true);
  Generator generator(123);
  generator.reserve_blocks(5);  // not at the stream's start
  Tensor h_used = mul(h, x);
  Results r;
  if (with_norm) {
    r.out = fused ? residual_dropout_layer_norm(x, h_used, c.p, c.training, generator, w, b, 1e-5)
                  : layer_norm(add(x, dropout(h_used, c.p, c.training, generator)), w, b, 1e-5);
  } else {
    r.out = fused ? residual_dropout(x, h_used, c.p, c.training, generator)
                  : add(x, dropout(h_used, c.p, c.training, generator));
  }
  r.next_draw = dropout(probe, 0.5, true, generator);
  sum(mul(r.out, r.out)).backward();
  r.x = x.grad();
  r.h = h.grad();
  if (with_norm) {
    r.weight = w.grad();
    r.bias = b.grad();
  }
  return r;
}

void expect_same_results(bool with_norm, const Case& c, DType dtype) {
  SCOPED_TRACE(::testing::Message()
               << "norm " << with_norm << ", " << dtype_name(dtype) << ", p " << c.p
               << ", training " << c.training << ", width " << c.shape.back());
  Tensor x = random_tensor(c.shape, 81, dtype), h = random_tensor(c.shape, 82, dtype);
  Tensor w = random_tensor({c.shape.back()}, 83, dtype),
         b = random_tensor({c.shape.back()}, 84, dtype);
  Tensor probe = random_tensor({64}, 85, dtype);
  Results fused = run_path(true, with_norm, c, x, h, w, b, probe);
  Results plain = run_path(false, with_norm, c, x, h, w, b, probe);
  expect_same_bits(fused.out, plain.out, "output");
  expect_same_bits(fused.x, plain.x, "residual's gradient");
  expect_same_bits(fused.h, plain.h, "block output's gradient");
  expect_same_bits(fused.next_draw, plain.next_draw, "the dropout drawn after");
  if (with_norm) {
    expect_same_bits(fused.weight, plain.weight, "weight gradient");
    expect_same_bits(fused.bias, plain.bias, "bias gradient");
  }
}

}  // namespace

TEST(ResidualDropoutLayerNorm, GivesTheSameBitsAsDropoutAddLayerNorm) {
  // Rows of 24 (the fused path); rows of 20, whose keep bits would share bytes between rows
  // (composed from the three ops); rows of 4,200 (more draws than one block of the stream
  // helper takes); 300 x 128 (both passes split over threads). With and without dropout, and
  // in eval.
  const std::vector<Case> cases = {
      {{3, 37, 24}, 0.1, true}, {{3, 37, 24}, 0.0, true}, {{3, 37, 24}, 0.1, false},
      {{3, 37, 20}, 0.1, true}, {{3, 4200}, 0.3, true},   {{300, 128}, 0.1, true},
      {{300, 128}, 0.0, false}, {{2, 8}, 1.0, true},
  };
  for (DType dtype : {DType::f32, DType::f64}) {
    for (const Case& c : cases) expect_same_results(true, c, dtype);
  }
}

TEST(ResidualDropout, GivesTheSameBitsAsDropoutThenAdd) {
  // 5,550 elements: two blocks of the stream helper, the second partial; 40,000: split over
  // threads.
  const std::vector<Case> cases = {
      {{3, 37, 50}, 0.1, true}, {{3, 37, 50}, 0.0, true}, {{3, 37, 50}, 0.1, false},
      {{400, 100}, 0.2, true},  {{2, 8}, 1.0, true},
  };
  for (DType dtype : {DType::f32, DType::f64}) {
    for (const Case& c : cases) expect_same_results(false, c, dtype);
  }
}

TEST(ResidualDropout, RejectsABlockOutputOfAnotherShape) {
  Generator generator(1);
  Tensor x = random_tensor({4, 8}, 1, DType::f32), h = random_tensor({4, 16}, 2, DType::f32);
  Tensor w = random_tensor({8}, 3, DType::f32), b = random_tensor({8}, 4, DType::f32);
  EXPECT_THROW(residual_dropout(x, h, 0.1, true, generator), Error);
  EXPECT_THROW(residual_dropout_layer_norm(x, h, 0.1, true, generator, w, b, 1e-5), Error);
  EXPECT_THROW(residual_dropout_layer_norm(x, x, 0.1, true, generator, h, b, 1e-5), Error);
}
