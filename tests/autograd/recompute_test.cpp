// checkpoint(): a block recomputed in backward gives the same bits as the block run once,
// its dropout draws included, and its gradients pass the f64 check.
#include <gtest/gtest.h>

#include "autograd/checkpoint.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "autograd/random.h"
#include "support/test_util.h"

namespace heed {
namespace {

// A small block with a parameter, two inputs (one fanning out twice) and a dropout.
Tensor block(const std::vector<Tensor>& in, const Tensor& weight, Generator& generator) {
  Tensor h = tanh(add(matmul(in[0], weight), in[1]));
  return add(dropout(h, 0.3, /*training=*/true, generator), mul(h, in[0]));
}

struct StepResult {
  std::vector<float> out, x_grad, bias_grad, weight_grad;
  Generator::State after_forward;
};

StepResult run_block(bool recompute) {
  Generator init(5);
  Tensor x = randn({4, 6}, init).set_requires_grad(true);
  Tensor bias = randn({4, 6}, init).set_requires_grad(true);
  Tensor weight = randn({6, 6}, init).set_requires_grad(true);
  Generator drops(9);
  drops.reserve_blocks(3);  // a stream already in use
  auto f = [&](const std::vector<Tensor>& in) { return block(in, weight, drops); };
  Tensor y = recompute ? checkpoint(f, {x, bias}, &drops) : f({x, bias});
  StepResult r;
  r.after_forward = drops.state();
  drops.reserve_blocks(7);  // draws between forward and backward (another layer's dropout)
  sum(mul(y, y)).backward();
  r.out = y.to_vector<float>();
  r.x_grad = x.grad().to_vector<float>();
  r.bias_grad = bias.grad().to_vector<float>();
  r.weight_grad = weight.grad().to_vector<float>();
  EXPECT_EQ(drops.state().offset, r.after_forward.offset + 7) << "backward moved the stream";
  return r;
}

TEST(Recompute, SameBitsAsOneRunDropoutIncluded) {
  const StepResult plain = run_block(false), recomputed = run_block(true);
  EXPECT_EQ(recomputed.out, plain.out);
  EXPECT_EQ(recomputed.x_grad, plain.x_grad);
  EXPECT_EQ(recomputed.bias_grad, plain.bias_grad);
  EXPECT_EQ(recomputed.weight_grad, plain.weight_grad);
  EXPECT_EQ(recomputed.after_forward.offset, plain.after_forward.offset);
}

TEST(Recompute, GradcheckThroughTheRecomputedBlock) {
  Generator init(3);
  Tensor x = randn({3, 4}, init, DType::f64).set_requires_grad(true);
  Tensor bias = randn({3, 4}, init, DType::f64).set_requires_grad(true);
  Tensor weight = randn({4, 4}, init, DType::f64).set_requires_grad(true);
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) {
        Generator drops(11);  // the same mask at every evaluation
        auto f = [&](const std::vector<Tensor>& args) {
          return block({args[0], args[1]}, args[2], drops);
        };
        return checkpoint(f, in, &drops);
      },
      {x, bias, weight});
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_GT(r.checked, 0);
}

TEST(Recompute, ParametersOutsideTheInputsGetGradientsToo) {
  // The frozen-input case (a LoRA base, or a block over fixed features): no input needs a
  // gradient, the block's parameter still does.
  Generator init(2);
  Tensor x = randn({2, 3}, init);
  Tensor weight = randn({3, 3}, init).set_requires_grad(true);
  Tensor y = checkpoint([&](const std::vector<Tensor>& in) { return matmul(in[0], weight); }, {x},
                        nullptr);
  ASSERT_TRUE(y.requires_grad());
  sum(y).backward();
  Tensor expected = matmul(x.transpose(0, 1), ones({2, 3}));
  EXPECT_EQ(weight.grad().to_vector<float>(), expected.contiguous().to_vector<float>());
}

TEST(Recompute, AliasPassesItsSummedGradientOn) {
  Generator init(4);
  Tensor x = randn({2, 3}, init).set_requires_grad(true);
  const Tensor a = alias(x);
  EXPECT_EQ(a.raw_data(), x.raw_data());  // no copy
  sum(add(mul(a, a), a)).backward();
  std::vector<float> expected = x.to_vector<float>();
  for (float& v : expected) v = 2 * v + 1;
  EXPECT_EQ(x.grad().to_vector<float>(), expected);
}

TEST(Recompute, WithoutGradModeItOnlyCallsTheFunction) {
  Generator init(2);
  Tensor x = randn({2, 3}, init).set_requires_grad(true);
  NoGradGuard no_grad;
  Tensor y =
      checkpoint([](const std::vector<Tensor>& in) { return mul(in[0], in[0]); }, {x}, nullptr);
  EXPECT_FALSE(y.requires_grad());
}

TEST(Recompute, AnInputChangedInPlaceBeforeBackwardIsAnError) {
  Generator init(2);
  Tensor x = randn({2, 3}, init);
  Tensor weight = randn({3, 3}, init).set_requires_grad(true);
  Tensor y = checkpoint([&](const std::vector<Tensor>& in) { return matmul(in[0], weight); }, {x},
                        nullptr);
  x.add_(ones({2, 3}));
  EXPECT_THROW(sum(y).backward(), Error);
}

}  // namespace
}  // namespace heed
