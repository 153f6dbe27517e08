// attention_dropout_values against the two ops it fuses (attention_softmax_dropout, then
// matmul), and the memory it exists to save.
#include <gtest/gtest.h>

#include "autograd/allocator.h"
#include "autograd/ops.h"
#include "autograd/random.h"
#include "support/test_util.h"

using namespace heed;
using heed::testing::expect_same_bits;
using heed::testing::random_tensor;

namespace {

struct PathResult {
  Tensor out, probs, grad_scores, grad_v;
};

// Forward and backward of one path on fresh leaves, with a generator at a fixed state.
PathResult run_path(bool fused, const Tensor& scores_in, const Tensor& v_in, const Tensor& mask,
                    bool causal, const Tensor& weights) {
  Tensor scores = scores_in.clone(), v = v_in.clone();
  scores.set_requires_grad(true);
  v.set_requires_grad(true);
  Generator g(5);
  g.reserve_blocks(3);
  PathResult r;
  r.out = fused ? attention_dropout_values(scores, v, 0.3, mask, causal, 0.2, g, &r.probs)
                : matmul(attention_softmax_dropout(scores, 0.3, mask, causal, 0.2, g, &r.probs), v);
  sum(mul(r.out, weights)).backward();
  r.grad_scores = scores.grad();
  r.grad_v = v.grad();
  return r;
}

}  // namespace

TEST(AttentionDropoutValues, GivesTheSameBitsAsSoftmaxDropoutThenMatmul) {
  // The same products on the same operands (the dropped probabilities recomputed by the same
  // multiplications), so forward and both gradients agree to the bit: f32, f64 and bf16
  // products; rows of 5 keys (many rows per pass), 37 (straddling Philox blocks and bytes of
  // keep bits) and 1,100 (a row in pieces); a padding mask and the causal cut remove keys.
  for (const int64_t tk : {int64_t{5}, int64_t{37}, int64_t{1100}}) {
    std::vector<uint8_t> keep(tk, 1);
    keep[3] = keep[tk / 2] = 0;
    Tensor mask = from_vector<uint8_t>(keep, {1, 1, 1, tk});
    const int64_t tq = tk > 100 ? 3 : tk;
    for (MatmulPrecision precision : {MatmulPrecision::f32, MatmulPrecision::bf16}) {
      heed::testing::MatmulPrecisionScope scope(precision);
      for (DType dtype : {DType::f32, DType::f64}) {
        if (precision == MatmulPrecision::bf16 && dtype == DType::f64) continue;  // f64 stays
        for (bool causal : {false, true}) {
          SCOPED_TRACE(::testing::Message()
                       << tk << " keys, bf16 products " << (precision == MatmulPrecision::bf16)
                       << ", " << dtype_name(dtype) << ", causal " << causal);
          Tensor scores = random_tensor({2, 3, tq, tk}, 31, dtype);
          Tensor v = random_tensor({2, 3, tk, 8}, 32, dtype);
          Tensor weights = random_tensor({2, 3, tq, 8}, 33, dtype);
          PathResult fused = run_path(true, scores, v, mask, causal, weights);
          PathResult unfused = run_path(false, scores, v, mask, causal, weights);
          expect_same_bits(fused.out, unfused.out, "output");
          expect_same_bits(fused.probs, unfused.probs, "probabilities");
          expect_same_bits(fused.grad_scores, unfused.grad_scores, "gradient of the scores");
          expect_same_bits(fused.grad_v, unfused.grad_v, "gradient of the values");
        }
      }
    }
  }
}

// The softmax and dropout pass splits its rows into groups across the threads; each element
// draws from its own counter, so one thread and two give the same bits (that the draws are
// dropout()'s own is Ops.FusedAttentionSoftmaxDropoutIsSoftmaxThenDropout). 12 keys make 5 groups
// of 85 rows, which two threads take only because the pass weighs an element with dropout as
// 8 operations (G2P's short sequences); 37 keys straddle Philox blocks and bytes of keep bits.
// f32 and bf16 products (the dropped probabilities written in bf16), with a padding mask.
TEST(AttentionDropoutValues, GivesTheSameBitsOnOneThreadAndTwo) {
  struct ThreadsScope {
    int saved = num_threads();
    ~ThreadsScope() { set_num_threads(saved); }
  } restore;
  for (const int64_t t : {int64_t{12}, int64_t{37}}) {
    std::vector<uint8_t> keep(t, 1);
    keep[2] = 0;
    Tensor mask = from_vector<uint8_t>(keep, {1, 1, 1, t});
    for (MatmulPrecision precision : {MatmulPrecision::f32, MatmulPrecision::bf16}) {
      heed::testing::MatmulPrecisionScope scope(precision);
      for (bool causal : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << t << " keys, bf16 products " << (precision == MatmulPrecision::bf16)
                     << ", causal " << causal);
        Tensor scores = random_tensor({8, 4, t, t}, 34, DType::f32);
        Tensor v = random_tensor({8, 4, t, 8}, 35, DType::f32);
        Tensor weights = random_tensor({8, 4, t, 8}, 36, DType::f32);
        set_num_threads(1);
        PathResult one = run_path(true, scores, v, mask, causal, weights);
        set_num_threads(2);
        PathResult two = run_path(true, scores, v, mask, causal, weights);
        expect_same_bits(one.out, two.out, "output");
        expect_same_bits(one.probs, two.probs, "probabilities");
        expect_same_bits(one.grad_scores, two.grad_scores, "gradient of the scores");
        expect_same_bits(one.grad_v, two.grad_v, "gradient of the values");
      }
    }
  }
}

TEST(AttentionDropoutValues, PickedQueriesDropWhatAllQueriesWouldDrop) {
  // Scores of 3 of 7 queries per sequence (in any order) drop the elements that the scores
  // of all 7 drop in those rows, and leave the generator where all 7 would: the same
  // probabilities and outputs, the same gradients where only those rows are read. Rows of
  // 37 keys (straddling Philox blocks and bytes of keep bits) and 4,100 (a row in pieces);
  // f64, f32, and f32 with bf16 products (the dropped probabilities rounded as they are
  // drawn). In f64 a row's products sum in the same order whatever the other rows (the bits
  // agree), except the values' gradient, a sum over the rows, taken here in the picked
  // order; oneDNN's kernels may split a sum otherwise for 18 rows than for 42.
  const int64_t B = 2, H = 3, T = 7, Q = 3, D = 8;
  const std::vector<int64_t> positions{4, 0, 6, 2, 5, 3};  // [B, Q]
  // Rows [b, h, positions[b, j]] of a [B, H, T, n] tensor, as [B, H, Q, n].
  auto pick = [&](const Tensor& full) {
    const int64_t n = full.size(-1);
    const std::vector<double> all = full.to(DType::f64).to_vector<double>();
    std::vector<double> picked;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t j = 0; j < Q; ++j) {
          const auto row = all.begin() + ((b * H + h) * T + positions[b * Q + j]) * n;
          picked.insert(picked.end(), row, row + n);
        }
      }
    }
    return from_vector<double>(picked, {B, H, Q, n}).to(full.dtype());
  };
  for (const int64_t Tk : {int64_t{37}, int64_t{4100}}) {
    std::vector<uint8_t> keep(Tk, 1);
    keep.back() = 0;  // the last key padded away
    const Tensor mask = from_vector<uint8_t>(keep, {1, 1, 1, Tk});
    for (const bool bf16_products : {false, true}) {
      heed::testing::MatmulPrecisionScope scope(bf16_products ? MatmulPrecision::bf16
                                                              : MatmulPrecision::f32);
      for (DType dtype : {DType::f64, DType::f32}) {
        if (bf16_products && dtype == DType::f64) continue;  // f64 products stay f64
        SCOPED_TRACE(::testing::Message() << Tk << " keys, " << dtype_name(dtype)
                                          << ", bf16 products " << bf16_products);
        const bool exact = dtype == DType::f64;
        Tensor scores = random_tensor({B, H, T, Tk}, 71, dtype);
        Tensor v = random_tensor({B, H, Tk, D}, 72, dtype);
        Tensor weights = random_tensor({B, H, Q, D}, 73, dtype);
        Tensor results[2][4];  // [picked?]{output, probabilities, gradient of scores, of v}
        uint64_t next_offset[2];
        for (bool picked : {false, true}) {
          Tensor s = picked ? pick(scores) : scores.clone(), vv = v.clone();
          s.set_requires_grad(true);
          vv.set_requires_grad(true);
          Generator g(9);
          g.reserve_blocks(5);
          const QueryRows rows{from_vector<int64_t>(positions, {B, Q}), T};
          Tensor probs;
          Tensor out = attention_dropout_values(s, vv, 0.4, mask, false, 0.3, g, &probs,
                                                picked ? &rows : nullptr);
          next_offset[picked] = g.reserve_blocks(1);
          // The full path's gradient reaches only the picked rows: their weights, zero
          // elsewhere.
          Tensor w = weights;
          if (!picked) {
            std::vector<double> full(static_cast<size_t>(B * H * T * D), 0.0);
            const std::vector<double> given = weights.to(DType::f64).to_vector<double>();
            for (int64_t bh = 0; bh < B * H; ++bh) {
              for (int64_t j = 0; j < Q; ++j) {
                std::copy_n(given.begin() + (bh * Q + j) * D, D,
                            full.begin() + (bh * T + positions[bh / H * Q + j]) * D);
              }
            }
            w = from_vector<double>(full, {B, H, T, D}).to(dtype);
          }
          sum(mul(out, w)).backward();
          results[picked][0] = picked ? out : pick(out);
          results[picked][1] = picked ? probs : pick(probs);
          results[picked][2] = picked ? s.grad() : pick(s.grad());
          results[picked][3] = vv.grad();
        }
        EXPECT_EQ(next_offset[true], next_offset[false]);
        const char* names[4] = {"output", "probabilities", "gradient of the scores",
                                "gradient of the values"};
        for (int i = 0; i < 4; ++i) {
          if ((exact && i < 3) || i == 1) {
            expect_same_bits(results[true][i], results[false][i], names[i]);
          } else {
            // The same terms summed in another order: a few ulps of f32 (or f64).
            EXPECT_LT(heed::testing::max_relative_error(results[true][i], results[false][i]),
                      exact ? 1e-14 : 1e-5)
                << names[i];
          }
        }
      }
    }
  }
}

TEST(AttentionDropoutValues, PickedQueriesMustBeInTheSequence) {
  Generator g(10);
  Tensor scores = random_tensor({1, 2, 2, 5}, 74, DType::f32);
  Tensor v = random_tensor({1, 2, 5, 3}, 75, DType::f32);
  const QueryRows outside{from_vector<int64_t>({1, 4}, {1, 2}), 4};
  EXPECT_THROW(attention_dropout_values(scores, v, 0.5, Tensor(), false, 0.1, g, nullptr, &outside),
               Error);
  const QueryRows misshapen{from_vector<int64_t>({1, 2, 3}, {1, 3}), 4};
  EXPECT_THROW(
      attention_dropout_values(scores, v, 0.5, Tensor(), false, 0.1, g, nullptr, &misshapen),
      Error);
  const QueryRows inside{from_vector<int64_t>({1, 2}, {1, 2}), 4};
  EXPECT_THROW(attention_dropout_values(scores, v, 0.5, Tensor(), true, 0.1, g, nullptr, &inside),
               Error);  // causal: each row's cut would need its position
}

TEST(AttentionDropoutValues, HoldsOneProbabilityTensorLessUntilBackward) {
  // What stays allocated after forward: the unfused pair keeps the dropped probabilities for
  // the product's backward; the fused op does not.
  const Shape shape{2, 4, 64, 64};
  const size_t probability_bytes = 2 * 4 * 64 * 64 * sizeof(float);
  Tensor scores = random_tensor(shape, 41, DType::f32),
         v = random_tensor({2, 4, 64, 16}, 42, DType::f32);
  scores.set_requires_grad(true);
  size_t held[2];
  for (bool fused : {false, true}) {
    // Blocks cached by earlier tests could serve a request from a larger size class, which
    // counts as the larger block: start from none.
    empty_cache();
    Generator g(6);
    const size_t before = allocator_stats().allocated_bytes;
    Tensor out = fused
                     ? attention_dropout_values(scores, v, 0.25, Tensor(), false, 0.1, g)
                     : matmul(attention_softmax_dropout(scores, 0.25, Tensor(), false, 0.1, g), v);
    held[fused] = allocator_stats().allocated_bytes - before;
  }
  EXPECT_EQ(held[false] - held[true], probability_bytes);
}

TEST(AttentionDropoutValues, NoDropoutIsSoftmaxThenMatmul) {
  Tensor scores = random_tensor({1, 2, 5, 5}, 51, DType::f64);
  Tensor v = random_tensor({1, 2, 5, 3}, 52, DType::f64);
  Generator g(7);
  Tensor probs;
  Tensor out = attention_dropout_values(scores, v, 0.5, Tensor(), true, 0.0, g, &probs);
  expect_same_bits(out, matmul(attention_softmax(scores, 0.5, Tensor(), true), v), "output");
  expect_same_bits(probs, attention_softmax(scores, 0.5, Tensor(), true), "probabilities");
}

TEST(AttentionDropoutValues, RejectsValuesThatDoNotMatchTheScores) {
  Generator g(8);
  Tensor scores = random_tensor({1, 2, 5, 5}, 61, DType::f32);
  EXPECT_THROW(attention_dropout_values(scores, random_tensor({1, 2, 4, 3}, 62, DType::f32), 0.5,
                                        Tensor(), false, 0.1, g),
               Error);
  EXPECT_THROW(attention_dropout_values(scores, random_tensor({1, 3, 5, 3}, 63, DType::f32), 0.5,
                                        Tensor(), false, 0.1, g),
               Error);
}
