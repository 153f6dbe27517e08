#include <gtest/gtest.h>

#include <memory>

#include "autograd/random.h"
#include "nn/attention.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;

namespace {

struct Fixture {
  Generator init{21};
  std::shared_ptr<Generator> gen = std::make_shared<Generator>(1);
  MultiHeadAttention attn{16, 4, init, gen, 0.0};
};

Tensor random_input(const Shape& s, uint64_t seed) {
  Generator g(seed);
  return randn(s, g);
}

}  // namespace

TEST(Attention, CausalNeverSeesTheFuture) {
  Fixture f;
  Tensor x = random_input({2, 6, 16}, 1);
  std::vector<float> before = f.attn.forward(x, Tensor(), Tensor(), true).output.to_vector<float>();
  // Change the last token's vector: outputs at positions 0..4 must not move by a single bit.
  Tensor changed = x.clone();
  changed.select(1, 5).copy_(random_input({2, 16}, 2));
  std::vector<float> after =
      f.attn.forward(changed, Tensor(), Tensor(), true).output.to_vector<float>();
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
  std::vector<float> base = f.attn.forward(x, Tensor(), Tensor(), true).output.to_vector<float>();
  for (int64_t future = 1; future < 5; ++future) {
    Tensor changed = x.clone();
    changed.select(1, future).mul_(-3.0);
    std::vector<float> out =
        f.attn.forward(changed, Tensor(), Tensor(), true).output.to_vector<float>();
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
  std::vector<float> a = f.attn.forward(x, Tensor(), mask).output.to_vector<float>();
  Tensor changed = x.clone();
  changed.select(1, 3).copy_(random_input({1, 16}, 5));
  std::vector<float> b = f.attn.forward(changed, Tensor(), mask).output.to_vector<float>();
  for (int64_t i = 0; i < 3 * 16; ++i) EXPECT_EQ(a[i], b[i]);
}

TEST(Attention, ProbabilitiesAreReturnedAndNormalised) {
  Fixture f;
  Tensor x = random_input({2, 3, 16}, 6), memory = random_input({2, 5, 16}, 7);
  AttentionOutput out = f.attn.forward(x, memory, Tensor(), false, true);
  ASSERT_TRUE(out.probs.defined());
  EXPECT_EQ(out.probs.shape(), (Shape{2, 4, 3, 5}));
  EXPECT_EQ(out.output.shape(), (Shape{2, 3, 16}));
  for (float s : sum(out.probs, {-1}).to_vector<float>()) EXPECT_NEAR(s, 1.0f, 1e-5);
}

TEST(Attention, MatchesAnExplicitComputation) {
  // One head written out with plain ops, as a second opinion on the fused path.
  Generator init(8);
  auto gen = std::make_shared<Generator>(1);
  MultiHeadAttention attn(4, 1, init, gen, 0.0, true, 0.5, DType::f64);
  Generator g(9);
  Tensor x = randn({1, 3, 4}, g, DType::f64);
  Tensor q = attn.q_proj->forward(x), k = attn.k_proj->forward(x), v = attn.v_proj->forward(x);
  Tensor scores = matmul(q, k.transpose(1, 2)) * (1.0 / 2.0);  // 1/sqrt(4)
  Tensor expected = attn.out_proj->forward(matmul(softmax(scores, -1), v));
  EXPECT_LT(heed::testing::max_relative_error(attn.forward(x).output, expected), 1e-12);
}

TEST(Attention, HeadsMustDivideTheHiddenSize) {
  Generator init(1);
  try {
    MultiHeadAttention bad(10, 4, init, std::make_shared<Generator>(1));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("4 heads do not divide the hidden size 10"),
              std::string::npos);
  }
}
