// A pipeline file runs its stages one after another, each from the model the stage before it
// ended with; run again, it reports the finished stages instead of training them again; a
// mistake in any stage stops it before the first one trains.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "train/run_train.h"

namespace fs = std::filesystem;

using namespace heed::testing;

namespace {

// A pipeline of the tiny MLM and the tiny classifier, into fresh directories under `name`;
// `classifier_sets` adds to the classifier stage's `set`.
struct TinyPipeline {
  std::string dir, mlm, classifier, file;
};

TinyPipeline write_tiny_pipeline(const std::string& name, const std::string& classifier_sets = "") {
  TinyPipeline p;
  p.dir = fresh_dir(name);
  p.mlm = p.dir + "/mlm";
  p.classifier = p.dir + "/classify";
  p.file = p.dir + "/pipeline.yaml";
  fs::create_directories(p.dir);
  std::ofstream(p.file) << "pipeline:\n"
                        << "  - config: configs/tiny/bert_mlm.yaml\n"
                        << "    set: [train.output_dir=" << p.mlm << ", tokenizer.vocab=" << p.mlm
                        << "/vocab.txt]\n"
                        << "  - config: configs/tiny/bert_classify.yaml\n"
                        << "    set: [train.output_dir=" << p.classifier << classifier_sets
                        << "]\n";
  return p;
}

TEST(Pipeline, RunsItsStagesEachFromThePreviousModelAndThenReportsThemFinished) {
  const TinyPipeline p = write_tiny_pipeline("pipeline");
  const Outcome first = run_train("--config " + p.file);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  // The classifier started from the MLM's last checkpoint, not from its config's init_from.
  EXPECT_NE(first.output.find("stage 2/2 (configs/tiny/bert_classify.yaml), from " + p.mlm +
                              "/checkpoint-200"),
            std::string::npos)
      << first.output;
  EXPECT_NE(first.output.find("init_from " + p.mlm + "/checkpoint-200: loaded"), std::string::npos)
      << first.output;
  const auto finals = nlohmann::json::parse(file_bytes(p.classifier + "/final_metrics.json"));
  EXPECT_EQ(finals["step"], 80);
  const std::string metrics = file_bytes(p.classifier + "/metrics.jsonl");

  const Outcome again = run_train("--config " + p.file);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("stage 1/2 (configs/tiny/bert_mlm.yaml): finished earlier; its "
                              "model is " +
                              p.mlm + "/checkpoint-200"),
            std::string::npos)
      << again.output;
  EXPECT_NE(again.output.find("stage 2/2 (configs/tiny/bert_classify.yaml): finished earlier"),
            std::string::npos)
      << again.output;
  EXPECT_EQ(again.output.find("step "), std::string::npos) << again.output;  // no training
  EXPECT_EQ(file_bytes(p.classifier + "/metrics.jsonl"), metrics);

  // Another seed is another run, not the finished one: resuming refuses it, naming the key.
  const Outcome reseeded = run_train("--config " + p.file + " --set train.seed=43");
  EXPECT_EQ(reseeded.exit_code, 2) << reseeded.output;
  EXPECT_NE(reseeded.output.find("train.seed: is 43 but was"), std::string::npos)
      << reseeded.output;
}

TEST(Pipeline, AStageStoppedBeforeItsFirstCheckpointContinuesOnTheNextRun) {
  const TinyPipeline p = write_tiny_pipeline("pipeline_interrupted");
  const std::string args =
      "--config " + p.file + " --set checkpoint.every_steps=100 --set logging.every_steps=1";
  const Outcome killed = run_train(args, "HEED_FAULT_AFTER_STEP=3:KILL");
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.output;
  EXPECT_TRUE(fs::exists(p.mlm + "/metrics.jsonl"));
  const Outcome again = run_train(args);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("resume: no checkpoint in " + p.mlm + "; starting from step 0"),
            std::string::npos)
      << again.output;
  EXPECT_TRUE(fs::exists(p.classifier + "/final_metrics.json")) << again.output;
}

TEST(Pipeline, AMistakeInALaterStageStopsItBeforeAnyTraining) {
  const TinyPipeline p = write_tiny_pipeline("pipeline_bad_stage", ", optim.lr=-1");
  const Outcome o = run_train("--config " + p.file);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("optim.lr"), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(p.mlm)) << o.output;
}

TEST(Pipeline, AMalformedFileNamesItsLine) {
  const std::string dir = fresh_dir("pipeline_malformed");
  fs::create_directories(dir);
  std::ofstream(dir + "/unknown.yaml") << "pipeline:\n  - configs/tiny/bert_mlm.yaml\nstages: 2\n";
  Outcome o = run_train("--config " + dir + "/unknown.yaml");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_EQ(o.output, "train: " + dir +
                          "/unknown.yaml:3: unknown key 'stages': a pipeline file holds "
                          "`pipeline` only\n");
  std::ofstream(dir + "/stage.yaml") << "pipeline:\n  - {config: configs/tiny/bert_mlm.yaml, "
                                        "sets: [optim.lr=1]}\n";
  o = run_train("--config " + dir + "/stage.yaml");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find(dir + "/stage.yaml:2: pipeline: a stage takes `config`"),
            std::string::npos)
      << o.output;
}

TEST(Pipeline, AKeyThatIsNotANameIsNamedAsWhatItIs) {
  // A list as a key (`? [a, b]`) was yaml-cpp's BadConversion, found by the run_config fuzz
  // target.
  const std::string dir = fresh_dir("pipeline_list_key");
  fs::create_directories(dir);
  std::ofstream(dir + "/list_key.yaml")
      << "pipeline:\n  - configs/tiny/bert_mlm.yaml\n? [a, b]\n: 1\n";
  Outcome o = run_train("--config " + dir + "/list_key.yaml");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_EQ(o.output, "train: " + dir +
                          "/list_key.yaml:3: unknown key a list: a pipeline file holds "
                          "`pipeline` only\n");
  std::ofstream(dir + "/stage_key.yaml")
      << "pipeline:\n  - {config: configs/tiny/bert_mlm.yaml, [x]: 1}\n";
  o = run_train("--config " + dir + "/stage_key.yaml");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("pipeline: a stage takes `config` (a path) and `set` (a list of "
                          "key=value), got a list: '1'"),
            std::string::npos)
      << o.output;
}

}  // namespace

namespace {

// Found by the second fault matrix: after a finished stage was edited, a rerun said "finished
// earlier" for it and every later stage and kept the stale models.
TEST(Pipeline, AnEditedFinishedStageIsNotFinishedAndRefusesWhatCannotApply) {
  const TinyPipeline p = write_tiny_pipeline("pipeline_edited");
  ASSERT_EQ(run_train("--config " + p.file).exit_code, 0);
  const std::string metrics = file_bytes(p.classifier + "/metrics.jsonl");
  // A learning rate with no step left to apply it to: refused, naming where it was set.
  Outcome o = run_train("--config " + p.file + " --set optim.lr=1.0e-4");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("train: --set optim.lr=1.0e-4: " + p.file +
                          ": stage 1/2 (configs/tiny/bert_mlm.yaml): optim.lr is 0.0001 but was "
                          "0.005 when this stage finished in " +
                          p.mlm + ", and no step is left to train with it"),
            std::string::npos)
      << o.output;
  EXPECT_EQ(o.output.find("finished earlier"), std::string::npos) << o.output;
  // Masking shaped what the model learnt: the resume refuses it, as `train --resume` does.
  o = run_train("--config " + p.file + " --set data.mlm_probability=0.3");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("data.mlm_probability: is 0.3 but was 0.15"), std::string::npos)
      << o.output;
  EXPECT_EQ(file_bytes(p.classifier + "/metrics.jsonl"), metrics);
  // Only logging changed: still finished.
  o = run_train("--config " + p.file + " --set logging.every_steps=7");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("stage 2/2 (configs/tiny/bert_classify.yaml): finished earlier"),
            std::string::npos)
      << o.output;
}

// A stage that grows continues from its last checkpoint; the stages after it were built from
// its old model (and, here, from a checkpoint that rotation has since removed), so they train
// again from the start.
TEST(Pipeline, AStageThatGrowsContinuesAndEveryLaterStageTrainsAgain) {
  const TinyPipeline p = write_tiny_pipeline("pipeline_grown");
  ASSERT_EQ(run_train("--config " + p.file).exit_code, 0);
  std::string grown = file_bytes(p.file);
  grown.replace(grown.find("tokenizer.vocab="), 0, "train.max_steps=220, ");
  std::ofstream(p.file) << grown;
  const Outcome o = run_train("--config " + p.file);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("resumed from " + p.mlm + "/checkpoint-200 at step 200"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("stage 2/2 (configs/tiny/bert_classify.yaml): the model it starts from "
                          "was trained again, so it trains again from the start"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("init_from " + p.mlm + "/checkpoint-220: loaded"), std::string::npos)
      << o.output;
  const auto finals = nlohmann::json::parse(file_bytes(p.classifier + "/final_metrics.json"));
  EXPECT_EQ(finals["step"], 80);
}

TEST(Pipeline, SharedOutputDirsAndNestedPipelinesAreRefusedUpFrontByName) {
  const std::string dir = fresh_dir("pipeline_places");
  fs::create_directories(dir);
  std::ofstream(dir + "/shared.yaml")
      << "pipeline:\n"
      << "  - {config: configs/tiny/bert_mlm.yaml, set: [train.output_dir=" << dir << "/a]}\n"
      << "  - {config: configs/tiny/bert_classify.yaml, set: [train.output_dir=" << dir
      << "/b/../a]}\n";
  Outcome o = run_train("--config " + dir + "/shared.yaml");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_EQ(o.output, "train: " + dir +
                          "/shared.yaml:3: pipeline: stage 2 writes to "
                          "train.output_dir " +
                          dir +
                          "/b/../a, as stage 1 does; each stage "
                          "needs its own\n");
  EXPECT_FALSE(fs::exists(dir + "/a"));
  // Itself as a stage: a cycle, or nesting.
  std::ofstream(dir + "/self.yaml")
      << "pipeline:\n  - configs/tiny/bert_mlm.yaml\n  - " << dir << "/self.yaml\n";
  o = run_train("--config " + dir + "/self.yaml");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_EQ(o.output, "train: " + dir + "/self.yaml:3: pipeline: stage 2 (" + dir +
                          "/self.yaml) is a pipeline file itself; a stage is a run config "
                          "(pipelines do not nest)\n");
}

// A stage's `set` was blamed on a `--set` the user never typed.
TEST(Pipeline, AStagesSetErrorNamesTheStageLine) {
  const TinyPipeline p = write_tiny_pipeline("pipeline_set_origin", ", optim.lr=-1");
  const Outcome o = run_train("--config " + p.file);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("train: " + p.file + ":4 (the stage's set optim.lr=-1): optim.lr"),
            std::string::npos)
      << o.output;
  EXPECT_EQ(o.output.find("--set"), std::string::npos) << o.output;
}

}  // namespace
