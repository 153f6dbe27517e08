// What `--resume` takes from a changed config and what it refuses, and that it never takes an
// incomplete checkpoint for a complete one.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "train/run_train.h"

namespace fs = std::filesystem;
using namespace heed::testing;

namespace {

// Four steps with a checkpoint every two, each step's loss and learning rate logged.
std::string four_steps(const std::string& out, const std::string& extra = "") {
  return short_mlm_run(out, 4, extra);
}

// The learning rate metrics.jsonl logged for `step`.
double logged_lr(const std::string& dir, int64_t step) {
  std::ifstream in(dir + "/metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("step", int64_t{-1}) == step && j.contains("lr")) return j["lr"];
  }
  ADD_FAILURE() << "no lr logged for step " << step;
  return 0;
}

}  // namespace

TEST(Resume, ANewLearningRateAppliesFromThereOnAndTheCheckpointsRecordIt) {
  const std::string out = fresh_dir("resume_new_lr");
  ASSERT_EQ(run_train(four_steps(out)).exit_code, 0);
  const Outcome o =
      run_train(four_steps(out, "--set train.max_steps=6 --set optim.lr=1.0e-3 --resume"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("resume: changed since " + out +
                          "/checkpoint-4: optim.lr 0.005 -> 0.001, train.max_steps 4 -> 6"),
            std::string::npos)
      << o.output;
  // Linear decay over 6 steps after 1 of warmup, from the new rate: step 5 runs at
  // 1e-3 * (6 - 4) / (6 - 1).
  EXPECT_NEAR(logged_lr(out, 5), 1e-3 * 2 / 5, 1e-15);
  const std::string recorded = file_bytes(out + "/checkpoint-6/run_config.yaml");
  EXPECT_NE(recorded.find("  lr: 0.001\n"), std::string::npos) << recorded;
  EXPECT_NE(recorded.find("  max_steps: 6\n"), std::string::npos) << recorded;
}

TEST(Resume, AChangeToWhatTheModelLearntFromStopsBeforeAnyWork) {
  const std::string out = fresh_dir("resume_refused");
  ASSERT_EQ(run_train(four_steps(out)).exit_code, 0);
  const std::string metrics = file_bytes(out + "/metrics.jsonl");
  for (const auto& [set, message] :
       {std::pair{"data.max_seq_length=16", "data.max_seq_length: is 16 but was 32 in "},
        std::pair{"model.intermediate_size=64", "model.intermediate_size: is 64 but was 128 in "},
        std::pair{"optim.weight_decay=0.1", "optim.weight_decay: is 0.1 but was 0.01 in "}}) {
    const Outcome o =
        run_train(four_steps(out, std::string("--set train.max_steps=6 --resume --set ") + set));
    EXPECT_EQ(o.exit_code, 2) << o.output;
    EXPECT_NE(o.output.find(std::string("--set ") + set + ": " + message + out +
                            "/checkpoint-4/run_config.yaml; it shaped what the run has learnt"),
              std::string::npos)
        << o.output;
    EXPECT_EQ(file_bytes(out + "/metrics.jsonl"), metrics);
  }
}

TEST(Resume, AnIncompleteNewestCheckpointIsSkippedWithItsReason) {
  const std::string out = fresh_dir("resume_incomplete");
  ASSERT_EQ(run_train(four_steps(out)).exit_code, 0);
  const auto whole = losses(out);
  // As a deletion cut short leaves it: trainer_state.json is there, the weights are not.
  fs::remove(fs::path(out) / "checkpoint-4" / "model.safetensors");
  Outcome o = run_train(four_steps(out, "--resume"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find(out + "/checkpoint-4: damaged or incomplete (model.safetensors is "
                                "missing); moved to skipped-checkpoint-4"),
            std::string::npos)
      << o.output;
  EXPECT_NE(
      file_bytes(out + "/skipped-checkpoint-4/SKIPPED.txt").find("model.safetensors is missing"),
      std::string::npos);
  EXPECT_NE(o.output.find("resumed from " + out + "/checkpoint-2 at step 2"), std::string::npos)
      << o.output;
  EXPECT_EQ(losses(out), whole);

  // A file cut short is caught by its size.
  fs::resize_file(fs::path(out) / "checkpoint-4" / "optimizer.safetensors", 100);
  o = run_train(four_steps(out, "--set train.max_steps=6 --resume"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("checkpoint-4: damaged or incomplete (optimizer.safetensors has 100 "
                          "bytes, "),
            std::string::npos)
      << o.output;
  EXPECT_TRUE(fs::is_directory(fs::path(out) / "skipped-checkpoint-4-2")) << o.output;
  EXPECT_NE(o.output.find("resumed from " + out + "/checkpoint-2 at step 2"), std::string::npos)
      << o.output;
}

// Found by fuzz/json_files_fuzz.cpp: resume read trainer_state.json with nlohmann's at() and
// get<>(), so a damaged field gave "key 'loader' not found" (no file named), and a float out
// of range was undefined behaviour. Each field is now checked, and the error names both.
TEST(Resume, ADamagedTrainerStateNamesTheFileAndTheField) {
  const std::string out = fresh_dir("resume_damaged_state");
  ASSERT_EQ(run_train(four_steps(out)).exit_code, 0);
  const fs::path checkpoint = fs::path(out) / "checkpoint-4";
  nlohmann::json state =
      nlohmann::json::parse(file_bytes((checkpoint / "trainer_state.json").string()));
  state["dropout_rng"]["offset"] = 573441e300;
  std::ofstream((checkpoint / "trainer_state.json").string()) << state.dump(2);
  // The manifest records the new size, as if the file had been written so.
  nlohmann::json manifest =
      nlohmann::json::parse(file_bytes((checkpoint / "manifest.json").string()));
  manifest["files"]["trainer_state.json"] = fs::file_size(checkpoint / "trainer_state.json");
  std::ofstream((checkpoint / "manifest.json").string()) << manifest.dump(2);
  const std::string metrics = file_bytes(out + "/metrics.jsonl");

  const Outcome o = run_train(four_steps(out, "--set train.max_steps=6 --resume"));
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find(checkpoint.string() +
                          "/trainer_state.json: field 'dropout_rng.offset' must be a non-negative "
                          "integer, not 5.73441e+305"),
            std::string::npos)
      << o.output;
  EXPECT_EQ(file_bytes(out + "/metrics.jsonl"), metrics);
}

// A bit flipped in place keeps the file's size: the manifest's SHA-256 catches it.
TEST(Resume, AFileWithTheSameSizeButOtherBytesIsCaughtByItsDigest) {
  const std::string out = fresh_dir("resume_bit_flip");
  ASSERT_EQ(run_train(four_steps(out)).exit_code, 0);
  const fs::path model = fs::path(out) / "checkpoint-4" / "model.safetensors";
  std::string bytes = file_bytes(model.string());
  bytes[bytes.size() / 2] ^= 0x10;
  std::ofstream(model, std::ios::binary) << bytes;
  const Outcome o = run_train(four_steps(out, "--set train.max_steps=6 --resume"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("checkpoint-4: damaged or incomplete (model.safetensors has other "
                          "contents than when it was written (its SHA-256 differs))"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("resumed from " + out + "/checkpoint-2 at step 2"), std::string::npos)
      << o.output;
}

// A checkpoint copied or renamed to another step's name would resume at the wrong step.
TEST(Resume, ACheckpointWhoseRecordedStepIsNotItsNamesIsSkipped) {
  const std::string out = fresh_dir("resume_wrong_step");
  ASSERT_EQ(run_train(four_steps(out)).exit_code, 0);
  fs::copy(fs::path(out) / "checkpoint-2", fs::path(out) / "checkpoint-6",
           fs::copy_options::recursive);
  const Outcome o = run_train(four_steps(out, "--set train.max_steps=6 --resume"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("checkpoint-6: damaged or incomplete (manifest.json records step 2, "
                          "not 6)"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("resumed from " + out + "/checkpoint-4 at step 4"), std::string::npos)
      << o.output;
}

// Found by the second fault matrix: rotation kept the highest step numbers among every
// checkpoint-N, so a skipped newest one (a stray checkpoint-999, a damaged model file) made the
// resumed run delete each checkpoint it wrote, and the one it resumed from, as soon as it was
// written. A kill then left nothing to resume from.
TEST(Resume, ASkippedNewestCheckpointNeverPushesGoodOnesOut) {
  const std::string out = fresh_dir("resume_rotation");
  ASSERT_EQ(run_train(four_steps(out, "--set checkpoint.keep_last=1")).exit_code, 0);
  fs::create_directories(fs::path(out) / "checkpoint-999");  // a stray, empty one
  const Outcome o =
      run_train(four_steps(out, "--set checkpoint.keep_last=1 --set train.max_steps=8 --resume"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("resumed from " + out + "/checkpoint-4 at step 4"), std::string::npos)
      << o.output;
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-8" / "manifest.json")) << o.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint-4"));  // keep_last 1: rotated, once 8 was
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint-999"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "skipped-checkpoint-999" / "SKIPPED.txt"));
}

// A resume of a finished run at fewer steps than it ran has nothing left to train; its final
// evaluations were logged twice.
TEST(Resume, AFinishedRunResumedWithFewerStepsLogsItsFinalEvaluationsOnce) {
  const std::string out = fresh_dir("resume_fewer_steps");
  ASSERT_EQ(run_train(four_steps(out)).exit_code, 0);
  const std::string before = file_bytes(out + "/metrics.jsonl");
  const Outcome o = run_train(four_steps(out, "--set train.max_steps=3 --resume"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const std::string after = file_bytes(out + "/metrics.jsonl");
  const auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(before, "\"split\":\"valid\""), count(after, "\"split\":\"valid\"")) << after;
  EXPECT_EQ(count(after, "\"split\":\"test\""), 1u) << after;
}

// A finished run moved to another directory: its final_metrics.json names the old path, which
// made a resume evaluate it again and log its final evaluations twice.
TEST(Resume, AMovedFinishedRunIsStillFinished) {
  const std::string out = fresh_dir("resume_moved_from"), moved = fresh_dir("resume_moved_to");
  const std::string vocab = fresh_dir("resume_moved_vocab");
  fs::create_directories(vocab);
  const std::string own_vocab = " --set tokenizer.vocab=" + vocab + "/vocab.txt";
  ASSERT_EQ(run_train(four_steps(out, own_vocab)).exit_code, 0);
  fs::rename(out, moved);
  const std::string metrics = file_bytes(moved + "/metrics.jsonl");
  const Outcome o = run_train(four_steps(moved, own_vocab + " --resume"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("finished earlier"), std::string::npos) << o.output;
  EXPECT_EQ(file_bytes(moved + "/metrics.jsonl"), metrics);
}
