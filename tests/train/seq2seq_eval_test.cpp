#include "train/tasks/seq2seq_eval.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "decode/generation.h"
#include "support/tiny_models.h"

namespace heed::train {
namespace {

using testing::tiny_bart;

// Greedy decoding of up to 10 tokens.
const decode::GenerationOptions greedy{.max_new_tokens = 10, .greedy = true};

// Generated tokens without tiny_bart's final eos (2), as decode_and_score reports outputs.
std::vector<int32_t> without_eos(std::vector<int32_t> tokens) {
  if (!tokens.empty() && tokens.back() == 2) tokens.pop_back();
  return tokens;
}

TEST(Seq2SeqEval, DecodeAndScoreGroupsTheVariantsOfASourceAndScoresItsOwnOutput) {
  auto bart = tiny_bart();
  const std::vector<int32_t> a = {5, 6, 7}, b = {8, 4};
  const std::vector<int32_t> out_a = without_eos(decode::generate(*bart, a, greedy).tokens);
  // Source a appears twice: once with its own output as the reference (a variant that is
  // right), once with something else. Source b has one reference the model cannot produce.
  std::vector<data::Example> examples(3);
  examples[0].input_ids = a;
  examples[0].target_ids = {11, 11, 11};
  examples[1].input_ids = b;
  examples[1].target_ids = {0};
  examples[2].input_ids = a;
  examples[2].target_ids = out_a;
  GenerationConfig greedy_config{.num_beams = 1, .max_new_tokens = 10};
  // Batches of 1: each source in its own chunk.
  Seq2SeqDecoding d = decode_and_score(*bart, examples, greedy_config, 1);
  ASSERT_EQ(d.decoded.size(), 2u);
  EXPECT_EQ(d.decoded[0].source, a);
  EXPECT_EQ(d.decoded[0].references.size(), 2u);
  EXPECT_EQ(d.decoded[0].output, out_a);
  const std::vector<int32_t> out_b = without_eos(decode::generate(*bart, b, greedy).tokens);
  EXPECT_EQ(d.decoded[1].output, out_b);
  ASSERT_EQ(std::count(out_b.begin(), out_b.end(), 0), 0);
  EXPECT_DOUBLE_EQ(d.metrics.at("sequence_error_rate"), 0.5);
  // Source a is exact against out_a; b's output lacks b's one reference token (0), so its
  // edit distance is max(len, 1); the reference lengths sum to len(out_a) + 1.
  const double edits = static_cast<double>(std::max<size_t>(out_b.size(), 1));
  EXPECT_DOUBLE_EQ(d.metrics.at("token_error_rate"), edits / (1.0 + out_a.size()));
  // With num_beams > 1 each source goes through beam_search.
  GenerationConfig beam{.num_beams = 3, .max_new_tokens = 10};
  const std::vector<int32_t> beam_b = without_eos(
      decode::beam_search(*bart, b, {.num_beams = 3, .max_new_tokens = 10}).best.tokens);
  EXPECT_EQ(decode_and_score(*bart, examples, beam, 1).decoded[1].output, beam_b);
}

}  // namespace
}  // namespace heed::train
