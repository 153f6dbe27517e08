// train.gradient_checkpointing end to end: the same losses and the same model and optimizer
// files, byte for byte, as the run without it (dropout on), in each family; a resumed run may
// switch it; the memory estimate the run prints shrinks.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "run_train.h"

namespace heed::testing {
namespace {

// The tiny config `config` for 20 steps into a fresh directory `name`, with `extra` settings.
std::string short_run(const std::string& config, const std::string& out, const std::string& extra) {
  return "--config configs/tiny/" + config + " --set train.output_dir=" + out +
         " --set train.max_steps=20 --set schedule.warmup_steps=2 --set logging.every_steps=1 " +
         "--set checkpoint.every_steps=10 --set eval.every_steps=0 --set train.eval_at_end=false " +
         extra;
}

// The activations part of the run's "memory:" line, in MB.
double activation_mb(const std::string& output) {
  std::smatch m;
  const std::regex line(R"(activations of a micro-batch of \d+: (\d+) MB)");
  EXPECT_TRUE(std::regex_search(output, m, line)) << output;
  return m.size() > 1 ? std::stod(m[1].str()) : 0.0;
}

void expect_same_run(const std::string& config, const std::string& name,
                     const std::string& extra = "") {
  const std::string plain = fresh_dir(name + "_plain"), recomputed = fresh_dir(name + "_recompute");
  const Outcome a = run_train(short_run(config, plain, extra));
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const Outcome b =
      run_train(short_run(config, recomputed, extra + " --set train.gradient_checkpointing=true"));
  ASSERT_EQ(b.exit_code, 0) << b.output;
  const auto la = losses(plain), lb = losses(recomputed);
  ASSERT_EQ(la.size(), 20u);
  EXPECT_EQ(la, lb);  // exact
  expect_same_training_files(plain + "/checkpoint-20", recomputed + "/checkpoint-20");
  EXPECT_LT(activation_mb(b.output), activation_mb(a.output));
}

TEST(GradientCheckpointingRun, MaskedLmSameFilesAsWithout) {
  const std::string vocab = " --set tokenizer.vocab=" + fresh_dir("ckpt_mlm_vocab") + "/vocab.txt";
  expect_same_run("bert_mlm.yaml", "ckpt_mlm", vocab);
}

TEST(GradientCheckpointingRun, CausalLmSameFilesAsWithout) {
  const std::string vocab = " --set tokenizer.vocab=" + fresh_dir("ckpt_clm_vocab") + "/vocab.txt";
  expect_same_run("gpt_lm.yaml", "ckpt_clm", vocab);
}

TEST(GradientCheckpointingRun, Seq2SeqSameFilesAsWithout) {
  expect_same_run("seq2seq_g2p.yaml", "ckpt_seq2seq");
}

TEST(GradientCheckpointingRun, AResumedRunMaySwitchIt) {
  const std::string whole = fresh_dir("ckpt_switch_whole"), resumed = fresh_dir("ckpt_switch");
  const std::string vocab = " --set tokenizer.vocab=" + whole + "/vocab.txt";
  ASSERT_EQ(run_train(short_run("bert_mlm.yaml", whole, vocab)).exit_code, 0);
  const std::string first =
      short_run("bert_mlm.yaml", resumed, vocab) + " --set train.gradient_checkpointing=true";
  const Outcome killed = run_train(first, "HEED_FAULT_AFTER_STEP=13:KILL");
  ASSERT_NE(killed.exit_code, 0) << killed.output;
  const Outcome again = run_train(short_run("bert_mlm.yaml", resumed, vocab) + " --resume");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(losses(whole), losses(resumed));
  expect_same_training_files(whole + "/checkpoint-20", resumed + "/checkpoint-20");
}

}  // namespace
}  // namespace heed::testing
