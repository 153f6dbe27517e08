// A float64 gradient check for every module: w.r.t. its input and all its parameters.
#include <memory>

#include "autograd/grad_mode.h"
#include "nn/activation.h"
#include "nn/attention.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/layer_norm.h"
#include "nn/linear.h"
#include "support/module_test_util.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;
using heed::testing::expect_gradcheck;
using heed::testing::param;
using heed::testing::with_parameters;
using Inputs = std::vector<Tensor>;

namespace {

// Parameters drawn at a larger scale than the 0.02 init, so every path is exercised.
void spread_parameters(Module& m, uint64_t seed) {
  heed::testing::spread_parameters(m, seed, 0.5);
}

constexpr uint64_t kDropoutSeed = 1234;

}  // namespace

TEST(Gradcheck, LinearModuleConv1DLayout) {
  Generator init(18);
  Linear layer(4, 3, init, true, 0.02, DType::f64, WeightLayout::in_out);
  spread_parameters(layer, 19);
  EXPECT_EQ(layer.weight.shape(), (Shape{4, 3}));
  expect_gradcheck([&](const Inputs& x) { return layer.forward(x[0]); },
                   with_parameters({param({3, 4}, 20)}, layer));
}

TEST(Gradcheck, LinearModule) {
  Generator init(1);
  Linear layer(4, 3, init, true, 0.02, DType::f64);
  spread_parameters(layer, 2);
  expect_gradcheck([&](const Inputs& x) { return layer.forward(x[0]); },
                   with_parameters({param({2, 2, 4}, 3)}, layer));
}

TEST(Gradcheck, EmbeddingModule) {
  Generator init(4);
  Embedding table(5, 3, init, /*padding_idx=*/-1, 0.02, DType::f64);
  spread_parameters(table, 5);
  Tensor ids = from_vector<int64_t>({4, 0, 2, 2}, {2, 2});
  expect_gradcheck([&](const Inputs&) { return table.forward(ids); }, with_parameters({}, table));
}

TEST(Gradcheck, LayerNormModule) {
  LayerNorm norm(6, 1e-12, DType::f64);
  spread_parameters(norm, 6);
  expect_gradcheck([&](const Inputs& x) { return norm.forward(x[0]); },
                   with_parameters({param({3, 6}, 7)}, norm));
}

TEST(Gradcheck, GELUModuleBothForms) {
  GELU exact(GeluApproximation::none), approx(GeluApproximation::tanh);
  expect_gradcheck([&](const Inputs& x) { return exact.forward(x[0]); }, {param({2, 5}, 8)});
  expect_gradcheck([&](const Inputs& x) { return approx.forward(x[0]); }, {param({2, 5}, 9)});
}

TEST(Gradcheck, DropoutModuleFixedSeed) {
  auto gen = std::make_shared<Generator>(kDropoutSeed);
  Dropout drop(0.4, gen);
  expect_gradcheck(
      [&](const Inputs& x) {
        gen->set_state({kDropoutSeed, 0});  // the same mask on every evaluation
        return drop.forward(x[0]);
      },
      {param({3, 7}, 10)});
}

namespace {

struct AttentionCase {
  bool cross = false, padding = false, causal = false;
  double dropout = 0.0;
};

void check_attention(const AttentionCase& c) {
  Generator init(11);
  auto gen = std::make_shared<Generator>(kDropoutSeed);
  MultiHeadAttention attn(
      {.embed_dim = 4, .num_heads = 2, .dropout = c.dropout, .dtype = DType::f64}, init, gen);
  spread_parameters(attn, 12);
  Tensor mask = c.padding ? from_vector<int64_t>({1, 1, 1, 1, 1, 0}, {2, 3}) : Tensor();
  Inputs inputs{param({2, 3, 4}, 13)};
  if (c.cross) {
    inputs.push_back(param({2, 3, 4}, 14));
  }
  expect_gradcheck(
      [&](const Inputs& x) {
        gen->set_state({kDropoutSeed, 0});
        return attn
            .forward(x[0], {.key_value = c.cross ? x[1] : Tensor(),
                            .key_padding_mask = mask,
                            .causal = c.causal})
            .output;
      },
      with_parameters(inputs, attn));
}

}  // namespace

TEST(Gradcheck, MultiHeadAttentionSelf) {
  check_attention({});
}
TEST(Gradcheck, MultiHeadAttentionSelfWithDropout) {
  check_attention({.dropout = 0.2});
}
TEST(Gradcheck, MultiHeadAttentionCross) {
  check_attention({.cross = true});
}
TEST(Gradcheck, MultiHeadAttentionPaddingMask) {
  check_attention({.padding = true});
}
TEST(Gradcheck, MultiHeadAttentionCausal) {
  check_attention({.causal = true});
}
TEST(Gradcheck, MultiHeadAttentionCausalAndPadding) {
  check_attention({.padding = true, .causal = true});
}
