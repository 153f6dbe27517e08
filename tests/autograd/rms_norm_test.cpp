// T5's RMS layer norm: its f64 gradient check, values worked out by hand, and the f32 path
// against the f64 reference.
#include "support/test_util.h"

using namespace heed;
using heed::testing::expect_gradcheck;
using heed::testing::max_relative_error;
using heed::testing::param;
using heed::testing::random_tensor;

TEST(RmsNorm, Gradcheck) {
  expect_gradcheck([](const std::vector<Tensor>& x) { return rms_norm(x[0], x[1], 1e-6); },
                   {param({2, 3, 5}, 71), param({5}, 72)});
}

TEST(RmsNorm, DividesByTheRootMeanSquareWithoutCentring) {
  // Row [3, 4]: mean square 12.5, so the row is divided by sqrt(12.5 + 0.5) = sqrt(13).
  Tensor y = rms_norm(from_vector<double>({3, 4}, {1, 2}), from_vector<double>({1, 2}, {2}), 0.5);
  const std::vector<double> v = y.to_vector<double>();
  EXPECT_NEAR(v[0], 3.0 / std::sqrt(13.0), 1e-15);
  EXPECT_NEAR(v[1], 8.0 / std::sqrt(13.0), 1e-15);
}

namespace {
std::vector<Tensor> rms_norm_outputs(Tensor x, Tensor w, const Tensor& gy) {
  for (Tensor* t : {&x, &w}) *t = t->detach().set_requires_grad(true);
  Tensor y = rms_norm(x, w, 1e-6);
  sum(mul(y, gy)).backward();
  return {y, x.grad(), w.grad()};
}
}  // namespace

// Rows shorter than the 16 partial sums, with a tail past them, and more rows than the weight
// gradient's blocks.
TEST(RmsNorm, F32MatchesF64Reference) {
  auto f64 = [](const Tensor& t) { return t.to(DType::f64); };
  for (auto [rows, width] : {std::pair<int64_t, int64_t>{5, 7}, {37, 33}, {203, 256}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(width));
    Tensor x = random_tensor({rows, width}, 81, DType::f32) * 2.0 + 0.5;
    Tensor w = random_tensor({width}, 82, DType::f32);
    Tensor gy = random_tensor({rows, width}, 83, DType::f32);
    std::vector<Tensor> fast = rms_norm_outputs(x, w, gy);
    std::vector<Tensor> exact = rms_norm_outputs(f64(x), f64(w), f64(gy));
    for (size_t i = 0; i < fast.size(); ++i) {
      ASSERT_EQ(fast[i].dtype(), DType::f32);
      EXPECT_LT(max_relative_error(fast[i], exact[i]), 1e-5) << "output " << i;
    }
  }
}

TEST(RmsNorm, WrongWeightIsAnError) {
  EXPECT_THROW(rms_norm(zeros({2, 4}), ones({3})), Error);
}
