// The `train` program end to end on the tiny configs: the loss falls, checkpoints hold what
// they should, a run killed with SIGKILL and resumed matches an uninterrupted one bit for
// bit, SIGTERM and SIGUSR1 save and exit cleanly, fine-tuning starts from a checkpoint, and bad
// configs exit with 2 and one line.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/directory_lock.h"
#include "io/safetensors.h"
#include "train/run_train.h"

namespace fs = std::filesystem;

using namespace heed::testing;

namespace {

std::string mlm_args(const std::string& out, const std::string& extra = "") {
  return "--config configs/tiny/bert_mlm.yaml --set train.output_dir=" + out +
         " --set tokenizer.vocab=" + out + "/vocab.txt " + extra;
}

// Pretrains the tiny MLM into a fresh `name`_pretrain directory, then runs the tiny
// fine-tuning `config` from its final checkpoint into `out`.
Outcome fine_tune_from_tiny_mlm(const std::string& name, const std::string& config,
                                const std::string& out) {
  const std::string mlm = fresh_dir(name + "_pretrain");
  Outcome pretrain = run_train(mlm_args(mlm));
  if (pretrain.exit_code != 0) return pretrain;
  return run_train("--config " + config + " --set train.output_dir=" + out +
                   " --set init_from=" + mlm + "/checkpoint-200");
}

}  // namespace

TEST(EndToEnd, TinyMlmLossFallsAndCheckpointsHoldEverything) {
  const std::string out = fresh_dir("mlm");
  Outcome o = run_train(mlm_args(out));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto l = losses(out);
  ASSERT_GE(l.size(), 4u);
  EXPECT_LT(l.back().second, l.front().second - 0.5) << o.output;
  const fs::path ckpt = fs::path(out) / "checkpoint-200";
  for (const char* f : {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json",
                        "optimizer.safetensors", "trainer_state.json", "run_config.yaml"}) {
    EXPECT_TRUE(fs::exists(ckpt / f)) << f;
  }
  // keep_last 2: checkpoints 50 and 100 were removed.
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint-100"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-150"));
  auto final_metrics = nlohmann::json::parse(file_bytes(out + "/final_metrics.json"));
  EXPECT_TRUE(final_metrics["valid"].contains("accuracy"));
  EXPECT_TRUE(final_metrics["test"].contains("perplexity"));
  // A masked token's loss per byte of text: loss / ln 2 x tokens per byte.
  EXPECT_GT(final_metrics["test"].value("bits_per_byte", 0.0), 0.0);
  EXPECT_LT(final_metrics["test"].value("bits_per_byte", 99.0),
            final_metrics["test"].value("loss", 0.0) / std::log(2.0));
  EXPECT_NE(o.output.find("fill-mask on held-out text"), std::string::npos);
}

TEST(EndToEnd, HeedProfilePrintsTheTimeOfEachOpAtTheEnd) {
  const std::string out = fresh_dir("profile");
  Outcome o = run_train(mlm_args(out,
                                 "--set train.max_steps=5 --set schedule.warmup_steps=1 "
                                 "--set checkpoint.every_steps=0 --set eval.every_steps=0"),
                        "HEED_PROFILE=1");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const size_t table = o.output.find("time per op over the run (HEED_PROFILE):");
  ASSERT_NE(table, std::string::npos) << o.output;
  for (const char* op : {"LinearBackward", "linear", "attention_dropout_values", "layer_norm"}) {
    EXPECT_NE(o.output.find(op, table), std::string::npos) << op;
  }
  // Off by default: no table.
  Outcome quiet = run_train(mlm_args(out,
                                     "--set train.max_steps=5 --set schedule.warmup_steps=1 "
                                     "--set checkpoint.every_steps=0 --set eval.every_steps=0 "
                                     "--set train.overwrite_output_dir=true"));
  ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_EQ(quiet.output.find("time per op"), std::string::npos);
}

// oneDNN told to stop at AVX2 stands in for an AVX2-only CPU: there bf16 products would only
// be emulated (slower than f32), so train.dtype bf16 trains in f32 and says so.
TEST(EndToEnd, Bf16WithoutNativeBf16ProductsTrainsInF32AndSaysSo) {
  const std::string avx2 = "ONEDNN_MAX_CPU_ISA=AVX2";
  const std::string run =
      "--set train.max_steps=4 --set schedule.warmup_steps=1 "
      "--set checkpoint.every_steps=0 --set eval.every_steps=0 "
      "--set logging.every_steps=1 ";
  const std::string f32 = fresh_dir("avx2_f32"), bf16 = fresh_dir("avx2_bf16");
  Outcome a = run_train(mlm_args(f32, run), avx2);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  Outcome b = run_train(mlm_args(bf16, run + "--set train.dtype=bf16"), avx2);
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_NE(b.output.find("train.dtype: bf16: this CPU has no native bf16 matrix products"),
            std::string::npos)
      << b.output;
  EXPECT_EQ(a.output.find("no native bf16"), std::string::npos);
  ASSERT_EQ(losses(f32).size(), 4u);
  EXPECT_EQ(losses(bf16), losses(f32));  // the same f32 run, to the bit
}

TEST(EndToEnd, KilledAndResumedRunMatchesAnUninterruptedOneBitForBit) {
  const std::string whole = fresh_dir("whole"), resumed = fresh_dir("resumed");
  const std::string every_step = "--set logging.every_steps=1";
  ASSERT_EQ(run_train(mlm_args(whole, every_step)).exit_code, 0);
  // SIGKILL right after step 57: the newest checkpoint is step 50; 7 steps are lost.
  Outcome killed = run_train(mlm_args(resumed, every_step), "HEED_FAULT_AFTER_STEP=57:KILL");
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.output;
  EXPECT_FALSE(fs::exists(fs::path(resumed) / "checkpoint-200"));
  Outcome again = run_train(mlm_args(resumed, every_step + " --resume"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("at step 50"), std::string::npos) << again.output;
  auto a = losses(whole), b = losses(resumed);
  ASSERT_EQ(a.size(), 200u);
  ASSERT_EQ(b.size(), 200u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_EQ(a[i].second, b[i].second) << "step " << a[i].first;  // exact, not approximate
  }
  EXPECT_EQ(file_bytes(whole + "/checkpoint-200/model.safetensors"),
            file_bytes(resumed + "/checkpoint-200/model.safetensors"));
  EXPECT_EQ(file_bytes(whole + "/checkpoint-200/optimizer.safetensors"),
            file_bytes(resumed + "/checkpoint-200/optimizer.safetensors"));
}

// BERT with relative_key_query: learns, resumes bit for bit although the absolute table it
// keeps (as Hugging Face's files do) never gets a gradient or optimizer state, writes Hugging
// Face's names, and serves `infer`.
TEST(EndToEnd, RelativePositionMlmLearnsResumesExactlyAndServesInfer) {
  const std::string whole = fresh_dir("relative_whole"), resumed = fresh_dir("relative_resumed");
  const std::string run =
      "--set model.position_embedding_type=relative_key_query --set train.max_steps=60 "
      "--set checkpoint.every_steps=20 --set logging.every_steps=1 ";
  Outcome o = run_train(mlm_args(whole, run));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  Outcome killed = run_train(mlm_args(resumed, run), "HEED_FAULT_AFTER_STEP=47:KILL");
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.output;
  Outcome again = run_train(mlm_args(resumed, run + "--resume"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("at step 40"), std::string::npos) << again.output;
  const auto a = losses(whole), b = losses(resumed);
  ASSERT_EQ(a.size(), 60u);
  ASSERT_EQ(a, b);
  EXPECT_LT(a.back().second, a.front().second - 0.5);
  const std::string checkpoint = whole + "/checkpoint-60";
  expect_same_training_files(checkpoint, resumed + "/checkpoint-60");
  const auto config = nlohmann::json::parse(file_bytes(checkpoint + "/config.json"));
  EXPECT_EQ(config["position_embedding_type"], "relative_key_query");
  const std::string model = file_bytes(checkpoint + "/model.safetensors");
  EXPECT_NE(model.find("bert.encoder.layer.1.attention.self.distance_embedding.weight"),
            std::string::npos);
  EXPECT_NE(model.find("bert.embeddings.position_embeddings.weight"), std::string::npos);

  const Outcome fill = run_infer("fill-mask --checkpoint " + checkpoint +
                                 " --text 'the [MASK] ship sees the sea.' --json");
  ASSERT_EQ(fill.exit_code, 0) << fill.output;
  EXPECT_NE(fill.output.find("\"filled\""), std::string::npos) << fill.output;
}

TEST(EndToEnd, ResumeRefusesAChangedDataOrder) {
  // The saved loader position means "batch k of this order": resuming with another batch
  // size or grouping would silently train on another rest of the epoch.
  const std::string out = fresh_dir("resume_order");
  Outcome first =
      run_train(mlm_args(out, "--set train.max_steps=50 --set schedule.warmup_steps=5"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  Outcome changed =
      run_train(mlm_args(out,
                         "--set train.max_steps=60 --set schedule.warmup_steps=5 --resume "
                         "--set train.batch_size=4"));
  EXPECT_EQ(changed.exit_code, 2) << changed.output;
  EXPECT_NE(changed.output.find("train.batch_size: is 4 but was"), std::string::npos)
      << changed.output;
  // A smaller training set is another order too (the first run had the whole file: 0).
  Outcome fewer = run_train(mlm_args(out,
                                     "--set train.max_steps=60 --set schedule.warmup_steps=5 "
                                     "--resume --set data.max_train_samples=20"));
  EXPECT_EQ(fewer.exit_code, 2) << fewer.output;
  EXPECT_NE(fewer.output.find("train: the first 20 of"), std::string::npos) << fewer.output;
  EXPECT_NE(fewer.output.find("data.max_train_samples: is 20 but was 0"), std::string::npos)
      << fewer.output;
  Outcome same =
      run_train(mlm_args(out, "--set train.max_steps=60 --set schedule.warmup_steps=5 --resume"));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("at step 50"), std::string::npos) << same.output;
}

TEST(EndToEnd, AFreshRunLeavesAnEarlierRunAloneUnlessToldToReplaceIt) {
  // Without the check, a second run into this directory would append to metrics.jsonl, and
  // the rotation keeping the two newest checkpoints (steps 40 and 50) would delete each of
  // its own as soon as it was written.
  const std::string out = fresh_dir("earlier_run");
  const std::string short_run =
      "--set train.max_steps=50 --set schedule.warmup_steps=5 --set checkpoint.every_steps=10 "
      "--set logging.every_steps=1 ";
  ASSERT_EQ(run_train(mlm_args(out, short_run)).exit_code, 0);
  const std::string metrics_before = file_bytes(out + "/metrics.jsonl");

  Outcome again = run_train(mlm_args(out, short_run + "--set train.max_steps=30"));
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("train.output_dir: '" + out +
                              "' already holds an earlier run (checkpoint-40, checkpoint-50, "
                              "final_metrics.json, metrics.jsonl); continue it with --resume"),
            std::string::npos)
      << again.output;
  EXPECT_EQ(file_bytes(out + "/metrics.jsonl"), metrics_before);
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-50"));

  Outcome replaced = run_train(
      mlm_args(out, short_run + "--set train.max_steps=30 --set train.overwrite_output_dir=true"));
  ASSERT_EQ(replaced.exit_code, 0) << replaced.output;
  EXPECT_EQ(losses(out).size(), 30u);
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint-50"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-30"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "vocab.txt"));  // built from the data, so it stays
}

TEST(EndToEnd, AResumeBeforeTheFirstCheckpointStartsTheMetricsOver) {
  const std::string out = fresh_dir("killed_early");
  const std::string short_run =
      "--set train.max_steps=20 --set schedule.warmup_steps=5 --set checkpoint.every_steps=10 "
      "--set logging.every_steps=1";
  Outcome killed = run_train(mlm_args(out, short_run), "HEED_FAULT_AFTER_STEP=7:KILL");
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.output;
  EXPECT_EQ(losses(out).size(), 7u);
  Outcome resumed = run_train(mlm_args(out, short_run + " --resume"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  auto l = losses(out);
  ASSERT_EQ(l.size(), 20u);
  for (size_t i = 0; i < l.size(); ++i) EXPECT_EQ(l[i].first, static_cast<int64_t>(i + 1));
}

TEST(EndToEnd, ResumingAFinishedRunReportsItAndTrainsNothing) {
  const std::string out = fresh_dir("resume_finished");
  const std::string short_run = "--set train.max_steps=10 --set schedule.warmup_steps=2";
  ASSERT_EQ(run_train(mlm_args(out, short_run)).exit_code, 0);
  const std::string metrics = file_bytes(out + "/metrics.jsonl");
  const Outcome again = run_train(mlm_args(out, short_run + " --resume"));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output, "configs/tiny/bert_mlm.yaml: finished earlier (" + out +
                              "/final_metrics.json); its model is " + out + "/checkpoint-10\n");
  EXPECT_EQ(file_bytes(out + "/metrics.jsonl"), metrics);
}

TEST(EndToEnd, SigtermSavesACheckpointAndExitsCleanly) {
  const std::string out = fresh_dir("sigterm");
  Outcome o = run_train(mlm_args(out), "HEED_FAULT_AFTER_STEP=13:TERM");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("saving a checkpoint at step 13"), std::string::npos) << o.output;
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-13" / "trainer_state.json"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint-200"));
}

// SIGUSR1 is what Open MPI's mpirun forwards to every rank unchanged: the same clean stop.
TEST(EndToEnd, Sigusr1SavesACheckpointAndExitsCleanly) {
  const std::string out = fresh_dir("sigusr1");
  Outcome o = run_train(mlm_args(out), "HEED_FAULT_AFTER_STEP=7:USR1");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("received signal 10: saving a checkpoint at step 7"), std::string::npos)
      << o.output;
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-7" / "trainer_state.json"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint-200"));
}

TEST(EndToEnd, ClassifierFineTunesFromTheMlmCheckpoint) {
  const std::string cls = fresh_dir("classify");
  Outcome o = fine_tune_from_tiny_mlm("classify", "configs/tiny/bert_classify.yaml", cls);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("init_from"), std::string::npos);
  auto final_metrics = nlohmann::json::parse(file_bytes(cls + "/final_metrics.json"));
  // The toy spam set is separable by its vocabulary: far above the 65% majority class.
  EXPECT_GT(final_metrics["test"]["accuracy"].get<double>(), 0.85) << o.output;
  EXPECT_TRUE(final_metrics["test"].contains("spam_f1"));
  auto config = nlohmann::json::parse(file_bytes(cls + "/checkpoint-80/config.json"));
  EXPECT_EQ(config["architectures"][0], "BertForSequenceClassification");
  EXPECT_EQ(config["id2label"]["1"], "spam");
}

namespace {

// The evaluation records of `split` in metrics.jsonl, in order.
std::vector<nlohmann::json> evaluations(const std::string& dir, const std::string& split) {
  std::ifstream in(dir + "/metrics.jsonl");
  std::vector<nlohmann::json> out;
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j.value("split", "") == split) out.push_back(j);
  }
  return out;
}

}  // namespace

TEST(EndToEnd, LoadBestModelAtEndEvaluatesTheBestCheckpoint) {
  // Judged by the highest validation loss, the best model is an early one (the loss falls),
  // so the end must load an earlier checkpoint that the rotation (keep_last 2) kept.
  const std::string out = fresh_dir("best_model");
  Outcome o = run_train(mlm_args(out,
                                 "--set eval.every_steps=25 --set eval.load_best_model_at_end=true "
                                 "--set eval.metric_for_best_model=eval_loss "
                                 "--set eval.greater_is_better=true"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const std::vector<nlohmann::json> valid = evaluations(out, "valid");
  // Steps 25..200 in the loop (200 judged too), then the best model's final evaluation.
  ASSERT_EQ(valid.size(), 9u) << o.output;
  int64_t best_step = 0;
  double best_loss = -1;
  for (size_t i = 0; i + 1 < valid.size(); ++i) {
    EXPECT_EQ(valid[i]["step"], 25 * static_cast<int64_t>(i + 1));
    EXPECT_FALSE(valid[i].contains("model_step"));
    if (valid[i]["loss"].get<double>() > best_loss) {
      best_loss = valid[i]["loss"];
      best_step = valid[i]["step"];
    }
  }
  ASSERT_LT(best_step, 200) << "the valid loss never fell: the test shows nothing";
  const std::string best_dir = out + "/checkpoint-" + std::to_string(best_step);
  EXPECT_TRUE(fs::exists(best_dir + "/model.safetensors"));
  EXPECT_TRUE(fs::exists(out + "/checkpoint-200"));
  EXPECT_TRUE(fs::exists(out + "/checkpoint-150"));
  EXPECT_FALSE(fs::exists(out + "/checkpoint-100") && best_step != 100);

  // The final evaluation is of the loaded best model: the same numbers as at its step.
  const nlohmann::json& final_valid = valid.back();
  EXPECT_EQ(final_valid["step"], 200);
  EXPECT_EQ(final_valid["model_step"], best_step);
  EXPECT_EQ(final_valid["loss"], best_loss);
  EXPECT_EQ(final_valid["accuracy"], valid[best_step / 25 - 1]["accuracy"]);
  const std::vector<nlohmann::json> test = evaluations(out, "test");
  ASSERT_EQ(test.size(), 1u);
  EXPECT_EQ(test[0]["model_step"], best_step);

  auto final_metrics = nlohmann::json::parse(file_bytes(out + "/final_metrics.json"));
  EXPECT_EQ(final_metrics["step"], 200);
  EXPECT_EQ(final_metrics["checkpoint"], best_dir);
  EXPECT_EQ(final_metrics["best_model_checkpoint"], best_dir);
  EXPECT_EQ(final_metrics["best_global_step"], best_step);
  EXPECT_EQ(final_metrics["best_metric"], best_loss);
  EXPECT_EQ(final_metrics["metric_for_best_model"], "loss");
  EXPECT_EQ(final_metrics["valid"]["loss"], best_loss);
  EXPECT_EQ(final_metrics["test"]["loss"], test[0]["loss"]);
  EXPECT_NE(o.output.find("loaded the best model, " + best_dir), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("(the model of step " + std::to_string(best_step) + ")"),
            std::string::npos);
}

TEST(EndToEnd, TheBestModelSurvivesAKillAndResume) {
  // The best so far is part of a checkpoint: a run killed after a new best and resumed from an
  // older checkpoint chooses, saves and loads what the uninterrupted run does.
  const std::string whole = fresh_dir("best_whole"), resumed = fresh_dir("best_resumed");
  const std::string args =
      "--set eval.every_steps=20 --set eval.load_best_model_at_end=true "
      "--set eval.metric_for_best_model=accuracy --set checkpoint.every_steps=30";
  Outcome a = run_train(mlm_args(whole, args));
  ASSERT_EQ(a.exit_code, 0) << a.output;
  Outcome killed = run_train(mlm_args(resumed, args), "HEED_FAULT_AFTER_STEP=95:KILL");
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.output;
  Outcome b = run_train(mlm_args(resumed, args + " --resume"));
  ASSERT_EQ(b.exit_code, 0) << b.output;
  auto fa = nlohmann::json::parse(file_bytes(whole + "/final_metrics.json"));
  auto fb = nlohmann::json::parse(file_bytes(resumed + "/final_metrics.json"));
  EXPECT_EQ(fa["best_global_step"], fb["best_global_step"]);
  EXPECT_EQ(fa["best_metric"], fb["best_metric"]);
  EXPECT_EQ(fa["valid"], fb["valid"]);
  EXPECT_EQ(fa["test"], fb["test"]);
  const std::string best = "/checkpoint-" + std::to_string(fa["best_global_step"].get<int64_t>());
  EXPECT_EQ(file_bytes(whole + best + "/model.safetensors"),
            file_bytes(resumed + best + "/model.safetensors"));
  EXPECT_EQ(evaluations(whole, "valid"), evaluations(resumed, "valid"));
}

TEST(EndToEnd, APerClassMetricIsCheckedAgainstTheTrainingLabelsBeforeAnyWork) {
  const std::string out = fresh_dir("best_metric_name");
  Outcome o = run_train(
      "--config configs/tiny/bert_classify.yaml --set init_from=null "
      "--set tokenizer.vocab_size=200 --set train.output_dir=" +
      out +
      " --set eval.every_steps=10 --set eval.load_best_model_at_end=true "
      "--set eval.metric_for_best_model=spma_f1");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  // The one line names the override that set the metric, as the loading checks do, and comes
  // before the vocabulary is trained: nothing is written.
  EXPECT_EQ(o.output,
            "train: --set eval.metric_for_best_model=spma_f1: eval.metric_for_best_model: "
            "unknown metric 'spma_f1' (did you mean 'spam_f1'?)\n");
  EXPECT_FALSE(fs::exists(out));

  // Set in the file, it names the file and line.
  const std::string dir = fresh_dir("best_metric_name_in_file");
  fs::create_directories(dir);
  std::ofstream(dir + "/bad.yaml")
      << "task: classification\n"
         "model: {arch: bert, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 2,\n"
         "        intermediate_size: 128, max_position_embeddings: 32}\n"
         "tokenizer: {vocab_size: 200}\n"
         "data: {train: tests/tiny_data/spam_train.tsv, valid: tests/tiny_data/spam_valid.tsv,\n"
         "       max_seq_length: 32}\n"
         "train: {max_steps: 20, output_dir: "
      << dir
      << "/out}\n"
         "eval: {every_steps: 10, load_best_model_at_end: true,\n"
         "       metric_for_best_model: hamm_f1}\n";
  o = run_train("--config " + dir + "/bad.yaml");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_EQ(o.output, "train: " + dir +
                          "/bad.yaml:9: eval.metric_for_best_model: unknown metric 'hamm_f1' (did "
                          "you mean 'ham_f1'?)\n");
  EXPECT_FALSE(fs::exists(dir + "/out"));
}

namespace {

void expect_config_error(const std::string& yaml, const std::string& fragment) {
  // One directory per process: ctest runs the tests that call this in parallel.
  const std::string dir = fresh_dir("bad_config_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = dir + "/bad.yaml";
  std::ofstream(path) << yaml;
  Outcome o = run_train("--config " + path);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find(fragment), std::string::npos) << o.output;
  EXPECT_EQ(std::count(o.output.begin(), o.output.end(), '\n'), 1) << o.output;
}

const char* kGoodTail =
    "data: {train: tests/tiny_data/lm_train.txt}\n"
    "tokenizer: {vocab_size: 100}\n"
    "train: {max_steps: 5, output_dir: /tmp/heed_unused}\n";

}  // namespace

TEST(EndToEnd, BadConfigsExitWith2AndOneLine) {
  expect_config_error(
      std::string("task: mlm\nmodel: {arch: bert}\noptim: {learning_rate: 1}\n") + kGoodTail,
      "bad.yaml:3: unknown key 'optim.learning_rate' (did you mean 'optim.lr'?)");
  expect_config_error(
      std::string("task: mlm\nmodel: {arch: bert, hidden_size: 30, num_attention_heads: 4}\n") +
          kGoodTail,
      "bad.yaml:2:");
  expect_config_error(std::string("task: mlm\nmodel: {arch: bert}\noptim: {lr: -1}\n") + kGoodTail,
                      "optim.lr");
  expect_config_error(
      std::string("task: mlm\nmodel: {arch: bert, hidden_dropout_prob: 1.5}\n") + kGoodTail,
      "hidden_dropout_prob");
  expect_config_error(
      "task: mlm\nmodel: {arch: bert}\ndata: {train: no/such/file.txt}\n"
      "tokenizer: {vocab_size: 100}\ntrain: {max_steps: 5, output_dir: /tmp/x}\n",
      "bad.yaml:3: data.train: file 'no/such/file.txt' does not exist");
  expect_config_error(
      "task: mlm\nmodel: {arch: bert}\ndata: {train: tests/tiny_data/lm_train.txt}\n"
      "tokenizer: {vocab_size: 100}\ntrain: {max_steps: abc, output_dir: /tmp/x}\n",
      "train.max_steps");
  expect_config_error("model: {arch: bert}\n" + std::string(kGoodTail), "task");
}

TEST(EndToEnd, AbsurdThreadCountsAreRefused) {
  expect_config_error(
      "task: mlm\nmodel: {arch: bert}\ndata: {train: tests/tiny_data/lm_train.txt}\n"
      "tokenizer: {vocab_size: 100}\ntrain: {max_steps: 5, output_dir: /tmp/x, threads: 100000}\n",
      "bad.yaml:5: train.threads: must be at most 1024, got 100000");
}

TEST(EndToEnd, AModelBiggerThanTheMachineIsRefusedBeforeItIsBuilt) {
  const std::string out = fresh_dir("too_big");
  // About 6.4 billion parameters: more than 100 GB with gradients and AdamW's moments.
  Outcome o = run_train(mlm_args(out,
                                 "--set model.hidden_size=16384 "
                                 "--set model.intermediate_size=65536"));
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("configs/tiny/bert_mlm.yaml:3: model: the run needs about "),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("more than this machine's"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("or set train.check_memory: false to try anyway"), std::string::npos)
      << o.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / "metrics.jsonl"));
  // A run that fits says what it will hold.
  o = run_train(mlm_args(out, "--set train.max_steps=2 --set schedule.warmup_steps=1"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("memory: about "), std::string::npos) << o.output;
}

TEST(EndToEnd, ASecondRunIntoADirectoryInUseStopsWithExit2) {
  const std::string out = fresh_dir("locked");
  fs::create_directories(out);
  std::string holder;
  const std::optional<heed::io::DirectoryLock> lock =
      heed::io::DirectoryLock::try_lock(out, &holder);
  ASSERT_TRUE(lock.has_value());
  const Outcome o =
      run_train(mlm_args(out, "--set train.max_steps=2 --set schedule.warmup_steps=1"));
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("train.output_dir: '" + out + "' is in use by process " +
                          std::to_string(::getpid()) + ", another run writing there"),
            std::string::npos)
      << o.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / "metrics.jsonl"));
}

TEST(EndToEnd, AnMlmBatchThatDrewNoMaskIsSkippedNotANan) {
  // At a masking rate of 0.1%, most batches of the tiny corpus draw no mask at all.
  const std::string out = fresh_dir("no_mask");
  const Outcome o = run_train(mlm_args(out,
                                       "--set data.mlm_probability=0.001 --set train.max_steps=5 "
                                       "--set schedule.warmup_steps=1 --set logging.every_steps=1 "
                                       "--set eval.every_steps=0 --set train.eval_at_end=false"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("1 micro-batch without a labelled position (no target token); skipped, "
                          "no update"),
            std::string::npos)
      << o.output;
  const auto l = losses(out);
  ASSERT_EQ(l.size(), 5u);
  for (const auto& [step, loss] : l) EXPECT_TRUE(std::isfinite(loss)) << "step " << step;
}

TEST(EndToEnd, ANonFiniteLossStopsTheRunWithExitCode1) {
  // An absurd learning rate without clipping blows the weights up within a couple of steps.
  const std::string out = fresh_dir("nan");
  Outcome o = run_train(mlm_args(out,
                                 "--set optim.name=sgd --set optim.lr=1e12 "
                                 "--set train.max_grad_norm=0.0 --set schedule.warmup_steps=0"));
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("stopping: the loss is"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("no checkpoint was written yet; --resume starts from step 0"),
            std::string::npos)
      << o.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint-200"));
}

TEST(EndToEnd, TinyGptLearnsAndItsCheckpointGenerates) {
  const std::string out = fresh_dir("gpt");
  Outcome o = run_train("--config configs/tiny/gpt_lm.yaml --set train.output_dir=" + out +
                        " --set tokenizer.vocab=" + out + "/vocab.txt");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto l = losses(out);
  ASSERT_GE(l.size(), 10u);
  EXPECT_LT(l.back().second, l.front().second - 1.0) << o.output;
  EXPECT_NE(o.output.find("samples (top-k 40, temperature 0.8)"), std::string::npos) << o.output;
  auto final_metrics = nlohmann::json::parse(file_bytes(out + "/final_metrics.json"));
  // The toy grammar is nearly deterministic given its slot: far below the vocabulary's 200.
  EXPECT_LT(final_metrics["valid"]["perplexity"].get<double>(), 10.0) << o.output;
  // The checkpoint is a GPT-2 model directory that `infer generate` continues greedily, the
  // same way twice.
  const std::string infer =
      std::string(HEED_INFER_BIN) + " generate --checkpoint " + out +
      "/checkpoint-150 --prompt 'the old captain' --greedy --max-new-tokens 8 --json";
  FILE* pipe = popen((infer + " 2>&1").c_str(), "r");
  char buf[4096];
  std::string first, second;
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) first.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << first;
  pipe = popen((infer + " 2>&1").c_str(), "r");
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) second.append(buf, n);
  pclose(pipe);
  auto j = nlohmann::json::parse(first);
  EXPECT_EQ(j["generated_ids"].size(), 8u) << first;
  EXPECT_EQ(first, second);
}

// DistilBERT end to end, with its fixed sinusoidal table: learns, resumes bit for bit (the
// table is a buffer: no gradient, no optimizer state, the same bytes in every checkpoint),
// writes Hugging Face's DistilBERT names and config, and serves `infer fill-mask` and
// `infer attention`.
TEST(EndToEnd, TinyDistilBertLearnsResumesExactlyAndFillsMasks) {
  const std::string whole = fresh_dir("distilbert_whole"),
                    resumed = fresh_dir("distilbert_resumed");
  auto args = [](const std::string& out) {
    return "--config configs/tiny/distilbert_mlm.yaml --set train.output_dir=" + out +
           " --set tokenizer.vocab=" + out +
           "/vocab.txt --set model.sinusoidal_pos_embds=true --set train.max_steps=60 "
           "--set checkpoint.every_steps=20 --set checkpoint.keep_last=3 "
           "--set logging.every_steps=1 ";
  };
  Outcome o = run_train(args(whole));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  Outcome killed = run_train(args(resumed), "HEED_FAULT_AFTER_STEP=47:KILL");
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.output;
  Outcome again = run_train(args(resumed) + "--resume");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("at step 40"), std::string::npos) << again.output;
  const auto a = losses(whole), b = losses(resumed);
  ASSERT_EQ(a.size(), 60u);
  ASSERT_EQ(a, b);
  EXPECT_LT(a.back().second, a.front().second - 0.5) << o.output;
  const std::string checkpoint = whole + "/checkpoint-60";
  EXPECT_EQ(file_bytes(checkpoint + "/model.safetensors"),
            file_bytes(resumed + "/checkpoint-60/model.safetensors"));
  EXPECT_EQ(file_bytes(checkpoint + "/optimizer.safetensors"),
            file_bytes(resumed + "/checkpoint-60/optimizer.safetensors"));
  const auto config = nlohmann::json::parse(file_bytes(checkpoint + "/config.json"));
  EXPECT_EQ(config["model_type"], "distilbert");
  EXPECT_EQ(config["architectures"][0], "DistilBertForMaskedLM");
  EXPECT_EQ(config["dim"], 64);
  EXPECT_EQ(config["sinusoidal_pos_embds"], true);
  const std::string model = file_bytes(checkpoint + "/model.safetensors");
  for (const char* name :
       {"distilbert.embeddings.position_embeddings.weight",
        "distilbert.transformer.layer.1.attention.q_lin.weight",
        "distilbert.transformer.layer.1.output_layer_norm.bias", "vocab_projector.bias"}) {
    EXPECT_NE(model.find(name), std::string::npos) << name;
  }
  // Never trained: the first checkpoint's table is the last one's.
  const std::string table = "distilbert.embeddings.position_embeddings.weight";
  EXPECT_EQ(
      heed::io::SafetensorsFile(whole + "/checkpoint-20/model.safetensors")
          .get(table)
          .to_vector<float>(),
      heed::io::SafetensorsFile(checkpoint + "/model.safetensors").get(table).to_vector<float>());
  EXPECT_EQ(file_bytes(checkpoint + "/optimizer.safetensors").find("position_embeddings"),
            std::string::npos);

  auto run = [](const std::string& command) {
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    std::string answer;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, pipe)) answer.append(buf, n);
    return std::pair{pclose(pipe), answer};
  };
  const auto [fill_status, fill] =
      run(std::string(HEED_INFER_BIN) + " fill-mask --checkpoint " + checkpoint +
          " --text 'the [MASK] ship sees the sea.' --json");
  ASSERT_EQ(fill_status, 0) << fill;
  const auto j = nlohmann::json::parse(fill);
  ASSERT_EQ(j["masks"].size(), 1u) << fill;
  EXPECT_NE(fill.find("\"filled\""), std::string::npos) << fill;
  const auto [attention_status, attention] =
      run(std::string(HEED_INFER_BIN) + " attention --checkpoint " + checkpoint +
          " --text 'the old man sat.' --text-pair 'the sea.' --json");
  ASSERT_EQ(attention_status, 0) << attention;
  const auto views = nlohmann::json::parse(attention)["views"];
  ASSERT_EQ(views.size(), 1u) << attention;
  EXPECT_EQ(views[0]["attention"].size(), 2u) << attention;  // a [heads][T][T] per layer
  EXPECT_FALSE(views[0]["pair_start"].is_null()) << attention;
}

TEST(EndToEnd, TokenClassifierFineTunesFromTheMlmCheckpoint) {
  const std::string pos = fresh_dir("pos");
  Outcome o = fine_tune_from_tiny_mlm("pos", "configs/tiny/bert_pos.yaml", pos);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto final_metrics = nlohmann::json::parse(file_bytes(pos + "/final_metrics.json"));
  // Tags of the toy grammar follow from the words: a tagger that learned anything is far
  // above the most frequent tag (AT, about 30% of the tokens).
  EXPECT_GT(final_metrics["test"]["accuracy"].get<double>(), 0.93) << o.output;
  auto config = nlohmann::json::parse(file_bytes(pos + "/checkpoint-200/config.json"));
  EXPECT_EQ(config["architectures"][0], "BertForTokenClassification");
  EXPECT_EQ(config["id2label"].size(), 8u);  // . AT IN JJ NN NNS VB VBZ
}

TEST(EndToEnd, TinyGraphemeToPhonemeLearnsAndInferTranslatesAsTheModelInMemory) {
  const std::string out = fresh_dir("g2p");
  Outcome o = run_train("--config configs/tiny/seq2seq_g2p.yaml --set train.output_dir=" + out);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto l = losses(out);
  ASSERT_GE(l.size(), 10u);
  EXPECT_LT(l.back().second, l.front().second / 4) << o.output;
  auto final_metrics = nlohmann::json::parse(file_bytes(out + "/final_metrics.json"));
  // An untrained decoder gets nearly every phoneme wrong (a rate near 1); the toy spelling
  // rules are learnable, so a trained one gets most of them right.
  EXPECT_LT(final_metrics["test"]["token_error_rate"].get<double>(), 0.3) << o.output;
  EXPECT_LT(final_metrics["test"]["sequence_error_rate"].get<double>(), 0.7) << o.output;
  // The run ends by listing "  SOURCE -> OUTPUT | REFERENCE" for a few held-out words, as the
  // model in memory decodes them; the saved checkpoint must decode each the same way.
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
    // The same decoding limit as the config's generation.max_new_tokens; stderr apart.
    FILE* pipe = popen((std::string(HEED_INFER_BIN) + " translate --checkpoint " + out +
                        "/checkpoint-300 --json --max-new-tokens 30 --text '" + source + "'")
                           .c_str(),
                       "r");
    ASSERT_NE(pipe, nullptr);
    std::string reply;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, pipe)) reply.append(buf, n);
    ASSERT_EQ(pclose(pipe), 0) << reply;
    EXPECT_EQ(nlohmann::json::parse(reply)["output"].get<std::string>(), output) << source;
    ++checked;
  }
  EXPECT_EQ(checked, 6) << o.output;
}

TEST(EndToEnd, TinyTranslationLearnsAndReportsBleuAndChrf) {
  const std::string out = fresh_dir("de_en");
  Outcome o = run_train("--config configs/tiny/seq2seq_de_en.yaml --set train.output_dir=" + out);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto l = losses(out);
  ASSERT_GE(l.size(), 5u);
  EXPECT_LT(l.back().second, l.front().second / 3) << o.output;
  auto test = nlohmann::json::parse(file_bytes(out + "/final_metrics.json"))["test"];
  // eval.decode_metrics names BLEU and chrF, so the error rates are not reported. The toy
  // grammar translates word for word, so a model that learnt it scores far above one that
  // did not (an untrained decoder's BLEU is near 0).
  EXPECT_FALSE(test.contains("sequence_error_rate")) << test;
  EXPECT_GT(test["bleu"].get<double>(), 50.0) << o.output;
  EXPECT_GT(test["chrf"].get<double>(), 70.0) << o.output;
  EXPECT_LE(test["bleu"].get<double>(), 100.0) << test;
  EXPECT_LE(test["chrf"].get<double>(), 100.0) << test;
  EXPECT_NE(o.output.find("outputs on held-out sources"), std::string::npos) << o.output;
}

TEST(EndToEnd, Seq2SeqEvaluationDecodesUnlessTurnedOff) {
  const std::string out = fresh_dir("g2p_no_decode");
  Outcome o = run_train(
      "--config configs/tiny/seq2seq_g2p.yaml --set train.max_steps=30"
      " --set schedule.warmup_steps=5 --set eval.decode=false"
      " --set train.output_dir=" +
      out);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto test = nlohmann::json::parse(file_bytes(out + "/final_metrics.json"))["test"];
  EXPECT_TRUE(test.contains("loss")) << test;
  EXPECT_FALSE(test.contains("sequence_error_rate")) << test;
  EXPECT_FALSE(test.contains("token_error_rate")) << test;
}

TEST(EndToEnd, LabelSmoothingEntersTheTrainingLossAsPyTorchDefinesIt) {
  // At step 1 the weights and the batch are the same whatever ε is, and PyTorch's smoothed
  // loss, (1-ε)·NLL + ε·mean_c(-log p_c), is linear in ε: L(0.2) - L(0.1) = L(0.1) - L(0).
  auto first_loss = [](const std::string& epsilon) {
    const std::string out = fresh_dir("label_smoothing_" + epsilon);
    Outcome o = run_train(
        "--config configs/tiny/seq2seq_g2p.yaml --set train.max_steps=1"
        " --set schedule.warmup_steps=0 --set train.eval_at_end=false"
        " --set logging.every_steps=1 --set train.label_smoothing=" +
        epsilon + " --set train.output_dir=" + out);
    EXPECT_EQ(o.exit_code, 0) << o.output;
    auto l = losses(out);
    EXPECT_EQ(l.size(), 1u) << o.output;
    return l.empty() ? 0.0 : l.front().second;
  };
  const double l0 = first_loss("0.0"), l1 = first_loss("0.1"), l2 = first_loss("0.2");
  EXPECT_GT(std::abs(l1 - l0), 1e-3);
  EXPECT_NEAR(l2 - l1, l1 - l0, 1e-5 * l0);
}

TEST(EndToEnd, LabelSmoothingRefusesARegressionHead) {
  // One label makes the classifier a regression head (MSE): smoothing it would silently
  // train nothing, so the run stops before the first step.
  const std::string out = fresh_dir("label_smoothing_regression");
  Outcome o = run_train(
      "--config configs/tiny/bert_classify.yaml --set init_from=null --set model.num_labels=1"
      " --set tokenizer.vocab=" +
      out + "/vocab.txt --set tokenizer.vocab_size=120 --set train.label_smoothing=0.1" +
      " --set train.output_dir=" + out);
  EXPECT_NE(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("train.label_smoothing: the model has one label"), std::string::npos)
      << o.output;
  EXPECT_FALSE(fs::exists(out + "/metrics.jsonl")) << o.output;
}
