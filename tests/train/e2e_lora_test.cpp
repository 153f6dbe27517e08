// LoRA end to end (configs/tiny/lora_classify.yaml): a classifier fine-tuned through adapters
// from the tiny MLM checkpoint learns with its base frozen, writes PEFT's files, resumes after
// SIGKILL bit for bit, serves `infer` with the adapter applied or merged, starts a next run as
// the adapted model, and bad `lora` keys exit with 2 and one line naming what is wrong.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/safetensors.h"
#include "train/run_train.h"

namespace fs = std::filesystem;

using namespace heed::testing;

namespace {

// The tiny MLM's checkpoint that the LoRA runs start from.
std::string pretrain(const std::string& name) {
  const std::string mlm = fresh_dir(name);
  const Outcome o = run_train("--config configs/tiny/bert_mlm.yaml --set train.output_dir=" + mlm +
                              " --set tokenizer.vocab=" + mlm + "/vocab.txt");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  return mlm + "/checkpoint-200";
}

std::string lora_args(const std::string& base, const std::string& out,
                      const std::string& extra = "") {
  return "--config configs/tiny/lora_classify.yaml --set init_from=" + base +
         " --set train.output_dir=" + out + " --set logging.every_steps=1 " + extra;
}

double mean_loss(const std::vector<std::pair<int64_t, double>>& l, size_t from, size_t n) {
  double sum = 0;
  for (size_t i = from; i < from + n; ++i) sum += l.at(i).second;
  return sum / static_cast<double>(n);
}

// The class probabilities `infer classify --json` gives for `text`.
std::vector<double> probabilities(const std::string& args, const std::string& text) {
  const Outcome o = run_infer("classify " + args + " --json --text '" + text + "'");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  const nlohmann::json j = nlohmann::json::parse(o.output);
  std::vector<double> out;
  for (const auto& label : j["labels"]) out.push_back(label["probability"].get<double>());
  return out;
}

}  // namespace

TEST(EndToEndLora, ClassifierLearnsThroughAdaptersWithItsBaseFrozenAndResumesBitForBit) {
  const std::string base = pretrain("lora_pretrain");
  const std::string whole = fresh_dir("lora_whole"), resumed = fresh_dir("lora_resumed");
  const Outcome o = run_train(lora_args(base, whole));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("lora: r 8, lora_alpha 16, 4 adapters (query, value)"), std::string::npos)
      << o.output;
  const auto l = losses(whole);
  ASSERT_EQ(l.size(), 80u);
  EXPECT_LT(mean_loss(l, 70, 10), mean_loss(l, 0, 10) - 0.2) << o.output;
  const auto final_metrics = nlohmann::json::parse(file_bytes(whole + "/final_metrics.json"));
  EXPECT_GT(final_metrics["test"]["accuracy"].get<double>(), 0.8) << o.output;

  // PEFT's files beside the model; the base weights are the checkpoint's, untouched, and have
  // no optimizer state.
  const fs::path ckpt = fs::path(whole) / "checkpoint-80";
  const auto config = nlohmann::json::parse(file_bytes((ckpt / "adapter_config.json").string()));
  EXPECT_EQ(config["peft_type"], "LORA");
  EXPECT_EQ(config["task_type"], "SEQ_CLS");
  EXPECT_EQ(config["base_model_name_or_path"], base);
  EXPECT_EQ(config["modules_to_save"], (nlohmann::json{"classifier", "pooler"}));
  const heed::io::SafetensorsFile adapter((ckpt / "adapter_model.safetensors").string());
  const std::string query = "base_model.model.bert.encoder.layer.1.attention.self.query.";
  EXPECT_EQ(adapter.info(query + "lora_A.weight").shape, (heed::Shape{8, 64}));
  EXPECT_EQ(adapter.info(query + "lora_B.weight").shape, (heed::Shape{64, 8}));
  EXPECT_TRUE(adapter.contains("base_model.model.classifier.weight"));
  EXPECT_TRUE(adapter.contains("base_model.model.bert.pooler.dense.bias"));
  EXPECT_EQ(adapter.names().size(), 4u * 2 + 4);
  const heed::io::SafetensorsFile trained((ckpt / "model.safetensors").string());
  const heed::io::SafetensorsFile pretrained(base + "/model.safetensors");
  for (const char* name :
       {"bert.encoder.layer.1.attention.self.query.weight",
        "bert.encoder.layer.0.output.dense.weight", "bert.embeddings.word_embeddings.weight"}) {
    const auto a = trained.bytes(name), b = pretrained.bytes(name);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << name;
  }
  const heed::io::SafetensorsFile optimizer((ckpt / "optimizer.safetensors").string());
  for (const std::string& name : optimizer.names()) {
    EXPECT_TRUE(name.find("lora_") != std::string::npos || name.starts_with("classifier.") ||
                name.starts_with("bert.pooler."))
        << name;
  }
  EXPECT_TRUE(
      optimizer.contains("bert.encoder.layer.0.attention.self.value.lora_B.weight.exp_avg"));

  // SIGKILL after step 47: the newest checkpoint is step 40.
  const Outcome killed = run_train(lora_args(base, resumed), "HEED_FAULT_AFTER_STEP=47:KILL");
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.output;
  const Outcome again = run_train(lora_args(base, resumed, "--resume"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("at step 40"), std::string::npos) << again.output;
  EXPECT_EQ(losses(resumed), l);  // exact, not approximate
  expect_same_training_files(whole + "/checkpoint-80", resumed + "/checkpoint-80");
  EXPECT_EQ(file_bytes(whole + "/checkpoint-80/adapter_model.safetensors"),
            file_bytes(resumed + "/checkpoint-80/adapter_model.safetensors"));

  // infer: the checkpoint applies its own adapter; the base with --adapter and the merged
  // model give the same probabilities.
  const std::string text = "win a free prize now click here";
  const std::vector<double> own = probabilities("--checkpoint " + ckpt.string(), text);
  ASSERT_EQ(own.size(), 2u);
  EXPECT_EQ(probabilities("--checkpoint " + base + " --adapter " + ckpt.string(), text), own);
  const std::string merged = fresh_dir("lora_merged");
  const Outcome merge = run_infer("merge --checkpoint " + ckpt.string() + " --out " + merged);
  ASSERT_EQ(merge.exit_code, 0) << merge.output;
  EXPECT_FALSE(fs::exists(fs::path(merged) / "adapter_config.json"));
  const std::vector<double> from_merged = probabilities("--checkpoint " + merged, text);
  ASSERT_EQ(from_merged.size(), 2u);
  for (size_t i = 0; i < own.size(); ++i) EXPECT_NEAR(from_merged[i], own[i], 1e-5);

  // A run from the LoRA checkpoint (a pipeline's next stage) starts from the adapted model: at a
  // rate too small to move it, it scores what the LoRA run scored.
  const std::string next = fresh_dir("lora_next");
  const Outcome from_lora =
      run_train("--config configs/tiny/bert_classify.yaml --set init_from=" + ckpt.string() +
                " --set train.output_dir=" + next +
                " --set train.max_steps=1 --set optim.lr=1e-12 --set schedule.warmup_steps=0");
  ASSERT_EQ(from_lora.exit_code, 0) << from_lora.output;
  EXPECT_NE(from_lora.output.find("holds a LoRA adapter (adapter_config.json): merged"),
            std::string::npos)
      << from_lora.output;
  const auto next_metrics = nlohmann::json::parse(file_bytes(next + "/final_metrics.json"));
  EXPECT_EQ(next_metrics["test"]["accuracy"], final_metrics["test"]["accuracy"]);
  EXPECT_NEAR(next_metrics["test"]["loss"].get<double>(),
              final_metrics["test"]["loss"].get<double>(), 1e-4);

  // Bad lora keys: one line naming the key and what is wrong, exit code 2.
  const Outcome unknown = run_train(
      lora_args(base, fresh_dir("lora_unknown"), "--set lora.target_modules=[query,q_proj]"));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("lora.target_modules: 'q_proj' names no Linear module"),
            std::string::npos)
      << unknown.output;
  const Outcome fresh_head = run_train(
      lora_args(base, fresh_dir("lora_fresh_head"), "--set lora.modules_to_save=[classifier]"));
  EXPECT_EQ(fresh_head.exit_code, 2) << fresh_head.output;
  EXPECT_NE(fresh_head.output.find("lora: bert.pooler.dense is not in init_from"),
            std::string::npos)
      << fresh_head.output;
  const Outcome no_targets =
      run_train(lora_args(base, fresh_dir("lora_no_targets"), "--set lora.target_modules=null"));
  EXPECT_EQ(no_targets.exit_code, 2) << no_targets.output;
  EXPECT_NE(no_targets.output.find("lora.lora_alpha: has no effect without lora.target_modules"),
            std::string::npos)
      << no_targets.output;
}
