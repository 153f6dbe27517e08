#include "data/collators.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"

namespace heed::data {
namespace {

TokenIds test_ids() {
  TokenIds ids;
  ids.pad_id = 0;
  ids.mask_id = 4;
  ids.vocab_size = 30000;
  ids.special_ids = {0, 1, 2, 3, 4};  // [PAD] [UNK] [CLS] [SEP] [MASK]
  return ids;
}

Example sequence(std::vector<int32_t> ids) {
  Example e;
  e.input_ids = std::move(ids);
  return e;
}

TEST(Collators, PaddingAndAttentionMask) {
  std::vector<Example> ex{sequence({2, 10, 11, 3}), sequence({2, 12, 3})};
  ex[1].token_type_ids = {0, 1, 1};
  EXPECT_THROW(collate_classification(ex, 0), Error);  // examples without labels
  ex[0].label = 0;
  ex[1].label = 1;
  Batch b = collate_classification(std::vector<Example>{ex[0], ex[1]}, 0);
  ASSERT_EQ(b.batch_size, 2);
  ASSERT_EQ(b.seq_len, 4);
  EXPECT_EQ(b.input_ids, (std::vector<int64_t>{2, 10, 11, 3, 2, 12, 3, 0}));
  EXPECT_EQ(b.attention_mask, (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(b.token_type_ids, (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 1, 0}));
}

// Over ~250k eligible positions the selection rate must be 15% and the split of the selected
// 80/10/10, each within 5 binomial standard deviations sqrt(p(1-p)/n):
//   selected: n ~ 256k, sd ~ 0.0007; of ~38k selected: sd(80%) ~ 0.002, sd(10%) ~ 0.0015.
TEST(Collators, MlmStatisticsMatchHuggingFace) {
  const TokenIds ids = test_ids();
  Rng rng(1234);
  Rng content(99);
  int64_t eligible = 0, selected = 0, masked = 0, randomized = 0, kept = 0;
  for (int batch = 0; batch < 350; ++batch) {
    std::vector<Example> examples;
    for (int r = 0; r < 8; ++r) {
      // [CLS] text [SEP] with variable length (so rows get padding) and a few [UNK]s.
      const size_t len = 60 + content.uniform_int(68);
      std::vector<int32_t> row{2};
      for (size_t i = 0; i < len; ++i)
        row.push_back(i % 50 == 7 ? 1 : static_cast<int32_t>(5 + content.uniform_int(29995)));
      row.push_back(3);
      examples.push_back(sequence(std::move(row)));
    }
    Batch b = collate_mlm(examples, ids, MlmOptions{}, rng);
    ASSERT_EQ(b.label_len, b.seq_len);
    const auto t = static_cast<size_t>(b.seq_len);
    int64_t targets = 0;
    for (size_t r = 0; r < examples.size(); ++r) {
      const auto& orig = examples[r].input_ids;
      for (size_t i = 0; i < t; ++i) {
        const int64_t label = b.labels[r * t + i], input = b.input_ids[r * t + i];
        if (i >= orig.size()) {  // padding: never selected, stays padding
          EXPECT_EQ(label, kIgnoreIndex);
          EXPECT_EQ(input, 0);
          continue;
        }
        if (orig[i] <= 4) {  // special: never selected, never changed
          EXPECT_EQ(label, kIgnoreIndex);
          EXPECT_EQ(input, orig[i]);
          continue;
        }
        ++eligible;
        if (label == kIgnoreIndex) {
          EXPECT_EQ(input, orig[i]);
          continue;
        }
        ++targets;
        ++selected;
        EXPECT_EQ(label, orig[i]);
        if (input == ids.mask_id) {
          ++masked;
        } else if (input != orig[i]) {
          ++randomized;
          EXPECT_GE(input, 0);
          EXPECT_LT(input, ids.vocab_size);
        } else {
          ++kept;
        }
      }
    }
    EXPECT_EQ(b.num_target_tokens, targets);
  }
  auto within = [](double observed, double p, double n) {
    const double sd = std::sqrt(p * (1 - p) / n);
    return std::abs(observed - p) < 5 * sd;
  };
  ASSERT_GT(eligible, 240000);
  const double s = static_cast<double>(selected);
  EXPECT_TRUE(within(selected / double(eligible), 0.15, eligible)) << selected / double(eligible);
  EXPECT_TRUE(within(masked / s, 0.8, s)) << masked / s;
  // A random draw equal to the original token (or to [MASK]) is counted elsewhere; with a
  // 30,000-token vocabulary that shifts the expectation by ~1e-5, far below the tolerance.
  EXPECT_TRUE(within(randomized / s, 0.1, s)) << randomized / s;
  EXPECT_TRUE(within(kept / s, 0.1, s)) << kept / s;
}

TEST(Collators, MlmIsReproducibleFromTheRngState) {
  std::vector<Example> ex{sequence({2, 10, 11, 12, 13, 14, 15, 16, 3})};
  Rng a(7), b(7);
  EXPECT_EQ(collate_mlm(ex, test_ids(), {}, a).input_ids,
            collate_mlm(ex, test_ids(), {}, b).input_ids);
  MlmOptions bad;
  bad.mask_replace_prob = 0.9;
  bad.random_replace_prob = 0.2;
  EXPECT_THROW(collate_mlm(ex, test_ids(), bad, a), Error);
}

TEST(Collators, CausalLmLabelsAreTheNextTokens) {
  std::vector<Example> ex{sequence({10, 11, 12, 13}), sequence({20, 21, 22})};
  Batch b = collate_causal_lm(ex, 0);
  ASSERT_EQ(b.seq_len, 3);
  EXPECT_EQ(b.input_ids, (std::vector<int64_t>{10, 11, 12, 20, 21, 0}));
  EXPECT_EQ(b.labels, (std::vector<int64_t>{11, 12, 13, 21, 22, -100}));
  EXPECT_EQ(b.attention_mask, (std::vector<int64_t>{1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(b.num_target_tokens, 5);
  EXPECT_THROW(collate_causal_lm(std::vector<Example>{sequence({1})}, 0), Error);
}

TEST(Collators, Seq2SeqShiftsDecoderInputsRight) {
  Example a = sequence({5, 6, 7}), b = sequence({8});
  a.target_ids = {30, 31};
  b.target_ids = {40, 41, 42};
  Seq2SeqIds ids{.pad_id = 0, .decoder_pad_id = 0, .decoder_start_id = 2, .eos_id = 3};
  Batch batch = collate_seq2seq(std::vector<Example>{a, b}, ids);
  EXPECT_EQ(batch.input_ids, (std::vector<int64_t>{5, 6, 7, 8, 0, 0}));
  ASSERT_EQ(batch.decoder_seq_len, 4);
  EXPECT_EQ(batch.decoder_input_ids, (std::vector<int64_t>{2, 30, 31, 0, 2, 40, 41, 42}));
  EXPECT_EQ(batch.labels, (std::vector<int64_t>{30, 31, 3, -100, 40, 41, 42, 3}));
  EXPECT_EQ(batch.decoder_attention_mask, (std::vector<int64_t>{1, 1, 1, 0, 1, 1, 1, 1}));
  EXPECT_EQ(batch.num_target_tokens, 7);
}

TEST(Collators, TokenClassificationPadsLabelsWithIgnore) {
  Example a = sequence({2, 10, 11, 3}), b = sequence({2, 12, 3});
  a.token_labels = {-100, 5, -100, -100};
  b.token_labels = {-100, 7, -100};
  Batch batch = collate_token_classification(std::vector<Example>{a, b}, 0);
  EXPECT_EQ(batch.labels, (std::vector<int64_t>{-100, 5, -100, -100, -100, 7, -100, -100}));
  EXPECT_EQ(batch.num_target_tokens, 2);
  b.token_labels.pop_back();
  EXPECT_THROW(collate_token_classification(std::vector<Example>{a, b}, 0), Error);
}

TEST(Collators, ClassificationLabels) {
  Example a = sequence({2, 10, 3}), b = sequence({2, 3});
  a.label = 1;
  b.label = 0;
  Batch batch = collate_classification(std::vector<Example>{a, b}, 0);
  EXPECT_EQ(batch.label_len, 1);
  EXPECT_EQ(batch.labels, (std::vector<int64_t>{1, 0}));
}

}  // namespace
}  // namespace heed::data
