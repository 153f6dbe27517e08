// Gradient accumulation as optimizer.h documents it: each micro-batch's mean loss scaled by
// 1/N before backward, .grad accumulating across backward calls, one optimizer step per N.
#include <gtest/gtest.h>

#include "autograd/ops.h"
#include "autograd/random.h"
#include "nn/linear.h"
#include "optim/adamw.h"
#include "optim/clip.h"
#include "optim_test_util.h"

namespace heed::optim {
namespace {

Tensor mse(const Tensor& prediction, const Tensor& target) {
  Tensor diff = prediction - target;
  return mean(diff * diff);
}

TEST(Accumulation, TwoMicroBatchesOfTwoEqualOneBatchOfFour) {
  Generator init_a(9), init_b(9);
  nn::Linear full(3, 2, init_a, true, 0.5), accumulated(3, 2, init_b, true, 0.5);
  ASSERT_TRUE(heed::testing::bitwise_equal(full.weight, accumulated.weight));
  AdamW opt_full(full.named_parameters(), {.lr = 0.01, .weight_decay = 0.01});
  AdamW opt_acc(accumulated.named_parameters(), {.lr = 0.01, .weight_decay = 0.01});
  Generator data(10);
  constexpr int kAccum = 2;
  for (int step = 0; step < 3; ++step) {
    Tensor x = randn({4, 3}, data), y = randn({4, 2}, data);

    opt_full.zero_grad();
    mse(full.forward(x), y).backward();

    opt_acc.zero_grad();
    for (int k = 0; k < kAccum; ++k) {
      Tensor xs = x.slice(0, 2 * k, 2 * k + 2), ys = y.slice(0, 2 * k, 2 * k + 2);
      (mse(accumulated.forward(xs), ys) * (1.0 / kAccum)).backward();
    }

    // The same gradients up to f32 rounding of the different summation order (~1e-7).
    for (auto [a, b] :
         {std::pair{full.weight, accumulated.weight}, std::pair{full.bias, accumulated.bias}}) {
      EXPECT_LE(heed::testing::max_relative_error(b.grad(), a.grad()), 1e-6);
    }
    EXPECT_NEAR(grad_norm({accumulated.weight, accumulated.bias}),
                grad_norm({full.weight, full.bias}), 1e-6);
    opt_full.step();
    opt_acc.step();
    // Adam divides by sqrt(v); with gradients equal to ~1e-7 relative the updates agree to
    // about as much, and lr 0.01 shrinks that further in the parameters.
    EXPECT_LE(heed::testing::max_relative_error(accumulated.weight, full.weight), 1e-6);
    EXPECT_LE(heed::testing::max_relative_error(accumulated.bias, full.bias), 1e-6);
  }
  // The runs did move the parameters.
  Generator init_c(9);
  nn::Linear start(3, 2, init_c, true, 0.5);
  EXPECT_GT(heed::testing::max_abs_diff(full.weight, start.weight), 1e-3);
}

}  // namespace
}  // namespace heed::optim
