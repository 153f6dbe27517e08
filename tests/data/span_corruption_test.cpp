#include "data/span_corruption.h"

#include <gtest/gtest.h>

#include <numeric>

#include "base/error.h"

namespace heed::data {
namespace {

const SpanCorruptionOptions kT5;  // noise density 0.15, mean span length 3

// The runs of equal mask values: [kept, noise, kept, noise, ...] lengths.
std::vector<int64_t> runs_of(const std::vector<bool>& mask) {
  std::vector<int64_t> runs;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (i == 0 || mask[i] != mask[i - 1]) runs.push_back(0);
    ++runs.back();
  }
  return runs;
}

// The original tokens from a corrupted pair: each sentinel of the input replaced by what
// follows the same sentinel in the target, up to the next sentinel.
std::vector<int32_t> restore(const CorruptedSpans& c, const std::vector<int32_t>& sentinels) {
  const auto is_sentinel = [&](int32_t id) {
    return std::find(sentinels.begin(), sentinels.end(), id) != sentinels.end();
  };
  std::vector<int32_t> out;
  for (int32_t id : c.input) {
    if (!is_sentinel(id)) {
      out.push_back(id);
      continue;
    }
    auto at = std::find(c.target.begin(), c.target.end(), id);
    EXPECT_NE(at, c.target.end()) << "sentinel " << id << " missing from the target";
    for (++at; at != c.target.end() && !is_sentinel(*at); ++at) out.push_back(*at);
  }
  return out;
}

// Worked by hand from T5's definition: 141 tokens hold round(21.15) = 21 noise tokens in
// round(21 / 3) = 7 spans, so the input is 120 + 7 sentinels + </s> = 128 and the target
// 21 + 7 + </s> = 29; 142 tokens would give 121 + 7 + 1 = 129. At 512: T5's 568 and 114.
TEST(SpanCorruption, WindowLengthsAsT5ComputesThem) {
  EXPECT_EQ(span_corruption_lengths(128, kT5).raw_tokens, 141);
  EXPECT_EQ(span_corruption_lengths(128, kT5).target_length, 29);
  EXPECT_EQ(span_corruption_lengths(512, kT5).raw_tokens, 568);
  EXPECT_EQ(span_corruption_lengths(512, kT5).target_length, 114);
  EXPECT_THROW(span_corruption_lengths(1, kT5), Error);
}

TEST(SpanCorruption, NoiseCountsRoundHalfToEvenAndStayInRange) {
  EXPECT_EQ(noise_counts(141, kT5).noise_tokens, 21);
  EXPECT_EQ(noise_counts(141, kT5).spans, 7);
  // 10 x 0.15 = 1.5 rounds to 2 (even); 2 / 3 rounds to 1 span.
  EXPECT_EQ(noise_counts(10, kT5).noise_tokens, 2);
  EXPECT_EQ(noise_counts(10, kT5).spans, 1);
  // 30 x 0.15 = 4.5 rounds to 4 (even); 4 / 3 to 1.
  EXPECT_EQ(noise_counts(30, kT5).noise_tokens, 4);
  // At least one noise token and one kept; none in a window of one.
  EXPECT_EQ(noise_counts(2, kT5).noise_tokens, 1);
  EXPECT_EQ(noise_counts(1, kT5).noise_tokens, 0);
  EXPECT_EQ(noise_counts(1, kT5).spans, 0);
  // Spans never outnumber the kept tokens (density 0.9 over 10: 9 noise, 1 kept, 1 span).
  const NoiseCounts dense = noise_counts(10, {.noise_density = 0.9, .mean_noise_span_length = 1});
  EXPECT_EQ(dense.noise_tokens, 9);
  EXPECT_EQ(dense.spans, 1);
}

TEST(SpanCorruption, MasksAlternateKeptAndNoiseRunsWithTheExactCounts) {
  Rng rng(42);
  double total_noise_runs = 0, total_noise_tokens = 0;
  for (int draw = 0; draw < 2000; ++draw) {
    const std::vector<bool> mask = random_spans_noise_mask(141, kT5, rng);
    ASSERT_EQ(mask.size(), 141u);
    const std::vector<int64_t> runs = runs_of(mask);
    ASSERT_FALSE(mask.front());   // kept tokens first
    ASSERT_TRUE(mask.back());     // noise last
    ASSERT_EQ(runs.size(), 14u);  // 7 kept runs, 7 noise runs, each at least one token
    int64_t noise = 0;
    for (size_t r = 1; r < runs.size(); r += 2) noise += runs[r];
    ASSERT_EQ(noise, 21);
    total_noise_runs += 7;
    total_noise_tokens += static_cast<double>(noise);
  }
  EXPECT_DOUBLE_EQ(total_noise_tokens / total_noise_runs, 3.0);
}

// The cut points are drawn, not fixed: the first token is never noise and the last always is,
// and every position in between is noise in some draws and kept in most.
TEST(SpanCorruption, SpanLengthsVaryAndEveryMiddlePositionCanBeNoise) {
  Rng rng(7);
  std::vector<int> noise_at(141, 0);
  std::vector<int> span_length_seen(22, 0);
  constexpr int kDraws = 4000;
  for (int draw = 0; draw < kDraws; ++draw) {
    const std::vector<bool> mask = random_spans_noise_mask(141, kT5, rng);
    for (size_t i = 0; i < mask.size(); ++i) noise_at[i] += mask[i];
    const std::vector<int64_t> runs = runs_of(mask);
    for (size_t r = 1; r < runs.size(); r += 2) ++span_length_seen[static_cast<size_t>(runs[r])];
  }
  EXPECT_EQ(noise_at.front(), 0);
  EXPECT_EQ(noise_at.back(), kDraws);
  for (size_t i = 5; i + 5 < noise_at.size(); ++i) {
    EXPECT_GT(noise_at[i], kDraws / 20) << "position " << i;
    EXPECT_LT(noise_at[i], kDraws / 4) << "position " << i;
  }
  // 21 noise tokens cut into 7 spans at 6 of their 20 gaps, uniformly: short spans are the
  // likeliest and long ones occur (the mean is 3 exactly, above).
  for (int length : {1, 2, 3, 4, 6}) EXPECT_GT(span_length_seen[length], 0) << length;
  EXPECT_GT(span_length_seen[1], span_length_seen[6]);
}

TEST(SpanCorruption, SpansBecomeSentinelsAndTheTargetHoldsThem) {
  // tokens 10..19; noise at 12, 13 and 17 (two spans).
  const std::vector<int32_t> tokens{10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  std::vector<bool> mask(10, false);
  mask[2] = mask[3] = mask[7] = true;
  const std::vector<int32_t> sentinels{99, 98, 97};  // <extra_id_0>, <extra_id_1>, ...
  const CorruptedSpans c = corrupt_spans(tokens, mask, sentinels);
  EXPECT_EQ(c.input, (std::vector<int32_t>{10, 11, 99, 14, 15, 16, 98, 18, 19}));
  EXPECT_EQ(c.target, (std::vector<int32_t>{99, 12, 13, 98, 17}));
  EXPECT_EQ(restore(c, sentinels), tokens);
  // More spans than sentinels: an error naming the key that adds them.
  const std::vector<int32_t> one{99};
  try {
    corrupt_spans(tokens, mask, one);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.extra_ids"), std::string::npos) << e.what();
  }
}

TEST(SpanCorruption, BatchesRoundTripToTheTextAndRepeatFromTheSameStream) {
  SpanCorruptionIds ids{.pad_id = 0, .decoder_start_id = 0, .eos_id = 1};
  for (int32_t k = 0; k < 100; ++k) ids.sentinel_ids.push_back(1099 - k);
  std::vector<Example> windows(4);
  for (size_t w = 0; w < windows.size(); ++w) {
    windows[w].input_ids.resize(w == 3 ? 37 : 141);  // a short last window too
    std::iota(windows[w].input_ids.begin(), windows[w].input_ids.end(),
              static_cast<int32_t>(2 + 200 * w));
  }
  Rng rng = Rng::for_stream(42, 0, 3);
  const Batch batch = collate_span_corruption(windows, ids, kT5, rng);
  Rng again = Rng::for_stream(42, 0, 3);
  const Batch same = collate_span_corruption(windows, ids, kT5, again);
  EXPECT_EQ(batch.input_ids, same.input_ids);
  EXPECT_EQ(batch.labels, same.labels);
  ASSERT_EQ(batch.batch_size, 4);
  EXPECT_EQ(batch.seq_len, 128);  // 141 tokens corrupt to 128 with </s>
  const int64_t label_len = static_cast<int64_t>(batch.labels.size()) / batch.batch_size;
  EXPECT_EQ(label_len, 29);
  for (int64_t row = 0; row < batch.batch_size; ++row) {
    // Read the row back: the input up to </s>, the labels up to </s>.
    CorruptedSpans c;
    for (int64_t t = 0; t < batch.seq_len; ++t) {
      const auto id = static_cast<int32_t>(batch.input_ids[row * batch.seq_len + t]);
      if (id == ids.eos_id) break;
      c.input.push_back(id);
    }
    int32_t previous_sentinel = 1100;
    for (int64_t t = 0; t < label_len; ++t) {
      const auto id = static_cast<int32_t>(batch.labels[row * label_len + t]);
      if (id == ids.eos_id) break;
      if (id >= 1000) {  // sentinels in order: <extra_id_0>, <extra_id_1>, ...
        EXPECT_EQ(id, previous_sentinel - 1);
        previous_sentinel = id;
      }
      c.target.push_back(id);
    }
    EXPECT_EQ(restore(c, ids.sentinel_ids), windows[static_cast<size_t>(row)].input_ids)
        << "row " << row;
    // The decoder reads the start token and then the target, shifted right.
    EXPECT_EQ(batch.decoder_input_ids[row * label_len], ids.decoder_start_id);
  }
}

}  // namespace
}  // namespace heed::data
