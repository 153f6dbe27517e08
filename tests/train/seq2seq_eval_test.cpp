#include "train/tasks/seq2seq_eval.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/error.h"
#include "decode/bleu.h"
#include "decode/chrf.h"
#include "decode/generation.h"
#include "support/tiny_models.h"

namespace heed::train {
namespace {

using testing::tiny_bart;

// Greedy decoding of up to 10 tokens.
const decode::GenerationOptions greedy{.max_new_tokens = 10, .greedy = true};

// Generated tokens without tiny_bart's final eos (2), as decode_sources reports outputs.
std::vector<int32_t> without_eos(std::vector<int32_t> tokens) {
  if (!tokens.empty() && tokens.back() == 2) tokens.pop_back();
  return tokens;
}

// Words as tokens: decode joins them with spaces.
data::TextTokenizer word_tokenizer() {
  return data::TextTokenizer(data::CharTokenizer::build(
      {"the cat sat on a mat dog"}, data::CharTokenizer::Unit::kWhitespaceSymbol));
}

TEST(Seq2SeqEval, DecodeSourcesGroupsTheVariantsOfASourceAndScoresItsOwnOutput) {
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
  const std::vector<DecodedSource> d = decode_sources(*bart, examples, greedy_config, 1);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].source, a);
  EXPECT_EQ(d[0].references.size(), 2u);
  EXPECT_EQ(d[0].output, out_a);
  const std::vector<int32_t> out_b = without_eos(decode::generate(*bart, b, greedy).tokens);
  EXPECT_EQ(d[1].output, out_b);
  ASSERT_EQ(std::count(out_b.begin(), out_b.end(), 0), 0);
  const std::map<std::string, double> metrics =
      score_decoded(d, default_decoding_metrics(), word_tokenizer());
  EXPECT_DOUBLE_EQ(metrics.at("sequence_error_rate"), 0.5);
  // Source a is exact against out_a; b's output lacks b's one reference token (0), so its
  // edit distance is max(len, 1); the reference lengths sum to len(out_a) + 1.
  const double edits = static_cast<double>(std::max<size_t>(out_b.size(), 1));
  EXPECT_DOUBLE_EQ(metrics.at("token_error_rate"), edits / (1.0 + out_a.size()));
  // With num_beams > 1 each source goes through beam_search.
  GenerationConfig beam{.num_beams = 3, .max_new_tokens = 10};
  const std::vector<int32_t> beam_b = without_eos(
      decode::beam_search(*bart, b, {.num_beams = 3, .max_new_tokens = 10}).best.tokens);
  EXPECT_EQ(decode_sources(*bart, examples, beam, 1)[1].output, beam_b);
}

TEST(Seq2SeqEval, ScoresTheNamedMetricsOnTheDecodedText) {
  const data::TextTokenizer words = word_tokenizer();
  // The output has one word wrong (the for a) of the reference's six.
  DecodedSource d{.source = words.encode("dog"),
                  .output = words.encode("the cat sat on the mat"),
                  .references = {words.encode("the cat sat on a mat")}};
  const std::map<std::string, double> metrics =
      score_decoded(std::span(&d, 1), {"bleu", "chrf", "token_error_rate"}, words);
  ASSERT_EQ(metrics.size(), 3u);  // only those named
  decode::BleuAccumulator bleu;
  bleu.add("the cat sat on the mat", {"the cat sat on a mat"});
  decode::ChrfAccumulator chrf;
  chrf.add("the cat sat on the mat", {"the cat sat on a mat"});
  EXPECT_DOUBLE_EQ(metrics.at("bleu"), bleu.score().bleu);
  EXPECT_GT(metrics.at("bleu"), 0.0);
  EXPECT_DOUBLE_EQ(metrics.at("chrf"), chrf.score());
  EXPECT_DOUBLE_EQ(metrics.at("token_error_rate"), 1.0 / 6.0);
  EXPECT_THROW(score_decoded(std::span(&d, 1), {"wer"}, words), Error);
}

}  // namespace
}  // namespace heed::train
