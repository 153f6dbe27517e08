// Distillation's losses: values worked out by hand, the same values as their definitions
// composed of plain ops, f32 against f64, and float64 gradient checks of the student's side.
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

// The definition, composed of ops: T^2 / N * sum p_t (log p_t - log p_s).
double kl_by_definition(const Tensor& s, const Tensor& t, double temperature) {
  NoGradGuard no_grad;
  Tensor log_ps = log_softmax(s / temperature, 1), log_pt = log_softmax(t / temperature, 1);
  Tensor kl = sum(exp(log_pt) * (log_pt - log_ps));
  return kl.item() * temperature * temperature / static_cast<double>(s.size(0));
}

}  // namespace

TEST(SoftTargetKl, MatchesAHandWorkedRow) {
  // p_t = (3/4, 1/4) against p_s = (1/2, 1/2): 3/4 ln(3/2) + 1/4 ln(1/2).
  const double expected = 0.75 * std::log(1.5) + 0.25 * std::log(0.5);
  Tensor s = from_vector<double>({0.0, 0.0}, {1, 2});
  Tensor t = from_vector<double>({std::log(3.0), 0.0}, {1, 2});
  EXPECT_NEAR(soft_target_kl(s, t, 1.0).item(), expected, 1e-12);
  // At T = 2 the teacher's logits twice as far apart give the same distributions, and the
  // loss is scaled by T^2 = 4.
  Tensor t2 = from_vector<double>({2.0 * std::log(3.0), 0.0}, {1, 2});
  EXPECT_NEAR(soft_target_kl(s, t2, 2.0).item(), 4.0 * expected, 1e-12);
  // The same distributions: no divergence.
  EXPECT_NEAR(soft_target_kl(t, t, 1.0).item(), 0.0, 1e-15);
}

TEST(SoftTargetKl, IsTheMeanOverRowsOfItsDefinition) {
  for (double temperature : {1.0, 2.0, 0.5}) {
    Tensor s = random_tensor({5, 11}, 1, DType::f64) * 3.0;
    Tensor t = random_tensor({5, 11}, 2, DType::f64) * 3.0;
    EXPECT_NEAR(soft_target_kl(s, t, temperature).item(), kl_by_definition(s, t, temperature),
                1e-12)
        << "T = " << temperature;
  }
}

TEST(SoftTargetKl, F32AgreesWithF64) {
  Tensor s = random_tensor({64, 300}, 3, DType::f64) * 4.0;
  Tensor t = random_tensor({64, 300}, 4, DType::f64) * 4.0;
  const double exact = soft_target_kl(s, t, 2.0).item();
  const double f32 = soft_target_kl(s.to(DType::f32), t.to(DType::f32), 2.0).item();
  EXPECT_NEAR(f32, exact, 1e-5 * std::max(1.0, exact));

  Tensor s64 = s.clone(), s32 = s.to(DType::f32);
  s64.set_requires_grad(true);
  s32.set_requires_grad(true);
  soft_target_kl(s64, t, 2.0).backward();
  soft_target_kl(s32, t.to(DType::f32), 2.0).backward();
  EXPECT_LT(heed::testing::max_relative_error(s32.grad().to(DType::f64), s64.grad()), 1e-6);
}

TEST(SoftTargetKl, NoRowsIsNoLoss) {
  Tensor s = zeros({0, 4}, DType::f64);
  EXPECT_EQ(soft_target_kl(s, s, 2.0).item(), 0.0);
}

TEST(SoftTargetKl, RefusesATeacherThatWantsAGradientAndMismatchedRows) {
  Tensor s = param({2, 3}, 5), t = param({2, 3}, 6);
  EXPECT_THROW(soft_target_kl(s, t, 2.0), Error);
  EXPECT_THROW(soft_target_kl(s, random_tensor({2, 4}, 7, DType::f64), 2.0), Error);
  EXPECT_THROW(soft_target_kl(s, random_tensor({2, 3}, 7, DType::f64), 0.0), Error);
}

TEST(Gradcheck, SoftTargetKl) {
  const Tensor teacher = random_tensor({4, 7}, 8, DType::f64) * 2.0;
  for (double temperature : {1.0, 2.0}) {
    expect_gradcheck([&](const Inputs& x) { return soft_target_kl(x[0], teacher, temperature); },
                     {param({4, 7}, 9)});
  }
}

TEST(CosineEmbeddingLoss, MatchesHandWorkedRows) {
  // (1, 0) and (1, 1): cos = 1/sqrt(2); (2, 0) and (0, 3): cos = 0; mean of 1 - cos.
  Tensor a = from_vector<double>({1.0, 0.0, 2.0, 0.0}, {2, 2});
  Tensor b = from_vector<double>({1.0, 1.0, 0.0, 3.0}, {2, 2});
  EXPECT_NEAR(cosine_embedding_loss(a, b).item(), ((1.0 - 1.0 / std::sqrt(2.0)) + 1.0) / 2.0,
              1e-15);
  // Parallel rows of any length: no loss; opposite: 2.
  EXPECT_NEAR(cosine_embedding_loss(a, a * 5.0).item(), 0.0, 1e-15);
  EXPECT_NEAR(cosine_embedding_loss(a, -a).item(), 2.0, 1e-15);
}

TEST(CosineEmbeddingLoss, F32AgreesWithF64) {
  Tensor a = random_tensor({32, 256}, 10, DType::f64), b = random_tensor({32, 256}, 11, DType::f64);
  EXPECT_NEAR(cosine_embedding_loss(a.to(DType::f32), b.to(DType::f32)).item(),
              cosine_embedding_loss(a, b).item(), 1e-6);
}

TEST(Gradcheck, CosineEmbeddingLoss) {
  const Tensor b = random_tensor({3, 5}, 12, DType::f64);
  expect_gradcheck([&](const Inputs& x) { return cosine_embedding_loss(x[0], b); },
                   {param({3, 5}, 13)});
}
