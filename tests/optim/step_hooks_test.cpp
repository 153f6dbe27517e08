// Step hooks (PyTorch's register_step_pre_hook / register_step_post_hook): what ZeRO-1 attaches
// to an optimizer so that the code calling step() stays the same.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autograd/ops.h"
#include "optim/sgd.h"

namespace heed::optim {
namespace {

TEST(StepHooks, RunAroundEveryStepInOrderUntilRemoved) {
  Tensor w = full({2}, 1.0, DType::f32).set_requires_grad(true);
  SGD sgd(NamedTensors{{"w", w}}, {.lr = 0.5});
  std::vector<std::string> calls;
  const uint64_t pre = sgd.register_step_pre_hook([&] {
    // Before the update: the parameter still has its old value, and a hook may drop a gradient
    // so that the step skips that parameter (ZeRO-1 drops those other ranks own).
    calls.push_back("pre " + std::to_string(w.to_vector<float>()[0]));
  });
  sgd.register_step_post_hook(
      [&] { calls.push_back("post " + std::to_string(w.to_vector<float>()[0])); });
  sum(w).backward();
  sgd.step();
  EXPECT_EQ(calls, (std::vector<std::string>{"pre 1.000000", "post 0.500000"}));
  sgd.remove_step_hook(pre);
  sgd.step();
  EXPECT_EQ(calls.back(), "post 0.000000");
  EXPECT_EQ(calls.size(), 3u);
}

TEST(StepHooks, APreHookThatDropsAGradientKeepsThatParameterAsItWas) {
  Tensor mine = full({1}, 1.0, DType::f32).set_requires_grad(true);
  Tensor theirs = full({1}, 1.0, DType::f32).set_requires_grad(true);
  SGD sgd(NamedTensors{{"mine", mine}, {"theirs", theirs}}, {.lr = 0.5});
  sgd.register_step_pre_hook([&] { theirs.zero_grad(); });
  sum(add(mine, theirs)).backward();
  sgd.step();
  EXPECT_EQ(mine.to_vector<float>()[0], 0.5f);
  EXPECT_EQ(theirs.to_vector<float>()[0], 1.0f);
}

}  // namespace
}  // namespace heed::optim
