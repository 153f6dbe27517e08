// A full disk and kills, injected under the real `train` program (tests/support/
// fault_injection.cpp, preloaded): during each file of a checkpoint, the metrics, the final
// metrics, the vocabulary and the token cache, and during the rotation that deletes an old
// checkpoint. Each run must stop with a message and a non-zero exit, leave the previous
// checkpoint whole, never leave a partial file where a whole one is expected, and resume to
// exactly the losses and weights of an uninterrupted run.
#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "train/run_train.h"

namespace fs = std::filesystem;
using namespace heed::testing;

namespace {

// Six steps with a checkpoint every two, each step's loss logged.
std::string short_run(const std::string& out, const std::string& extra = "") {
  return short_mlm_run(out, 6, extra);
}

// The environment that preloads the fault: `action` (ENOSPC or KILL) on `op` (write or
// unlink) of paths holding `path`, after `after_bytes` bytes.
std::string fault(const std::string& path, const std::string& action = "ENOSPC",
                  const std::string& op = "write", long after_bytes = 0) {
  return "LD_PRELOAD=" HEED_FAULT_INJECTION_LIB
         " ASAN_OPTIONS=verify_asan_link_order=0 "
         "HEED_FAULT_PATH='" +
         path + "' HEED_FAULT_ACTION=" + action + " HEED_FAULT_OP=" + op +
         " HEED_FAULT_AFTER_BYTES=" + std::to_string(after_bytes);
}

// Each metrics.jsonl record's step and split ("" for a training record), in order.
std::vector<std::pair<int64_t, std::string>> record_kinds(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> kinds;
  std::ifstream in(dir + "/metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    kinds.emplace_back(j.at("step").get<int64_t>(), j.value("split", ""));
  }
  return kinds;
}

class Faults : public ::testing::Test {
 protected:
  // The uninterrupted run that every faulted and resumed one must match (ctest runs each test
  // in a process of its own, in parallel: one directory each).
  static void SetUpTestSuite() {
    whole_ = new std::string(fresh_dir("fault_whole_" + std::to_string(::getpid())));
    const Outcome o = run_train(short_run(*whole_));
    ASSERT_EQ(o.exit_code, 0) << o.output;
    ASSERT_EQ(losses(*whole_).size(), 6u);
  }
  static void TearDownTestSuite() { delete whole_; }

  // Resumes `out` without a fault and checks that it ends as the uninterrupted run did.
  static void resume_matches_the_whole_run(const std::string& out, const std::string& from) {
    const Outcome again = run_train(short_run(out, "--resume"));
    ASSERT_EQ(again.exit_code, 0) << again.output;
    EXPECT_NE(again.output.find("resumed from " + out + "/" + from), std::string::npos)
        << again.output;
    const auto a = losses(*whole_), b = losses(out);
    ASSERT_EQ(a.size(), b.size()) << again.output;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].first, b[i].first);
      EXPECT_EQ(a[i].second, b[i].second) << "step " << a[i].first;  // exact
    }
    EXPECT_EQ(file_bytes(*whole_ + "/checkpoint-6/model.safetensors"),
              file_bytes(out + "/checkpoint-6/model.safetensors"));
    EXPECT_EQ(file_bytes(*whole_ + "/checkpoint-6/optimizer.safetensors"),
              file_bytes(out + "/checkpoint-6/optimizer.safetensors"));
  }

  static std::string* whole_;
};
std::string* Faults::whole_ = nullptr;

class DiskFullDuringACheckpointFile : public Faults,
                                      public ::testing::WithParamInterface<const char*> {};

TEST_P(DiskFullDuringACheckpointFile, StopsLeavesThePreviousCheckpointAndResumesExactly) {
  const std::string file = GetParam();
  const std::string out = fresh_dir(std::string("disk_full_") + file);
  // The disk fills 10 bytes into this file of checkpoint-4.
  const Outcome o =
      run_train(short_run(out), fault(".tmp-checkpoint-4/" + file, "ENOSPC", "write", 10));
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("No space left on device"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find(out + "/checkpoint-4 was not written, and the last checkpoint, " + out +
                          "/checkpoint-2, is intact"),
            std::string::npos)
      << o.output;
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-2" / "manifest.json"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint-4"));
  EXPECT_FALSE(fs::exists(fs::path(out) / ".tmp-checkpoint-4"));  // its space is freed
  EXPECT_FALSE(fs::exists(fs::path(out) / "final_metrics.json"));
  resume_matches_the_whole_run(out, "checkpoint-2");
}

INSTANTIATE_TEST_SUITE_P(EachFile, DiskFullDuringACheckpointFile,
                         ::testing::Values("config.json", "model.safetensors", "vocab.txt",
                                           "tokenizer_config.json", "optimizer.safetensors",
                                           "trainer_state.json", "run_config.yaml",
                                           "manifest.json"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST_F(Faults, DiskFullWhileAppendingMetricsStopsWithTheFileNamed) {
  const std::string out = fresh_dir("disk_full_metrics");
  // A few records fit; a later one does not.
  const Outcome o =
      run_train(short_run(out), fault(out + "/metrics.jsonl", "ENOSPC", "write", 300));
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("metrics.jsonl: cannot append a record: No space left on device"),
            std::string::npos)
      << o.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / "final_metrics.json"));
  resume_matches_the_whole_run(out, "checkpoint-2");
}

TEST_F(Faults, DiskFullWritingTheFinalMetricsLeavesNoEmptyFile) {
  const std::string out = fresh_dir("disk_full_final");
  const Outcome o = run_train(short_run(out), fault(out + "/final_metrics.json"));
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_NE(o.output.find("final_metrics.json: write failed: No space left on device"),
            std::string::npos)
      << o.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / "final_metrics.json"));  // not a 0-byte one
  // The training itself is whole: a resume finishes the run (its final evaluation and file).
  const Outcome again = run_train(short_run(out, "--resume"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(fs::exists(fs::path(out) / "final_metrics.json"));
  EXPECT_EQ(losses(*whole_), losses(out));
  // The final evaluations logged before the disk filled are not logged twice.
  EXPECT_EQ(record_kinds(out), record_kinds(*whole_));
}

TEST_F(Faults, DiskFullWritingTheVocabularyLeavesNoEmptyVocabulary) {
  const std::string out = fresh_dir("disk_full_vocab");
  const Outcome o = run_train(short_run(out), fault(out + "/vocab.txt"));
  EXPECT_NE(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("No space left on device"), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / "vocab.txt"));
  // Nothing blocks the next run: it trains the vocabulary again.
  const Outcome again = run_train(short_run(out, "--resume"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(losses(*whole_), losses(out));
}

TEST_F(Faults, DiskFullWritingTheTokenCacheLeavesNoPartialCache) {
  const std::string out = fresh_dir("disk_full_cache");
  const Outcome o = run_train(short_run(out), fault(out + "/cache/", "ENOSPC", "write", 100));
  EXPECT_NE(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("No space left on device"), std::string::npos) << o.output;
  const Outcome again = run_train(short_run(out, "--resume"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(losses(*whole_), losses(out));
}

TEST_F(Faults, KilledWhileWritingACheckpointResumesFromThePreviousOne) {
  const std::string out = fresh_dir("kill_in_write");
  const Outcome o = run_train(short_run(out),
                              fault(".tmp-checkpoint-4/model.safetensors", "KILL", "write", 1000));
  EXPECT_EQ(o.exit_code, 128 + SIGKILL) << o.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint-4"));
  resume_matches_the_whole_run(out, "checkpoint-2");
  EXPECT_FALSE(fs::exists(fs::path(out) / ".tmp-checkpoint-4"));
}

TEST_F(Faults, KilledWhileDeletingAnOldCheckpointResumesFromTheNewOne) {
  const std::string out = fresh_dir("kill_in_rotation");
  // keep_last 1: writing checkpoint-4 deletes checkpoint-2, and the kill comes in the middle.
  const Outcome o = run_train(short_run(out, "--set checkpoint.keep_last=1"),
                              fault("checkpoint-2/", "KILL", "unlink"));
  EXPECT_EQ(o.exit_code, 128 + SIGKILL) << o.output;
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-4" / "manifest.json"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint-2"));  // renamed away before deleting
  resume_matches_the_whole_run(out, "checkpoint-4");
  EXPECT_FALSE(fs::exists(fs::path(out) / ".trash-checkpoint-2"));
}

}  // namespace
