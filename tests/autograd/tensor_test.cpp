#include <gtest/gtest.h>

#include "autograd/ops.h"

using namespace heed;

TEST(Tensor, ZerosHaveShape) {
  Tensor t = zeros({2, 3});
  EXPECT_EQ(t.numel(), 6);
}
