// T5 under the seq2seq task end to end (configs/tiny/t5_g2p.yaml): the loss falls and the
// decoded outputs score, a run killed with SIGKILL and resumed matches an uninterrupted one bit
// for bit (with AdamW and with Adafactor), `infer translate` decodes as the model in memory did
// (greedy and beam search), and a run starts from the checkpoint with init_from.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "train/run_train.h"

namespace fs = std::filesystem;
using namespace heed::testing;

namespace {

std::string t5_args(const std::string& out, const std::string& extra = "") {
  return "--config configs/tiny/t5_g2p.yaml --set train.output_dir=" + out + " " + extra;
}

}  // namespace

TEST(T5EndToEnd, TinyGraphemeToPhonemeLearnsAndInferTranslatesAsTheModelInMemory) {
  const std::string out = fresh_dir("t5_g2p");
  Outcome o = run_train(t5_args(out));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto l = losses(out);
  ASSERT_GE(l.size(), 10u);
  EXPECT_LT(l.back().second, l.front().second / 4) << o.output;
  // The decoded outputs beat those of the model after one step. (T5 has no position
  // embeddings: on 871 words its cross-attention learns the alignment slowly, and 300 steps
  // leave about 0.65 of the phonemes wrong, where the BART layout gets 0.1.)
  const std::string barely = fresh_dir("t5_g2p_one_step");
  ASSERT_EQ(
      run_train(t5_args(barely, "--set train.max_steps=1 --set schedule.warmup_steps=0")).exit_code,
      0);
  auto error_rate = [](const std::string& dir) {
    return nlohmann::json::parse(
               file_bytes(dir + "/final_metrics.json"))["test"]["token_error_rate"]
        .get<double>();
  };
  EXPECT_LT(error_rate(out), error_rate(barely)) << o.output;
  const std::string checkpoint = out + "/checkpoint-300";
  const auto config = nlohmann::json::parse(file_bytes(checkpoint + "/config.json"));
  EXPECT_EQ(config["architectures"][0], "T5ForConditionalGeneration");
  EXPECT_EQ(config["model_type"], "t5");
  const std::string model = file_bytes(checkpoint + "/model.safetensors");
  for (const char* name : {"encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
                           "decoder.block.1.layer.1.EncDecAttention.q.weight",
                           "decoder.block.1.layer.2.DenseReluDense.wi_1.weight", "lm_head.weight"})
    EXPECT_NE(model.find(name), std::string::npos) << name;

  // The run lists "  SOURCE -> OUTPUT | REFERENCE" for held-out words as the model in memory
  // decodes them; the checkpoint must decode each the same way.
  const std::string marker = "outputs on held-out sources (output | reference):\n";
  const size_t at = o.output.find(marker);
  ASSERT_NE(at, std::string::npos) << o.output;
  std::istringstream lines(o.output.substr(at + marker.size()));
  std::string line;
  int checked = 0;
  while (std::getline(lines, line) && line.rfind("  ", 0) == 0) {
    const size_t arrow = line.find(" -> "), bar = line.find(" | ");
    ASSERT_TRUE(arrow != std::string::npos && bar != std::string::npos) << line;
    const std::string source = line.substr(2, arrow - 2);
    const std::string output = line.substr(arrow + 4, bar - arrow - 4);
    const Outcome greedy = run_infer("translate --checkpoint " + checkpoint +
                                     " --json --max-new-tokens 30 --text '" + source + "'");
    ASSERT_EQ(greedy.exit_code, 0) << greedy.output;
    EXPECT_EQ(nlohmann::json::parse(greedy.output)["output"].get<std::string>(), output) << source;
    const Outcome beam =
        run_infer("translate --checkpoint " + checkpoint +
                  " --json --num-beams 3 --max-new-tokens 30 --text '" + source + "'");
    ASSERT_EQ(beam.exit_code, 0) << beam.output;
    EXPECT_FALSE(nlohmann::json::parse(beam.output)["output_ids"].empty()) << beam.output;
    ++checked;
  }
  EXPECT_EQ(checked, 6) << o.output;

  // Fine-tuning starts from the checkpoint's weights: its first loss is the trained model's.
  const std::string tuned = fresh_dir("t5_g2p_init_from");
  Outcome again = run_train(t5_args(tuned, "--set init_from=" + checkpoint +
                                               " --set tokenizer.vocab=" + checkpoint +
                                               "/char_tokenizer.json --set train.max_steps=20"
                                               " --set logging.every_steps=1"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("init_from " + checkpoint), std::string::npos) << again.output;
  const auto first = losses(tuned);
  ASSERT_FALSE(first.empty());
  EXPECT_LT(first.front().second, l.front().second / 2) << again.output;
}

namespace {

// A 40-step run killed with SIGKILL after step 27 and resumed from checkpoint-20 against the
// same run uninterrupted: the same losses, the same checkpoint-40 bytes.
void expect_kill_and_resume_bit_for_bit(const std::string& name, const std::string& options) {
  const std::string whole = fresh_dir(name + "_whole"), resumed = fresh_dir(name + "_resumed");
  const std::string run =
      "--set train.max_steps=40 --set checkpoint.every_steps=10 --set logging.every_steps=1 "
      "--set train.eval_at_end=false " +
      options + " ";
  Outcome o = run_train(t5_args(whole, run));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  Outcome killed = run_train(t5_args(resumed, run), "HEED_FAULT_AFTER_STEP=27:KILL");
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.output;
  Outcome again = run_train(t5_args(resumed, run + "--resume"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("at step 20"), std::string::npos) << again.output;
  const auto a = losses(whole), b = losses(resumed);
  ASSERT_EQ(a.size(), 40u);
  EXPECT_EQ(a, b);
  EXPECT_LT(a.back().second, a.front().second);
  expect_same_training_files(whole + "/checkpoint-40", resumed + "/checkpoint-40");
}

}  // namespace

TEST(T5EndToEnd, KilledAndResumedRunMatchesAnUninterruptedOneBitForBit) {
  expect_kill_and_resume_bit_for_bit("t5", "");
}

// T5's own optimizer: its factored state goes into the checkpoint and comes back.
TEST(T5EndToEnd, AdafactorRunResumesBitForBit) {
  expect_kill_and_resume_bit_for_bit(
      "t5_adafactor",
      "--set optim.name=adafactor --set optim.lr=1e-2 --set schedule.name=constant "
      "--set schedule.warmup_steps=0");
}
