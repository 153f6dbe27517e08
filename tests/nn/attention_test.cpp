#include <gtest/gtest.h>

#include <memory>

#include "autograd/allocator.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "autograd/random.h"
#include "nn/attention.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;

namespace {

struct Fixture {
  Generator init{21};
  std::shared_ptr<Generator> gen = std::make_shared<Generator>(1);
  MultiHeadAttention attn{{.embed_dim = 16, .num_heads = 4}, init, gen};
};

Tensor random_input(const Shape& s, uint64_t seed) {
  Generator g(seed);
  return randn(s, g);
}

}  // namespace

TEST(Attention, CausalNeverSeesTheFuture) {
  Fixture f;
  Tensor x = random_input({2, 6, 16}, 1);
  std::vector<float> before = f.attn.forward(x, {.causal = true}).output.to_vector<float>();
  // Change the last token's vector: outputs at positions 0..4 must not move by a single bit.
  Tensor changed = x.clone();
  changed.select(1, 5).copy_(random_input({2, 16}, 2));
  std::vector<float> after = f.attn.forward(changed, {.causal = true}).output.to_vector<float>();
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t t = 0; t < 6; ++t) {
      for (int64_t c = 0; c < 16; ++c) {
        const size_t i = (b * 6 + t) * 16 + c;
        if (t < 5) {
          EXPECT_EQ(before[i], after[i]) << "b=" << b << " t=" << t;
        }
      }
    }
  }
  // ... while the changed position itself does move.
  EXPECT_NE(before[5 * 16], after[5 * 16]);
}

TEST(Attention, EveryFuturePositionIsInvisibleToEarlierOnes) {
  Fixture f;
  Tensor x = random_input({1, 5, 16}, 3);
  std::vector<float> base = f.attn.forward(x, {.causal = true}).output.to_vector<float>();
  for (int64_t future = 1; future < 5; ++future) {
    Tensor changed = x.clone();
    changed.select(1, future).mul_(-3.0);
    std::vector<float> out = f.attn.forward(changed, {.causal = true}).output.to_vector<float>();
    for (int64_t t = 0; t < future; ++t) {
      for (int64_t c = 0; c < 16; ++c)
        EXPECT_EQ(base[t * 16 + c], out[t * 16 + c]) << future << "," << t;
    }
  }
}

TEST(Attention, PaddedKeysDoNotChangeTheOutput) {
  Fixture f;
  Tensor x = random_input({1, 4, 16}, 4);
  Tensor mask = from_vector<int64_t>({1, 1, 1, 0}, {1, 4});
  std::vector<float> a = f.attn.forward(x, {.key_padding_mask = mask}).output.to_vector<float>();
  Tensor changed = x.clone();
  changed.select(1, 3).copy_(random_input({1, 16}, 5));
  std::vector<float> b =
      f.attn.forward(changed, {.key_padding_mask = mask}).output.to_vector<float>();
  for (int64_t i = 0; i < 3 * 16; ++i) EXPECT_EQ(a[i], b[i]);
}

TEST(Attention, ProbabilitiesAreReturnedAndNormalised) {
  Fixture f;
  Tensor x = random_input({2, 3, 16}, 6), memory = random_input({2, 5, 16}, 7);
  AttentionOutput out = f.attn.forward(x, {.key_value = memory, .need_weights = true});
  ASSERT_TRUE(out.probs.defined());
  EXPECT_EQ(out.probs.shape(), (Shape{2, 4, 3, 5}));
  EXPECT_EQ(out.output.shape(), (Shape{2, 3, 16}));
  for (float s : sum(out.probs, {-1}).to_vector<float>()) EXPECT_NEAR(s, 1.0f, 1e-5);
}

TEST(Attention, MatchesAnExplicitComputation) {
  // One head written out with plain ops, as a second opinion on the fused path.
  Generator init(8);
  auto gen = std::make_shared<Generator>(1);
  MultiHeadAttention attn({.embed_dim = 4,
                           .num_heads = 1,
                           .init_std = 0.5,
                           .output_init_std = 0.5,
                           .dtype = DType::f64},
                          init, gen);
  Generator g(9);
  Tensor x = randn({1, 3, 4}, g, DType::f64);
  Tensor q = attn.q_proj->forward(x), k = attn.k_proj->forward(x), v = attn.v_proj->forward(x);
  Tensor scores = matmul(q, k.transpose(1, 2)) * (1.0 / 2.0);  // 1/sqrt(4)
  Tensor expected = attn.out_proj->forward(matmul(softmax(scores, -1), v));
  EXPECT_LT(heed::testing::max_relative_error(attn.forward(x).output, expected), 1e-12);
}

TEST(Attention, FusedQkvMatchesSeparateProjections) {
  // GPT-2's c_attn [C, 3C] (Conv1D layout) holds q, k, v side by side; attention through it
  // must equal attention through three projections holding the same columns.
  Generator init(30);
  auto gen = std::make_shared<Generator>(1);
  MultiHeadAttention fused({.embed_dim = 8,
                            .num_heads = 2,
                            .init_std = 0.3,
                            .fused_qkv = true,
                            .layout = WeightLayout::in_out,
                            .dtype = DType::f64,
                            .names = {.query = "c_attn", .output = "c_proj"}},
                           init, gen);
  MultiHeadAttention separate({.embed_dim = 8, .num_heads = 2, .dtype = DType::f64}, init, gen);
  {
    NoGradGuard no_grad;
    Tensor w = fused.q_proj->weight, b = fused.q_proj->bias;  // [8, 24], [24]
    separate.q_proj->weight.copy_(w.slice(1, 0, 8).transpose(0, 1));
    separate.k_proj->weight.copy_(w.slice(1, 8, 16).transpose(0, 1));
    separate.v_proj->weight.copy_(w.slice(1, 16, 24).transpose(0, 1));
    separate.q_proj->bias.copy_(b.slice(0, 0, 8));
    separate.k_proj->bias.copy_(b.slice(0, 8, 16));
    separate.v_proj->bias.copy_(b.slice(0, 16, 24));
    separate.out_proj->weight.copy_(fused.out_proj->weight.transpose(0, 1));
    separate.out_proj->bias.copy_(fused.out_proj->bias);
  }
  Generator g(31);
  Tensor x = randn({2, 5, 8}, g, DType::f64);
  EXPECT_LT(heed::testing::max_relative_error(fused.forward(x, {.causal = true}).output,
                                              separate.forward(x, {.causal = true}).output),
            1e-12);
  EXPECT_EQ(fused.named_parameters()[0].first, "c_attn.weight");
  EXPECT_EQ(fused.named_parameters()[0].second.shape(), (Shape{8, 24}));
}

TEST(Attention, OutputRowsAttendFromThePickedQueriesAlone) {
  // Output rows (out of order, one repeated): the rows of attention over every query, with
  // attention dropout drawing the same elements, the same gradients, the generator left at
  // the same offset; self-attention and cross-attention. And the queries that are not picked
  // are not computed: the picked path holds (nearly) none of their probabilities.
  const int64_t B = 2, T = 64, C = 16, heads = 4;
  const Tensor rows = from_vector<int64_t>({70, 3, 3, 100}, {4});  // Q = 2 of 64
  for (bool cross : {false, true}) {
    SCOPED_TRACE(cross ? "cross-attention" : "self-attention");
    const int64_t Tk = cross ? 40 : T;
    std::vector<int64_t> keep(static_cast<size_t>(B * Tk), 1);
    keep.back() = 0;
    const Tensor mask = from_vector<int64_t>(keep, {B, Tk});
    Generator init(40);
    MultiHeadAttention attn(
        {.embed_dim = C, .num_heads = heads, .dropout = 0.3, .dtype = DType::f64}, init, nullptr);
    Tensor outputs[2], input_grads[2];
    std::vector<Tensor> param_grads[2];
    size_t held[2];
    uint64_t next_offset[2];
    for (bool picked : {false, true}) {
      attn.zero_grad();
      attn.dropout_generator = std::make_shared<Generator>(41);
      Generator g(42);
      Tensor x = randn({B, T, C}, g, DType::f64), memory = randn({B, Tk, C}, g, DType::f64);
      x.set_requires_grad(true);
      empty_cache();
      const size_t before = allocator_stats().allocated_bytes;
      Tensor out = attn.forward(x, {.key_value = cross ? memory : Tensor(),
                                    .key_padding_mask = mask,
                                    .output_rows = picked ? rows : Tensor()})
                       .output;
      if (!picked) out = embedding(out.reshape({B * T, C}), rows);
      held[picked] = allocator_stats().allocated_bytes - before;
      next_offset[picked] = attn.dropout_generator->reserve_blocks(1);
      sum(mul(out, randn({4, C}, g, DType::f64))).backward();
      outputs[picked] = out;
      input_grads[picked] = x.grad();
      for (auto& [name, p] : attn.named_parameters()) param_grads[picked].push_back(p.grad());
    }
    EXPECT_LT(heed::testing::max_relative_error(outputs[1], outputs[0]), 1e-12);
    EXPECT_LT(heed::testing::max_relative_error(input_grads[1], input_grads[0]), 1e-12);
    for (size_t i = 0; i < param_grads[0].size(); ++i) {
      EXPECT_LT(heed::testing::max_relative_error(param_grads[1][i], param_grads[0][i]), 1e-12)
          << "parameter " << i;
    }
    EXPECT_EQ(next_offset[1], next_offset[0]);
    // Both keep the probabilities of the queries they attend from for backward.
    const size_t unpicked_probabilities = B * heads * (T - 2) * Tk * sizeof(double);
    EXPECT_LE(held[1] + unpicked_probabilities, held[0]);
  }
}

TEST(Attention, HeadsMustDivideTheHiddenSize) {
  Generator init(1);
  try {
    MultiHeadAttention bad({.embed_dim = 10, .num_heads = 4}, init, std::make_shared<Generator>(1));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("4 heads do not divide the hidden size 10"),
              std::string::npos);
  }
}
