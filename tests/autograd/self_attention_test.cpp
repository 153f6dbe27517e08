// self_attention_qkv against the ops it replaces: the heads sliced from the packed projection,
// q . k^T, attention_dropout_values (or the softmax, then the product with v), heads merged.
#include <gtest/gtest.h>

#include <cmath>

#include "autograd/ops.h"
#include "autograd/random.h"
#include "support/test_util.h"

using namespace heed;
using heed::testing::expect_same_bits;
using heed::testing::max_relative_error;
using heed::testing::random_tensor;

namespace {

struct PathResult {
  Tensor out, probs, grad;
};

// Forward and backward of one path on a fresh leaf, with a generator at a fixed state.
PathResult run_path(bool fused, const Tensor& qkv_in, int64_t heads, const Tensor& mask,
                    bool causal, double p, const Tensor& weights) {
  Tensor qkv = qkv_in.clone();
  qkv.set_requires_grad(true);
  Generator g(5);
  g.reserve_blocks(3);
  PathResult r;
  if (fused) {
    r.out = self_attention_qkv(qkv, heads, mask, causal, p, &g, &r.probs);
  } else {
    const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3, d = C / heads;
    auto part = [&](int64_t i) {
      return qkv.slice(-1, i * C, (i + 1) * C).reshape({B, T, heads, d}).permute({0, 2, 1, 3});
    };
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    Tensor scores = matmul(part(0), part(1).transpose(-1, -2));
    Tensor context;
    if (p > 0.0) {
      context = attention_dropout_values(scores, part(2), scale, mask, causal, p, g, &r.probs);
    } else {
      r.probs = attention_softmax(scores, scale, mask, causal);
      context = matmul(r.probs, part(2));
    }
    r.out = context.permute({0, 2, 1, 3}).reshape({B, T, C});
  }
  sum(mul(r.out, weights)).backward();
  r.grad = qkv.grad();
  return r;
}

Tensor padding_mask(int64_t T) {
  std::vector<uint8_t> keep(2 * T, 1);
  keep[3] = keep[T + T - 1] = keep[T + 5] = 0;  // both sequences lose keys
  return from_vector<uint8_t>(keep, {2, 1, 1, T});
}

}  // namespace

TEST(SelfAttentionQkv, GivesTheSameBitsAsTheOpsItReplaces) {
  // f64 runs the reference loops and f32 oneDNN on the same operands, so forward, the
  // probabilities and the packed gradient agree to the bit: with and without dropout, padding
  // mask and causal cut; rows of 37 keys straddle Philox blocks and bytes of keep bits.
  const int64_t T = 37, heads = 3;
  for (DType dtype : {DType::f32, DType::f64}) {
    for (double p : {0.0, 0.2}) {
      for (bool causal : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << dtype_name(dtype) << ", dropout " << p << ", causal " << causal);
        Tensor qkv = random_tensor({2, T, 3 * heads * 8}, 31, dtype);
        Tensor weights = random_tensor({2, T, heads * 8}, 33, dtype);
        PathResult fused = run_path(true, qkv, heads, padding_mask(T), causal, p, weights);
        PathResult unfused = run_path(false, qkv, heads, padding_mask(T), causal, p, weights);
        expect_same_bits(fused.out, unfused.out, "output");
        expect_same_bits(fused.probs, unfused.probs, "probabilities");
        expect_same_bits(fused.grad, unfused.grad, "gradient of q, k and v");
      }
    }
  }
}

TEST(SelfAttentionQkv, MatchesTheOpsItReplacesWithBf16Products) {
  // Both paths round the same values to bf16 and accumulate in f32; the products read the
  // heads in different layouts (strided views of one rounding here, dense copies there), so
  // oneDNN may add in another order: f32 rounding of sums of <= 37 terms, through three
  // products in a row, stays under 1e-5 of max(1, |value|).
  heed::testing::MatmulPrecisionScope scope(MatmulPrecision::bf16);
  const int64_t T = 37, heads = 3;
  for (double p : {0.0, 0.2}) {
    for (bool causal : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "dropout " << p << ", causal " << causal);
      Tensor qkv = random_tensor({2, T, 3 * heads * 8}, 41, DType::f32);
      Tensor weights = random_tensor({2, T, heads * 8}, 43, DType::f32);
      PathResult fused = run_path(true, qkv, heads, padding_mask(T), causal, p, weights);
      PathResult unfused = run_path(false, qkv, heads, padding_mask(T), causal, p, weights);
      EXPECT_LT(max_relative_error(fused.out, unfused.out), 1e-5);
      EXPECT_LT(max_relative_error(fused.probs, unfused.probs), 1e-5);
      EXPECT_LT(max_relative_error(fused.grad, unfused.grad), 1e-5);
    }
  }
}

TEST(SelfAttentionQkv, RejectsWhatItCannotSplit) {
  Generator g(9);
  const Tensor qkv = random_tensor({2, 5, 18}, 51, DType::f32);
  EXPECT_THROW(self_attention_qkv(qkv, 4, Tensor(), false, 0.0, &g), Error);  // 6 / 4 heads
  EXPECT_THROW(self_attention_qkv(qkv.reshape({10, 18}), 2, Tensor(), false, 0.0, &g), Error);
  EXPECT_THROW(
      self_attention_qkv(Tensor::empty({2, 5, 0}, DType::f32), 2, Tensor(), false, 0.0, &g),
      Error);  // no columns at all
  EXPECT_THROW(self_attention_qkv(qkv, 2, Tensor(), false, 0.1, nullptr), Error);
  EXPECT_THROW(self_attention_qkv(qkv, 2, Tensor(), false, 1.0, &g), Error);
  EXPECT_THROW(
      self_attention_qkv(qkv, 2, random_tensor({2, 1, 1, 4}, 52, DType::f32), false, 0.0, &g),
      Error);  // a mask for 4 keys, not 5
}
