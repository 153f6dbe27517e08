// Post-accumulate-grad hooks (PyTorch's register_post_accumulate_grad_hook): what data-parallel
// training starts its gradient sums from.
#include <gtest/gtest.h>

#include <vector>

#include "autograd/grad_ready_hook.h"
#include "autograd/ops.h"
#include "support/test_util.h"

using namespace heed;

TEST(GradReadyHook, RunsOnceALeafsGradientIsFinalAndStopsWithItsHandle) {
  Tensor x = from_vector<double>({1.0, 2.0}, {2});
  x.set_requires_grad(true);
  std::vector<std::vector<double>> seen;
  {
    GradHookHandle handle = register_post_accumulate_grad_hook(
        x, [&](const TensorImpl&) { seen.push_back(x.grad().to_vector<double>()); });
    // x is used three times: the hook sees the sum of all three, once.
    sum(add(mul(x, x), mul(x, 3.0))).backward();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0], (std::vector<double>{5.0, 7.0}));
    sum(mul(x, 2.0)).backward();  // accumulates: the hook sees the running total
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[1], (std::vector<double>{7.0, 9.0}));
  }
  sum(x).backward();  // the handle is gone, and so is the hook
  EXPECT_EQ(seen.size(), 2u);
}

TEST(GradReadyHook, HooksRunInOrderAndAHandleMayOutliveItsTensor) {
  std::vector<int> order;
  GradHookHandle first, second;
  {
    Tensor w = from_vector<float>({1.0f}, {1});
    w.set_requires_grad(true);
    first = register_post_accumulate_grad_hook(w, [&](const TensorImpl&) { order.push_back(1); });
    second = register_post_accumulate_grad_hook(w, [&](const TensorImpl&) { order.push_back(2); });
    sum(w).backward();
  }
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  first.remove();  // the tensor is gone: nothing to remove it from, and no error
}

TEST(GradReadyHook, OnlyLeavesThatRequireAGradientTakeOne) {
  Tensor plain = from_vector<float>({1.0f}, {1});
  EXPECT_THROW((void)register_post_accumulate_grad_hook(plain, [](const TensorImpl&) {}), Error);
  Tensor w = from_vector<float>({1.0f}, {1});
  w.set_requires_grad(true);
  EXPECT_THROW((void)register_post_accumulate_grad_hook(mul(w, 2.0), [](const TensorImpl&) {}),
               Error);
}
