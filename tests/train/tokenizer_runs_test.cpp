// A GPT trained end to end with each subword tokenizer heed trains besides WordPiece: the
// byte-level BPE and SentencePiece are trained from the corpus, the loss falls, evaluation
// reports bits per byte, and the checkpoint carries the tokenizer's Hugging Face files, which
// `infer generate` and `tokenize --tokenizer` then use.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "train/run_train.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;
using testing::file_bytes;
using testing::fresh_dir;
using testing::losses;
using testing::Outcome;
using testing::run_train;

struct Command {
  int exit_code;
  std::string output;
};

Command run(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// The tiny GPT run with another tokenizer, trained into the run directory as `vocab`;
// returns the run directory.
std::string train_tiny_gpt(const std::string& name, const std::string& vocab,
                           const std::string& tokenizer_sets) {
  const std::string out = fresh_dir(name);
  Outcome o = run_train("--config configs/tiny/gpt_lm.yaml --set train.output_dir=" + out +
                        " --set train.max_steps=100 --set tokenizer.vocab=" + out + "/" + vocab +
                        " " + tokenizer_sets);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  const auto l = losses(out);
  EXPECT_GE(l.size(), 5u) << o.output;
  if (!l.empty()) {
    EXPECT_LT(l.back().second, l.front().second - 1.0) << o.output;
  }
  // Every split is reported in bits per byte: the loss per token times tokens per byte.
  const auto metrics = nlohmann::json::parse(file_bytes(out + "/final_metrics.json"));
  for (const char* split : {"valid", "test"}) {
    EXPECT_TRUE(metrics[split].contains("bits_per_byte")) << metrics.dump();
    const double bpb = metrics[split].value("bits_per_byte", 0.0);
    EXPECT_GT(bpb, 0.0) << metrics.dump();
    EXPECT_LT(bpb, 8.0) << metrics.dump();  // better than spelling each byte at random
  }
  return out;
}

// tokenize --tokenizer on the checkpoint: ids, then --decode back to the same text.
void expect_round_trip(const std::string& checkpoint, const std::string& text) {
  const std::string tokenize = std::string(HEED_TOKENIZE_BIN) + " --tokenizer " + checkpoint;
  const Command ids = run("printf '%s\\n' '" + text + "' | " + tokenize);
  ASSERT_EQ(ids.exit_code, 0) << ids.output;
  ASSERT_FALSE(ids.output.empty());
  const Command back = run("printf '%s' '" + ids.output + "' | " + tokenize + " --decode");
  ASSERT_EQ(back.exit_code, 0) << back.output;
  EXPECT_EQ(back.output, text + "\n");
}

std::string generated_text(const std::string& checkpoint, const std::string& prompt) {
  const Command g = run(std::string(HEED_INFER_BIN) + " generate --checkpoint " + checkpoint +
                        " --prompt '" + prompt + "' --greedy --max-new-tokens 8 --json");
  EXPECT_EQ(g.exit_code, 0) << g.output;
  const auto j = nlohmann::json::parse(g.output, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << g.output;
  if (j.is_discarded()) return "";
  EXPECT_EQ(j["generated_ids"].size(), 8u) << g.output;
  return j["text"].get<std::string>();
}

TEST(TokenizerRuns, GptWithATrainedByteLevelBpe) {
  const std::string out =
      train_tiny_gpt("gpt_bpe", "bpe", "--set tokenizer.type=bpe --set tokenizer.vocab_size=300");
  const fs::path checkpoint = fs::path(out) / "checkpoint-100";
  for (const char* file : {"vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json",
                           "special_tokens_map.json", "config.json", "model.safetensors"}) {
    EXPECT_TRUE(fs::exists(checkpoint / file)) << file;
  }
  const auto config =
      nlohmann::json::parse(file_bytes((checkpoint / "tokenizer_config.json").string()));
  EXPECT_EQ(config["tokenizer_class"], "GPT2Tokenizer");
  EXPECT_EQ(config["eos_token"], "<|endoftext|>");
  // The byte-level BPE is cased and spells what the corpus never showed.
  expect_round_trip(checkpoint.string(), "The OLD captain, naïve: 42 × 7 ≠ 🙂");
  const std::string text = generated_text(checkpoint.string(), "the old captain");
  EXPECT_TRUE(text.starts_with("the old captain")) << text;

  // A run from this checkpoint that names no tokenizer continues with the checkpoint's BPE.
  const std::string tuned = fresh_dir("gpt_bpe_tuned");
  const std::string run_yaml = tuned + ".yaml";
  std::ofstream(run_yaml)
      << "task: clm\n"
      << "model: {arch: gpt2, n_embd: 64, n_layer: 2, n_head: 2, n_positions: 32}\n"
      << "init_from: " << checkpoint.string() << "\n"
      << "data: {train: tests/tiny_data/lm_train.txt, max_seq_length: 32}\n"
      << "train: {batch_size: 8, max_steps: 5, threads: 1, output_dir: " << tuned << "}\n"
      << "logging: {progress: never}\n";
  Outcome o = run_train("--config " + run_yaml);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto tuned_config = nlohmann::json::parse(
      file_bytes((fs::path(tuned) / "checkpoint-5" / "tokenizer_config.json").string()));
  EXPECT_EQ(tuned_config["tokenizer_class"], "GPT2Tokenizer");
  EXPECT_EQ(file_bytes((fs::path(tuned) / "checkpoint-5" / "merges.txt").string()),
            file_bytes((checkpoint / "merges.txt").string()));
}

TEST(TokenizerRuns, GptWithATrainedSentencePieceModel) {
  const std::string out =
      train_tiny_gpt("gpt_spm", "spiece.model",
                     "--set tokenizer.type=sentencepiece --set tokenizer.vocab_size=120");
  const fs::path checkpoint = fs::path(out) / "checkpoint-100";
  EXPECT_TRUE(fs::exists(checkpoint / "spiece.model"));
  const auto config =
      nlohmann::json::parse(file_bytes((checkpoint / "tokenizer_config.json").string()));
  EXPECT_EQ(config["tokenizer_class"], "T5Tokenizer");
  EXPECT_EQ(config["eos_token"], "</s>");
  expect_round_trip(checkpoint.string(), "the old captain sees the ship");
  const std::string text = generated_text(checkpoint.string(), "the old captain");
  EXPECT_TRUE(text.starts_with("the old captain")) << text;
}

}  // namespace
}  // namespace heed::train
