// flash_attention (the tiled attention with an online softmax): f64 gradient checks of every
// input (the distance-bias table too), and the fused op against the unfused ops it replaces
// (attention_dropout_values over q . k^T) in f32 and under bf16 products, for every mask, bias
// and dropout combination, on lengths that straddle the tiles (64 queries, 128 keys).
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/ops.h"
#include "autograd/random.h"
#include "support/test_util.h"

using namespace heed;
using heed::testing::expect_gradcheck;
using heed::testing::param;
using heed::testing::random_tensor;
using Inputs = std::vector<Tensor>;

namespace {

// A [B, Tk] padding mask: sequence 0 loses its last three keys, sequence 1 every key (a row
// with nothing to attend to: zeros from both paths), the rest keep all.
Tensor key_padding(int64_t batch, int64_t tk) {
  std::vector<uint8_t> keep(static_cast<size_t>(batch * tk), 1);
  for (int64_t j = std::max<int64_t>(0, tk - 3); j < tk; ++j) keep[j] = 0;
  if (batch > 1) std::fill(keep.begin() + tk, keep.begin() + 2 * tk, 0);
  return from_vector<uint8_t>(keep, {batch, tk});
}

struct Case {
  bool padding, causal, bias, dropout;
  int64_t tq, tk;
};

// Output and the gradients of q, k, v and the bias of one path on fresh leaves.
std::vector<Tensor> run(bool fused, const Case& c, const Inputs& inputs, const Tensor& weights,
                        double scale) {
  std::vector<Tensor> leaves;
  for (const Tensor& t : inputs) leaves.push_back(t.detach().clone().set_requires_grad(true));
  const Tensor& q = leaves[0];
  const Tensor& k = leaves[1];
  const Tensor& v = leaves[2];
  const Tensor bias = c.bias ? leaves[3] : Tensor();
  const Tensor keep = c.padding ? key_padding(q.size(0), c.tk) : Tensor();
  const double p = c.dropout ? 0.2 : 0.0;
  Generator g(7);
  g.reserve_blocks(5);  // not at the stream's start
  Tensor out;
  if (fused) {
    out = flash_attention(q, k, v, scale,
                          {.key_padding = keep,
                           .causal = c.causal,
                           .distance_bias = bias,
                           .dropout_p = p,
                           .generator = &g});
  } else {
    const Tensor mask = c.padding ? keep.reshape({q.size(0), 1, 1, c.tk}) : Tensor();
    out = attention_dropout_values(matmul(q, k.transpose(-1, -2)), v, scale, mask, c.causal, p, g,
                                   nullptr, nullptr, bias);
  }
  sum(mul(out, weights)).backward();
  std::vector<Tensor> results{out.contiguous()};
  for (const Tensor& t : leaves) results.push_back(t.grad());
  return results;
}

// Largest |a - b| over the largest |b| (at least 1): the error against the tensor's scale.
double scaled_error(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  EXPECT_EQ(x.size(), y.size());
  double worst = 0.0, largest = 1.0;
  for (size_t i = 0; i < y.size(); ++i) largest = std::max(largest, std::abs(y[i]));
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (std::isnan(x[i]) != std::isnan(y[i])) return INFINITY;
    if (!std::isnan(x[i])) worst = std::max(worst, std::abs(x[i] - y[i]));
  }
  return worst / largest;
}

}  // namespace

TEST(FlashAttention, Gradcheck) {
  // Within one tile: every mask, with and without the bias and dropout (its draws fixed by the
  // generator seeded inside f), Tq = Tk and a cache's Tq < Tk; T5's scale 1.
  for (const Case& c : {Case{false, false, false, false, 4, 4},
                        Case{true, false, true, false, 4, 5}, Case{false, true, true, true, 3, 6},
                        Case{true, true, false, true, 5, 5}, Case{true, true, true, true, 2, 5}}) {
    SCOPED_TRACE(fmt::format("padding {} causal {} bias {} dropout {} Tq {} Tk {}", c.padding,
                             c.causal, c.bias, c.dropout, c.tq, c.tk));
    const Tensor keep = c.padding ? key_padding(2, c.tk) : Tensor();
    Inputs inputs{param({2, 2, c.tq, 3}, 11), param({2, 2, c.tk, 3}, 12),
                  param({2, 2, c.tk, 3}, 13)};
    if (c.bias) inputs.push_back(param({2, c.tq + c.tk - 1}, 14));
    expect_gradcheck(
        [&](const Inputs& x) {
          Generator g(3);
          return flash_attention(x[0], x[1], x[2], c.bias ? 1.0 : 0.6,
                                 {.key_padding = keep,
                                  .causal = c.causal,
                                  .distance_bias = c.bias ? x[3] : Tensor(),
                                  .dropout_p = c.dropout ? 0.3 : 0.0,
                                  .generator = &g});
        },
        inputs);
  }
}

TEST(FlashAttention, GradcheckAcrossTiles) {
  // 65 queries (two query tiles, the second of one row) against 129 keys (two key tiles, the
  // same), causal with a bias: the online softmax's rescaling and backward's per-tile sums,
  // checked in f64. Heads of size 1 keep the Jacobian small.
  expect_gradcheck(
      [](const Inputs& x) {
        return flash_attention(x[0], x[1], x[2], 0.5, {.causal = true, .distance_bias = x[3]});
      },
      {param({1, 1, 65, 1}, 21), param({1, 1, 129, 1}, 22), param({1, 1, 129, 1}, 23),
       param({1, 193}, 24)});
}

// Fused against unfused for every combination of {no mask, padding, causal, both} x {no bias,
// distance bias} x {no dropout, dropout} x {Tq = Tk, Tq < Tk}, at odd lengths that are not
// tile multiples (d = 24 pads to 32 lanes), with a sequence whose every key is padded.
void expect_fused_matches_unfused(MatmulPrecision precision, double tolerance) {
  heed::testing::MatmulPrecisionScope scope(precision);
  for (auto [tq, tk] : {std::pair<int64_t, int64_t>{150, 150}, {37, 201}}) {
    const int64_t B = 3, heads = 2, d = 24;
    const Inputs inputs{random_tensor({B, heads, tq, d}, 41, DType::f32),
                        random_tensor({B, heads, tk, d}, 42, DType::f32),
                        random_tensor({B, heads, tk, d}, 43, DType::f32),
                        random_tensor({heads, tq + tk - 1}, 44, DType::f32)};
    const Tensor weights = random_tensor({B, heads, tq, d}, 45, DType::f32);
    for (int mask = 0; mask < 4; ++mask) {
      for (bool bias : {false, true}) {
        for (bool dropout : {false, true}) {
          const Case c{(mask & 1) != 0, (mask & 2) != 0, bias, dropout, tq, tk};
          SCOPED_TRACE(fmt::format("padding {} causal {} bias {} dropout {} Tq {} Tk {}", c.padding,
                                   c.causal, bias, dropout, tq, tk));
          const double scale = 1.0 / std::sqrt(static_cast<double>(d));
          const std::vector<Tensor> fused = run(true, c, inputs, weights, scale);
          const std::vector<Tensor> unfused = run(false, c, inputs, weights, scale);
          const char* names[] = {"output", "dq", "dk", "dv", "dbias"};
          for (size_t i = 0; i < (bias ? 5u : 4u); ++i) {
            EXPECT_LT(scaled_error(fused[i], unfused[i]), tolerance) << names[i];
          }
        }
      }
    }
  }
}

TEST(FlashAttention, MatchesUnfusedInF32) {
  // Sums in another order over at most a few hundred terms of size ~1: errors of a few f32
  // ulps of the largest value (1.2e-7 each).
  expect_fused_matches_unfused(MatmulPrecision::f32, 1e-5);
}

TEST(FlashAttention, MatchesUnfusedUnderBf16Products) {
  // Both paths round q, k, v, dO and dS to bf16 alike; the unfused path rounds the
  // probabilities for its products too, the fused one keeps them f32, so each term of a
  // probability-weighted sum may differ by a bf16 rounding, u = 2^-8, and a sum of such terms
  // by at most u times its largest term. 4u = 2^-6 leaves a factor of two for the gradients,
  // which carry the output's difference through D, and one for dS's roundings, which a
  // difference in the last f32 bit can move by one bf16 step.
  expect_fused_matches_unfused(MatmulPrecision::bf16, 0x1p-6);
}

TEST(FlashAttention, DropsTheSameElementsAsTheUnfusedPath) {
  // q = 0 makes every visible key equally likely and v = I writes each probability into its own
  // column, so the output is the dropped probabilities themselves: zero exactly where an
  // element is dropped or masked. Both paths must zero the same elements.
  const int64_t B = 2, heads = 3, tq = 70, tk = 133;
  Tensor q = zeros({B, heads, tq, tk}), k = random_tensor({B, heads, tk, tk}, 51, DType::f32);
  Tensor v = Tensor::empty({B, heads, tk, tk});
  {
    std::vector<float> eye(static_cast<size_t>(B * heads * tk * tk), 0.0f);
    for (int64_t m = 0; m < B * heads; ++m) {
      for (int64_t j = 0; j < tk; ++j) eye[(m * tk + j) * tk + j] = 1.0f;
    }
    v = from_vector<float>(eye, {B, heads, tk, tk});
  }
  for (bool causal : {false, true}) {
    const Tensor keep = key_padding(B, tk);
    Generator g1(9), g2(9);
    const Tensor fused =
        flash_attention(q, k, v, 1.0,
                        {.key_padding = keep, .causal = causal, .dropout_p = 0.4, .generator = &g1})
            .contiguous();
    const Tensor unfused = attention_dropout_values(matmul(q, k.transpose(-1, -2)), v, 1.0,
                                                    keep.reshape({B, 1, 1, tk}), causal, 0.4, g2);
    const std::vector<float> a = fused.to_vector<float>(), b = unfused.to_vector<float>();
    int64_t kept = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i] == 0.0f, b[i] == 0.0f) << "element " << i << " causal " << causal;
      kept += a[i] != 0.0f;
    }
    EXPECT_GT(kept, 0);
    // Both reserved the same stretch of the stream: the next draws agree.
    EXPECT_EQ(g1.reserve_blocks(1), g2.reserve_blocks(1));
  }
}

TEST(FlashAttention, PickedQueriesDropWhatAllQueriesDrop) {
  // Queries 1 and 4 of 6 (QueryRows): the rows attention over all six draws for them.
  const int64_t B = 2, heads = 2, t = 6, tk = 6;
  const Tensor q_all = random_tensor({B, heads, t, 4}, 61, DType::f32);
  const Tensor k = random_tensor({B, heads, tk, 4}, 62, DType::f32);
  const Tensor v = random_tensor({B, heads, tk, 4}, 63, DType::f32);
  const Tensor positions = from_vector<int64_t>({1, 4, 1, 4}, {B, 2});
  const QueryRows picked{positions, t};
  Generator g1(4), g2(4);
  const Tensor all = flash_attention(q_all, k, v, 0.5, {.dropout_p = 0.5, .generator = &g1});
  const Tensor q = concat({q_all.slice(2, 1, 2), q_all.slice(2, 4, 5)}, 2);
  const Tensor some =
      flash_attention(q, k, v, 0.5, {.dropout_p = 0.5, .generator = &g2, .queries = &picked});
  const Tensor expected = concat({all.slice(2, 1, 2), all.slice(2, 4, 5)}, 2);
  EXPECT_LT(heed::testing::max_relative_error(some, expected), 1e-6);
}

TEST(FlashAttention, BadInputsAreErrors) {
  const Tensor q = zeros({1, 2, 3, 4}), k = zeros({1, 2, 5, 4});
  EXPECT_THROW(flash_attention(q, k, zeros({1, 2, 4, 4}), 1.0), Error);
  EXPECT_THROW(flash_attention(q, k, k, 1.0, {.distance_bias = zeros({2, 6})}), Error);
  EXPECT_THROW(flash_attention(q, k, k, 1.0, {.key_padding = zeros({1, 5})}), Error);
  EXPECT_THROW(flash_attention(q, k, k, 1.0, {.dropout_p = 0.1}), Error);
}
