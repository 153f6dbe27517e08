// T5's span-corruption pretraining end to end (configs/tiny/t5_span_corruption.yaml): the loss
// falls, the checkpoint carries the tokenizer's sentinels, a run killed with SIGKILL and resumed
// matches an uninterrupted one bit for bit, a seq2seq run starts from it, and the configs that
// cannot work say which key is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <nlohmann/json.hpp>

#include "train/run_train.h"

using namespace heed::testing;

namespace {

std::string span_args(const std::string& out, const std::string& extra = "") {
  return "--config configs/tiny/t5_span_corruption.yaml --set train.output_dir=" + out + " " +
         extra;
}

}  // namespace

TEST(SpanCorruptionEndToEnd, TinyPretrainingLearnsAndStartsASeq2SeqRun) {
  const std::string out = fresh_dir("t5_span");
  Outcome o = run_train(span_args(out));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto l = losses(out);
  ASSERT_GE(l.size(), 10u);
  EXPECT_LT(l.back().second, l.front().second / 3) << o.output;
  // Evaluation reports the teacher-forced loss of the targets, not bits per byte of a stream
  // the targets do not cover.
  EXPECT_EQ(o.output.find("bits_per_byte"), std::string::npos) << o.output;
  const std::string checkpoint = out + "/checkpoint-150";
  const auto tokenizer = nlohmann::json::parse(file_bytes(checkpoint + "/tokenizer_config.json"));
  EXPECT_EQ(tokenizer["extra_ids"], 20);
  const auto config = nlohmann::json::parse(file_bytes(checkpoint + "/config.json"));
  EXPECT_EQ(config["vocab_size"], 140);  // 120 pieces and 20 sentinels

  // The checkpoint fills a span it is shown, through infer, as a seq2seq model.
  const Outcome fill = run_infer("translate --checkpoint " + checkpoint +
                                 " --json --max-new-tokens 8 --text 'the small cat <extra_id_0> "
                                 "the whale near the house .'");
  ASSERT_EQ(fill.exit_code, 0) << fill.output;
  const auto filled = nlohmann::json::parse(fill.output);
  ASSERT_FALSE(filled["output_ids"].empty()) << fill.output;
  // <extra_id_0>, the last id, stands in the source where the text has it.
  const auto source = filled["input_ids"].get<std::vector<int>>();
  EXPECT_EQ(std::count(source.begin(), source.end(), 139), 1) << fill.output;

  // Fine-tuning on pairs starts from it: its weights and its tokenizer, sentinels included.
  const std::string tuned = fresh_dir("t5_span_then_pairs");
  Outcome pairs = run_train(
      "--config configs/tiny/t5_g2p.yaml --set task=seq2seq --set init_from=" + checkpoint +
      " --set tokenizer.type=sentencepiece"
      " --set tokenizer.target_unit=null --set data.train=tests/tiny_data/de_en_train.tsv"
      " --set data.valid=tests/tiny_data/de_en_valid.tsv"
      " --set data.test=tests/tiny_data/de_en_test.tsv --set train.max_steps=10"
      " --set schedule.warmup_steps=2"
      " --set train.output_dir=" +
      tuned);
  ASSERT_EQ(pairs.exit_code, 0) << pairs.output;
  EXPECT_NE(pairs.output.find("init_from " + checkpoint), std::string::npos) << pairs.output;
  const auto tuned_tokenizer =
      nlohmann::json::parse(file_bytes(tuned + "/checkpoint-10/tokenizer_config.json"));
  EXPECT_EQ(tuned_tokenizer["extra_ids"], 20);
}

TEST(SpanCorruptionEndToEnd, KilledAndResumedRunMatchesAnUninterruptedOneBitForBit) {
  const std::string whole = fresh_dir("t5_span_whole"), resumed = fresh_dir("t5_span_resumed");
  const std::string run =
      "--set train.max_steps=30 --set checkpoint.every_steps=10 --set logging.every_steps=1 "
      "--set train.eval_at_end=false ";
  Outcome o = run_train(span_args(whole, run));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  Outcome killed = run_train(span_args(resumed, run), "HEED_FAULT_AFTER_STEP=17:KILL");
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.output;
  Outcome again = run_train(span_args(resumed, run + "--resume"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("at step 10"), std::string::npos) << again.output;
  const auto a = losses(whole), b = losses(resumed);
  ASSERT_EQ(a.size(), 30u);
  EXPECT_EQ(a, b);
  expect_same_training_files(whole + "/checkpoint-30", resumed + "/checkpoint-30");
}

TEST(SpanCorruptionEndToEnd, ConfigsThatCannotWorkNameTheKey) {
  const std::string out = fresh_dir("t5_span_bad");
  struct Case {
    std::string set, key, says;
  };
  // 32-token inputs come from windows of 35 tokens: 5 noise tokens in 2 spans.
  for (const Case& c : std::vector<Case>{
           {"--set tokenizer.extra_ids=1", "tokenizer.extra_ids", "makes 2 spans, each needing"},
           {"--set tokenizer.type=wordpiece --set tokenizer.extra_ids=null", "tokenizer.type",
            "needs a sentencepiece tokenizer"},
           {"--set data.mean_noise_span_length=0.5", "data.mean_noise_span_length",
            "below one token"},
           {"--set data.noise_density=1.5", "data.noise_density", ""},
       }) {
    Outcome o = run_train(span_args(out, c.set));
    EXPECT_NE(o.exit_code, 0) << c.set;
    EXPECT_NE(o.output.find(c.key), std::string::npos) << c.set << "\n" << o.output;
    EXPECT_NE(o.output.find(c.says), std::string::npos) << c.set << "\n" << o.output;
  }
  // Sentinels are SentencePiece pieces: a character vocabulary has none to add.
  Outcome chars = run_train(
      "--config configs/tiny/t5_g2p.yaml --set tokenizer.extra_ids=5 "
      "--set train.output_dir=" +
      out);
  EXPECT_NE(chars.exit_code, 0);
  EXPECT_NE(chars.output.find("tokenizer.extra_ids: sentinels are T5's SentencePiece pieces"),
            std::string::npos)
      << chars.output;
}
