// attention_softmax's distance bias ([heads, Tq + Tk - 1], added by the softmax kernel): its f64
// gradient checks (the bias's gradient included), and the kernel against the bias materialised
// as a [heads, Tq, Tk] tensor added to the scores.
#include "autograd/ops/attention_softmax_rows.h"
#include "support/test_util.h"

using namespace heed;
using heed::testing::expect_gradcheck;
using heed::testing::max_relative_error;
using heed::testing::param;
using heed::testing::random_tensor;
using Inputs = std::vector<Tensor>;

namespace {

// The bias as a [heads, Tq, Tk] tensor, entry (h, q, k) = bias[h, k - q + Tq - 1], gathered by
// differentiable ops.
Tensor materialised(const Tensor& bias, int64_t tq, int64_t tk) {
  std::vector<int64_t> ids;
  for (int64_t q = 0; q < tq; ++q) {
    for (int64_t k = 0; k < tk; ++k) ids.push_back(k - q + tq - 1);
  }
  const int64_t heads = bias.size(0);
  Tensor rows = embedding(contiguous(transpose(bias, 0, 1)), from_vector<int64_t>(ids, {tq * tk}));
  return permute(reshape(rows, {tq, tk, heads}), {2, 0, 1});
}

// Scores [2, 3, Tq, Tk]; the second sequence's last key padded away.
Tensor padding_keep(int64_t tk) {
  std::vector<uint8_t> keep(2 * tk, 1);
  keep.back() = 0;
  return from_vector<uint8_t>(keep, {2, 1, 1, tk});
}

}  // namespace

TEST(DistanceBias, GradcheckSoftmax) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "bidirectional");
    const Tensor keep = padding_keep(4);
    expect_gradcheck(
        [&](const Inputs& x) { return attention_softmax(x[0], 0.7, keep, causal, x[1]); },
        {param({2, 3, 4, 4}, 91), param({3, 7}, 92)});
  }
}

TEST(DistanceBias, GradcheckFewerQueriesThanKeys) {
  // Two new queries over five keys, as a cache's step aligns them (causal: to the last keys).
  expect_gradcheck(
      [](const Inputs& x) { return attention_softmax(x[0], 1.0, Tensor(), true, x[1]); },
      {param({1, 2, 2, 5}, 93), param({2, 6}, 94)});
}

TEST(DistanceBias, GradcheckDropoutValues) {
  const Tensor keep = padding_keep(4);
  expect_gradcheck(
      [&](const Inputs& x) {
        Generator g(8);
        return attention_dropout_values(x[0], x[1], 0.5, keep, true, 0.3, g, nullptr, nullptr,
                                        x[2]);
      },
      {param({2, 3, 4, 4}, 95), param({2, 3, 4, 2}, 96), param({3, 7}, 97)});
}

TEST(DistanceBias, GradientSumsTheDiagonals) {
  // One head, Tq = 2, Tk = 3: distance k - q + 1 for (q, k) is [[1, 2, 3], [0, 1, 2]].
  const Tensor g = from_vector<double>({1, 2, 3, 10, 20, 30}, {1, 1, 2, 3});
  const std::vector<double> expected{10, 1 + 20, 2 + 30, 3};
  EXPECT_EQ(distance_bias_gradient(g, 1).to_vector<double>(), expected);
}

// The kernel's bias against the materialised one: outputs and the gradients of the scores, the
// values and the bias, in f32 and f64, with and without dropout, padding and causal masks.
TEST(DistanceBias, MatchesMaterialisedBias) {
  for (DType dtype : {DType::f64, DType::f32}) {
    for (bool causal : {false, true}) {
      for (double p : {0.0, 0.25}) {
        for (auto [tq, tk] : {std::pair<int64_t, int64_t>{5, 5}, {2, 6}, {1, 7}}) {
          SCOPED_TRACE(fmt::format("{} causal {} p {} Tq {} Tk {}", dtype, causal, p, tq, tk));
          const Tensor keep = padding_keep(tk);
          const Tensor scores0 = random_tensor({2, 3, tq, tk}, 101, dtype);
          const Tensor v0 = random_tensor({2, 3, tk, 4}, 102, dtype);
          const Tensor bias0 = random_tensor({3, tq + tk - 1}, 103, dtype);
          const Tensor gy = random_tensor({2, 3, tq, 4}, 104, dtype);
          auto run = [&](bool fused) {
            Tensor s = scores0.detach().set_requires_grad(true);
            Tensor v = v0.detach().set_requires_grad(true);
            Tensor b = bias0.detach().set_requires_grad(true);
            Generator g(5);
            Tensor out =
                fused ? attention_dropout_values(s, v, 0.5, keep, causal, p, g, nullptr, nullptr, b)
                      : attention_dropout_values(add(s, materialised(b, tq, tk)), v, 0.5, keep,
                                                 causal, p, g);
            sum(mul(out, gy)).backward();
            return std::vector<Tensor>{out, s.grad(), v.grad(), b.grad()};
          };
          const std::vector<Tensor> fused = run(true), reference = run(false);
          const double tolerance = dtype == DType::f64 ? 1e-12 : 1e-5;
          for (size_t i = 0; i < fused.size(); ++i)
            EXPECT_LT(max_relative_error(fused[i], reference[i]), tolerance) << "output " << i;
        }
      }
    }
  }
}

TEST(DistanceBias, MisshapenBiasIsAnError) {
  const Tensor scores = random_tensor({1, 2, 3, 4}, 1, DType::f32);
  EXPECT_THROW(attention_softmax(scores, 1.0, Tensor(), false, zeros({2, 7})), Error);
  EXPECT_THROW(attention_softmax(scores, 1.0, Tensor(), false, zeros({3, 6})), Error);
  EXPECT_THROW(attention_softmax(scores, 1.0, Tensor(), false, zeros({2, 6}, DType::f64)), Error);
}
