// BERT's relative position attention: the distance indices worked out by hand, the gathered
// scores against E [T, T, d] materialised as Hugging Face does, and float64 gradient checks of
// the attention with each kind, through its parameters and the distance table.
#include <memory>

#include "autograd/grad_mode.h"
#include "nn/attention.h"
#include "nn/relative_positions.h"
#include "support/module_test_util.h"
#include "support/test_util.h"

using namespace heed;
using namespace heed::nn;
using heed::testing::expect_gradcheck;
using heed::testing::param;
using heed::testing::with_parameters;
using Inputs = std::vector<Tensor>;

namespace {

// A table with max_positions 4 over one feature whose row j holds j: each score names the row
// of W that E[l, r] picked.
std::unique_ptr<RelativePositionScores> row_number_table(RelativePositions kind) {
  Generator init(1);
  auto table = std::make_unique<RelativePositionScores>(kind, /*max_positions=*/4,
                                                        /*head_dim=*/1, init, 0.02, DType::f64);
  NoGradGuard no_grad;
  table->weight.copy_(from_vector<double>({0, 1, 2, 3, 4, 5, 6}, {7, 1}));
  return table;
}

Tensor column(const std::vector<double>& values) {  // [1, 1, T, 1]
  return from_vector<double>(values, {1, 1, static_cast<int64_t>(values.size()), 1});
}

}  // namespace

// P = 4, T = 3: E[l, r] = W[l - r + 3], the rows [[3, 2, 1], [4, 3, 2], [5, 4, 3]].
TEST(RelativePositions, QueryTermPicksTheRowOfEachDistance) {
  const auto table = row_number_table(RelativePositions::kKey);
  const Tensor zeros_k = column({0, 0, 0});
  EXPECT_EQ(table->scores(column({1, 1, 1}), zeros_k).to_vector<double>(),
            (std::vector<double>{3, 2, 1, 4, 3, 2, 5, 4, 3}));
  // Query l scaled by l + 1: row l of the result is (l + 1) times its rows.
  EXPECT_EQ(table->scores(column({1, 2, 3}), zeros_k).to_vector<double>(),
            (std::vector<double>{3, 2, 1, 8, 6, 4, 15, 12, 9}));
}

TEST(RelativePositions, KeyTermIsAddedByKeyQuery) {
  // Keys scaled by r + 1 and zero queries: only k_r . E[l, r], column r times (r + 1).
  const Tensor zero_q = column({0, 0, 0}), k = column({1, 2, 3});
  const auto key_query = row_number_table(RelativePositions::kKeyQuery);
  EXPECT_EQ(key_query->scores(zero_q, k).to_vector<double>(),
            (std::vector<double>{3, 4, 3, 4, 6, 6, 5, 8, 9}));
  const auto key_only = row_number_table(RelativePositions::kKey);
  EXPECT_EQ(key_only->scores(zero_q, k).to_vector<double>(), std::vector<double>(9, 0.0));
}

TEST(RelativePositions, ShorterSequencesUseTheMiddleOfTheTable) {
  const auto table = row_number_table(RelativePositions::kKey);
  EXPECT_EQ(table->scores(column({1}), column({0})).to_vector<double>(), std::vector<double>{3});
  EXPECT_EQ(table->scores(column({1, 1}), column({0, 0})).to_vector<double>(),
            (std::vector<double>{3, 2, 4, 3}));
}

TEST(RelativePositions, LongerThanTheTableIsAnError) {
  const auto table = row_number_table(RelativePositions::kKey);
  const Tensor five = column({1, 1, 1, 1, 1});
  EXPECT_THROW(table->scores(five, five), Error);
}

TEST(RelativePositions, NamesOfThePositionTypes) {
  EXPECT_EQ(relative_positions_of("relative_key"), RelativePositions::kKey);
  EXPECT_EQ(relative_positions_of("relative_key_query"), RelativePositions::kKeyQuery);
  EXPECT_EQ(relative_positions_of("absolute"), RelativePositions::kNone);
}

// Against Hugging Face's way: E [T, T, d] gathered from W, then einsum over d.
TEST(RelativePositions, ScoresEqualTheMaterialisedDistanceTable) {
  const int64_t B = 2, h = 3, T = 5, d = 4, P = 7;
  for (RelativePositions kind : {RelativePositions::kKey, RelativePositions::kKeyQuery}) {
    Generator init(5);
    RelativePositionScores table_object(kind, P, d, init, 0.5, DType::f64);
    const RelativePositionScores* table = &table_object;
    const Tensor q = heed::testing::random_tensor({B, h, T, d}, 6, DType::f64);
    const Tensor k = heed::testing::random_tensor({B, h, T, d}, 7, DType::f64);
    const std::vector<double> w = table->weight.to_vector<double>(), qv = q.to_vector<double>(),
                              kv = k.to_vector<double>();
    std::vector<double> want(B * h * T * T, 0.0);
    for (int64_t p = 0; p < B * h; ++p) {
      for (int64_t l = 0; l < T; ++l) {
        for (int64_t r = 0; r < T; ++r) {
          const double* e = &w[(l - r + P - 1) * d];
          double sum = 0;
          for (int64_t c = 0; c < d; ++c) {
            sum += qv[(p * T + l) * d + c] * e[c];
            if (kind == RelativePositions::kKeyQuery) sum += kv[(p * T + r) * d + c] * e[c];
          }
          want[(p * T + l) * T + r] = sum;
        }
      }
    }
    const std::vector<double> got = table->scores(q, k).to_vector<double>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
  }
}

namespace {

constexpr uint64_t kDropoutSeed = 1234;

void check_relative_attention(RelativePositions kind, bool padding, double dropout) {
  Generator init(11);
  auto gen = std::make_shared<Generator>(kDropoutSeed);
  MultiHeadAttention attn({.embed_dim = 4,
                           .num_heads = 2,
                           .dropout = dropout,
                           .dtype = DType::f64,
                           .relative_positions = kind,
                           .max_positions = 4},
                          init, gen);
  ASSERT_TRUE(attn.relative);
  heed::testing::spread_parameters(attn, 12, 0.5);
  const Tensor mask = padding ? from_vector<int64_t>({1, 1, 1, 1, 1, 0}, {2, 3}) : Tensor();
  expect_gradcheck(
      [&](const Inputs& x) {
        gen->set_state({kDropoutSeed, 0});
        return attn.forward(x[0], {.key_padding_mask = mask}).output;
      },
      with_parameters({param({2, 3, 4}, 13)}, attn));  // the distance table among them
}

}  // namespace

TEST(Gradcheck, MultiHeadAttentionRelativeKey) {
  check_relative_attention(RelativePositions::kKey, false, 0.0);
}
TEST(Gradcheck, MultiHeadAttentionRelativeKeyQuery) {
  check_relative_attention(RelativePositions::kKeyQuery, false, 0.0);
}
TEST(Gradcheck, MultiHeadAttentionRelativeKeyQueryPaddingAndDropout) {
  check_relative_attention(RelativePositions::kKeyQuery, true, 0.2);
}

TEST(RelativePositions, AttentionNamesTheTableAsHuggingFace) {
  Generator init(1);
  MultiHeadAttention attn(
      {.embed_dim = 8,
       .num_heads = 2,
       .names = {"self.query", "self.key", "self.value", "output.dense", "self.distance_embedding"},
       .relative_positions = RelativePositions::kKeyQuery,
       .max_positions = 16},
      init, std::make_shared<Generator>(2));
  bool found = false;
  for (const auto& [name, p] : attn.named_parameters()) {
    if (name == "self.distance_embedding.weight") {
      found = true;
      EXPECT_EQ(p.shape(), (Shape{31, 4}));
    }
  }
  EXPECT_TRUE(found);
  // Cross-attention cannot place the keys relative to the queries.
  EXPECT_THROW(attn.forward(heed::testing::random_tensor({1, 3, 8}, 3, DType::f32),
                            {.key_value = heed::testing::random_tensor({1, 3, 8}, 4, DType::f32)}),
               Error);
}
