#include "data/loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "data/collators.h"

namespace heed::data {
namespace {

// Example i is the sequence [CLS] 100+i 200+i ... [SEP].
class CountingDataset : public Dataset {
 public:
  explicit CountingDataset(size_t n) : n_(n) {}
  size_t size() const override { return n_; }
  Example get(size_t i) const override {
    Example e;
    e.input_ids = {2};
    for (size_t k = 0; k < 1 + i % 7; ++k)
      e.input_ids.push_back(static_cast<int32_t>(100 + i + 1000 * k));
    e.input_ids.push_back(3);
    return e;
  }

 private:
  size_t n_;
};

CollateFn mlm_collate() {
  TokenIds ids;
  ids.pad_id = 0;
  ids.mask_id = 4;
  ids.vocab_size = 10000;
  ids.special_ids = {0, 1, 2, 3, 4};
  return [ids](std::span<const Example> ex, Rng& rng) {
    return collate_mlm(ex, ids, MlmOptions{.mlm_probability = 0.5}, rng);
  };
}

bool same(const Batch& a, const Batch& b) {
  return a.input_ids == b.input_ids && a.labels == b.labels && a.attention_mask == b.attention_mask;
}

TEST(Loader, EachEpochIsAPermutation) {
  auto data = std::make_shared<CountingDataset>(103);
  Loader loader(data, [](std::span<const Example> ex, Rng&) { return collate_causal_lm(ex, 0); },
                {.batch_size = 10, .seed = 5});
  EXPECT_EQ(loader.batches_per_epoch(), 11u);
  std::vector<std::multiset<int64_t>> epochs(2);
  std::vector<int64_t> first_of_epoch;
  for (int e = 0; e < 2; ++e) {
    for (uint64_t b = 0; b < loader.batches_per_epoch(); ++b) {
      Batch batch = loader.next();
      first_of_epoch.push_back(batch.input_ids[1]);  // the 100+i token identifies the example
      for (int64_t r = 0; r < batch.batch_size; ++r)
        epochs[e].insert(batch.input_ids[r * batch.seq_len + 1]);
    }
  }
  std::multiset<int64_t> all;
  for (int i = 0; i < 103; ++i) all.insert(100 + i);
  EXPECT_EQ(epochs[0], all);
  EXPECT_EQ(epochs[1], all);
  EXPECT_EQ(loader.state(), (LoaderState{2, 0}));
  // Epochs are shuffled differently.
  EXPECT_FALSE(
      std::equal(first_of_epoch.begin(), first_of_epoch.begin() + 11, first_of_epoch.begin() + 11));
}

TEST(Loader, GroupByLengthPadsLittleAndStillVisitsEveryExampleInARandomOrder) {
  auto data = std::make_shared<CountingDataset>(1003);  // lengths 3..9
  const auto collate = [](std::span<const Example> ex, Rng&) { return collate_causal_lm(ex, 0); };
  const auto padding_and_examples = [&](Loader& loader) {
    int64_t padding = 0;
    std::multiset<int64_t> seen;
    std::vector<int64_t> lengths;
    for (uint64_t b = 0; b < loader.batches_per_epoch(); ++b) {
      Batch batch = loader.next();
      for (int64_t r = 0; r < batch.batch_size; ++r) {
        seen.insert(batch.input_ids[r * batch.seq_len + 1]);
        for (int64_t t = 0; t < batch.seq_len; ++t)
          padding += batch.attention_mask[r * batch.seq_len + t] == 0;
      }
      lengths.push_back(batch.seq_len);
    }
    return std::make_tuple(padding, seen, lengths);
  };
  Loader plain(data, collate, {.batch_size = 10, .seed = 5});
  Loader grouped(data, collate, {.batch_size = 10, .group_by_length = true, .seed = 5});
  auto [plain_padding, plain_seen, plain_lengths] = padding_and_examples(plain);
  auto [padding, seen, lengths] = padding_and_examples(grouped);
  std::multiset<int64_t> all;
  for (int i = 0; i < 1003; ++i) all.insert(100 + i);
  EXPECT_EQ(seen, all);
  EXPECT_EQ(plain_seen, all);
  // Groups of 500 examples hold ~71 of each length, so nearly every batch of 10 is uniform.
  EXPECT_LT(padding * 10, plain_padding) << padding << " vs " << plain_padding;
  // Batches come in a random order of lengths, not sorted within a group.
  EXPECT_FALSE(std::is_sorted(lengths.begin(), lengths.begin() + 50, std::greater<>()));
  EXPECT_FALSE(std::is_sorted(lengths.begin(), lengths.begin() + 50));
  // The order depends only on (seed, epoch): a restored loader replays it.
  Loader again(data, collate, {.batch_size = 10, .group_by_length = true, .seed = 5});
  again.restore({1, 7});
  EXPECT_TRUE(same(again.next(), grouped.batch_at({1, 7})));
  // And the epochs differ.
  EXPECT_FALSE(same(grouped.batch_at({0, 0}), grouped.batch_at({1, 0})));
}

TEST(Loader, WithoutShuffleGroupByLengthGoesLongestFirstAndKeepsFileOrderWithinALength) {
  // Evaluation's order: every example once, the longest first, ties in file order.
  auto data = std::make_shared<CountingDataset>(1003);  // example i has 3 + i % 7 ids
  const auto collate = [](std::span<const Example> ex, Rng&) { return collate_causal_lm(ex, 0); };
  Loader sorted(data, collate, {.batch_size = 10, .shuffle = false, .group_by_length = true});
  std::vector<size_t> order;
  for (uint64_t b = 0; b < sorted.batches_per_epoch(); ++b) {
    Batch batch = sorted.next();
    for (int64_t r = 0; r < batch.batch_size; ++r)
      order.push_back(static_cast<size_t>(batch.input_ids[r * batch.seq_len + 1] - 100));
  }
  ASSERT_EQ(order.size(), 1003u);
  std::vector<size_t> expected(1003);
  std::iota(expected.begin(), expected.end(), size_t{0});
  std::ranges::stable_sort(expected, [](size_t a, size_t b) { return a % 7 > b % 7; });
  EXPECT_EQ(order, expected);
  EXPECT_EQ(sorted.batch_at({0, 0}).seq_len, 8);  // inputs drop the last id
  EXPECT_EQ(sorted.batch_at({0, sorted.batches_per_epoch() - 1}).seq_len, 2);
}

TEST(Loader, RestoredPositionReplaysTheSameBatches) {
  auto data = std::make_shared<CountingDataset>(50);
  LoaderOptions options{.batch_size = 4, .seed = 42};
  Loader reference(data, mlm_collate(), options);
  std::vector<Batch> expected;
  LoaderState saved;
  for (int i = 0; i < 40; ++i) {
    if (i == 17) saved = reference.state();
    expected.push_back(reference.next());
  }
  for (size_t prefetch : {size_t{0}, size_t{3}}) {
    options.prefetch = prefetch;
    Loader resumed(data, mlm_collate(), options);
    resumed.next();  // wherever it was, restore() moves it
    resumed.restore(saved);
    for (int i = 17; i < 40; ++i) EXPECT_TRUE(same(resumed.next(), expected[i])) << i;
  }
  EXPECT_THROW(reference.restore({0, 13}), Error);  // 13 batches per epoch: 0..12
}

TEST(Loader, PrefetchGivesTheSameStreamAsDirect) {
  auto data = std::make_shared<CountingDataset>(37);
  Loader direct(data, mlm_collate(), {.batch_size = 5, .seed = 1});
  Loader prefetched(data, mlm_collate(), {.batch_size = 5, .seed = 1, .prefetch = 2});
  for (int i = 0; i < 25; ++i) EXPECT_TRUE(same(direct.next(), prefetched.next())) << i;
}

TEST(Loader, MaskingIsDynamicAcrossEpochs) {
  auto data = std::make_shared<CountingDataset>(8);
  Loader loader(data, mlm_collate(), {.batch_size = 8, .shuffle = false, .seed = 3});
  Batch e0 = loader.next(), e1 = loader.next();
  EXPECT_EQ(e0.attention_mask, e1.attention_mask);  // same examples, same order
  EXPECT_NE(e0.labels, e1.labels);                  // masked differently
}

TEST(Loader, RanksSplitTheGlobalBatch) {
  auto data = std::make_shared<CountingDataset>(40);
  auto collate = [](std::span<const Example> ex, Rng&) { return collate_causal_lm(ex, 0); };
  Loader single(data, collate, {.batch_size = 8, .seed = 9});
  Loader rank0(data, collate, {.batch_size = 4, .seed = 9, .rank = 0, .world_size = 2});
  Loader rank1(data, collate, {.batch_size = 4, .seed = 9, .rank = 1, .world_size = 2});
  EXPECT_EQ(rank0.batches_per_epoch(), 5u);
  for (int i = 0; i < 5; ++i) {
    Batch g = single.next(), a = rank0.next(), b = rank1.next();
    std::vector<int64_t> ids, split;
    for (int64_t r = 0; r < g.batch_size; ++r) ids.push_back(g.input_ids[r * g.seq_len + 1]);
    for (int64_t r = 0; r < 4; ++r) split.push_back(a.input_ids[r * a.seq_len + 1]);
    for (int64_t r = 0; r < 4; ++r) split.push_back(b.input_ids[r * b.seq_len + 1]);
    EXPECT_EQ(ids, split);
  }
}

TEST(Loader, RejectsDatasetsSmallerThanABatch) {
  auto data = std::make_shared<CountingDataset>(3);
  auto collate = [](std::span<const Example> ex, Rng&) { return collate_causal_lm(ex, 0); };
  EXPECT_THROW(Loader(data, collate, {.batch_size = 4, .drop_last = true}), Error);
  Loader partial(data, collate, {.batch_size = 4});
  EXPECT_EQ(partial.next().batch_size, 3);
}

TEST(Rng, UniformIntIsInRangeAndStateRoundTrips) {
  Rng rng(11);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(rng.uniform_int(7), 7u);
  Rng::State s = rng.state();
  uint64_t x = rng.next_u64();
  rng.set_state(s);
  EXPECT_EQ(rng.next_u64(), x);
  EXPECT_NE(Rng::for_stream(1, 0, 1).next_u64(), Rng::for_stream(1, 1, 0).next_u64());
}

}  // namespace
}  // namespace heed::data
