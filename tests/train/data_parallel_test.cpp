// The parts of data-parallel training that one process can check: a rank's rows of a batch,
// the ranks' dropout seeds, the gradient buckets (in a world of one the sums are the gradients
// themselves), and the optimizer shards. tests/distributed/ runs the real thing under mpirun.
#include <gtest/gtest.h>

#include <set>

#include "autograd/ops.h"
#include "autograd/random.h"
#include "data/batch.h"
#include "optim/adamw.h"
#include "train/distributed/data_parallel.h"
#include "train/distributed/gradient_reducer.h"
#include "train/distributed/optimizer_shards.h"

namespace heed::train {
namespace {

data::Batch three_rows() {
  data::Batch b;
  b.batch_size = 3;
  b.seq_len = 2;
  b.input_ids = {1, 2, 3, 4, 5, 0};
  b.attention_mask = {1, 1, 1, 1, 1, 0};
  b.label_len = 2;
  b.labels = {data::kIgnoreIndex, 7, 8, 9, data::kIgnoreIndex, data::kIgnoreIndex};
  b.num_target_tokens = 3;
  return b;
}

TEST(DataParallel, BatchRowsKeepTheWidthAndCountTheirTargets) {
  const data::Batch rows = data::batch_rows(three_rows(), 1, 3);
  EXPECT_EQ(rows.batch_size, 2);
  EXPECT_EQ(rows.seq_len, 2);
  EXPECT_EQ(rows.input_ids, (std::vector<int64_t>{3, 4, 5, 0}));
  EXPECT_EQ(rows.attention_mask, (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_TRUE(rows.token_type_ids.empty());
  EXPECT_EQ(rows.num_target_tokens, 2);
  EXPECT_EQ(data::batch_rows(three_rows(), 2, 2).batch_size, 0);
  EXPECT_THROW(data::batch_rows(three_rows(), 2, 4), Error);
}

TEST(DataParallel, RankZeroKeepsTheRunsSeedAndTheOthersGetTheirOwn) {
  EXPECT_EQ(rank_seed(42, 0), 42u);
  std::set<uint64_t> seeds;
  for (int rank = 0; rank < 64; ++rank) seeds.insert(rank_seed(42, rank));
  EXPECT_EQ(seeds.size(), 64u);
  EXPECT_EQ(rank_seed(42, 3), rank_seed(42, 3));
  EXPECT_NE(rank_seed(42, 3), rank_seed(43, 3));
}

std::vector<Tensor> parameters(std::vector<Shape> shapes) {
  std::vector<Tensor> params;
  for (const Shape& s : shapes) params.push_back(full(s, 0.5, DType::f32).set_requires_grad(true));
  return params;
}

TEST(DataParallel, BucketsFillInReverseOrderAndStartDuringBackward) {
  const World& world = World::get();
  std::vector<Tensor> params = parameters({{4, 8}, {8}, {8, 8}, {8}});
  // 64 floats (256 bytes) per bucket: [3, 2] fill the first, [1, 0] the second.
  GradientReducer reducer(world, params, 256);
  EXPECT_EQ(reducer.num_buckets(), 2);
  const Tensor x = full({3, 4}, 1.0, DType::f32);
  for (int step = 0; step < 2; ++step) {
    reducer.prepare();
    {
      Tensor h = add(matmul(x, params[0]), params[1]);
      Tensor y = add(matmul(h, params[2]), params[3]);
      sum(mul(y, y)).backward();
    }
    const std::vector<float> before = params[2].grad().to_vector<float>();
    const ReductionStats stats = reducer.finish();
    EXPECT_EQ(stats.buckets, 2);
    EXPECT_EQ(stats.started_in_backward, 2);
    EXPECT_EQ(stats.bytes, (32 + 8 + 64 + 8) * 4);
    // A world of one sums nothing: every gradient is what backward left.
    EXPECT_EQ(params[2].grad().to_vector<float>(), before);
    for (Tensor& p : params) p.zero_grad();
  }
}

TEST(DataParallel, AParameterWithoutAGradientKeepsNone) {
  std::vector<Tensor> params = parameters({{2}, {3}});
  GradientReducer reducer(World::get(), params, 1 << 20);
  reducer.prepare();
  sum(params[0]).backward();
  reducer.finish();
  EXPECT_TRUE(params[0].grad().defined());
  EXPECT_FALSE(params[1].grad().defined());
}

TEST(DataParallel, OneRankOwnsEveryParameterAndItsState) {
  std::vector<Tensor> params = parameters({{4}, {16}, {2}});
  optim::NamedTensors named = {{"a", params[0]}, {"b", params[1]}, {"c", params[2]}};
  optim::AdamW adamw(named, {.lr = 0.1});
  OptimizerShards shards(World::get(), adamw);
  EXPECT_EQ(shards.owned_elements(), 22);
  for (Tensor& p : params) sum(p).backward();
  adamw.step();  // the shards' step hooks run around it
  shards.gather_state();
  shards.drop_others_state();
  for (const char* name : {"a", "b", "c"}) EXPECT_NE(adamw.state(name), nullptr) << name;
}

// What ranks send each other: Adafactor's factored moments are smaller than their parameter
// and keep their own shapes.
TEST(DataParallel, StateMessagesKeepEachStateTensorsShape) {
  Generator gen(5);
  optim::ParamState state;
  state.step = 3;
  state.tensors["exp_avg_sq_row"] = randn({4}, gen);
  state.tensors["exp_avg_sq_col"] = randn({6}, gen);
  const Tensor param = zeros({4, 6}, DType::f32);
  const optim::ParamState back = unpack_state(pack_state(state), param);
  EXPECT_EQ(back.step, 3);
  ASSERT_EQ(back.tensors.size(), 2u);
  for (const auto& [slot, t] : state.tensors) {
    EXPECT_EQ(back.tensors.at(slot).shape(), t.shape()) << slot;
    EXPECT_EQ(back.tensors.at(slot).to_vector<float>(), t.to_vector<float>()) << slot;
  }
  // A state larger than its parameter is a damaged message.
  EXPECT_THROW(unpack_state(pack_state(state), zeros({3}, DType::f32)), Error);
}

}  // namespace
}  // namespace heed::train
