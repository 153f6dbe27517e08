// Where a run may write, and what its checkpoints' rotation may delete: found by the second
// bad-input and fault matrix (a run into / or a home directory; a damaged newest checkpoint that
// made rotation delete the good ones).
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "support/page_data.h"
#include "train/checkpoint/training_checkpoint.h"
#include "train/run_train.h"

namespace fs = std::filesystem;
using namespace heed::testing;

namespace {

std::string two_steps(const std::string& out, const std::string& extra = "") {
  return short_mlm_run(out, 2, extra);
}

// Writes what write_checkpoint requires of a checkpoint, for `step`.
void write_checkpoint_files(const std::string& dir, int64_t step) {
  for (const char* name :
       {"config.json", "model.safetensors", "optimizer.safetensors", "run_config.yaml"}) {
    std::ofstream(fs::path(dir) / name) << name << " of step " << step;
  }
  std::ofstream(fs::path(dir) / "trainer_state.json") << "{\"step\": " << step << "}";
}

std::string write_step(const std::string& out, int64_t step, int64_t keep_last) {
  return heed::train::write_checkpoint(
      out, step, keep_last, [&](const std::string& dir) { write_checkpoint_files(dir, step); });
}

}  // namespace

TEST(CheckpointRotation, CountsOnlyCheckpointsThatVerify) {
  const std::string out = fresh_dir("rotation_counts_verified");
  write_step(out, 1, 2);
  write_step(out, 2, 2);
  fs::create_directories(fs::path(out) / "checkpoint-999");  // a stray: no manifest, no files
  write_step(out, 3, 2);
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint-1"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-2"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-3"));
  // Not counted, and not rotation's to delete: a resume moves it aside, saying why.
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-999"));
  // A verified checkpoint with a higher step never pushes out the one just written.
  write_step(out, 1000, 2);
  write_step(out, 4, 1);
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-4"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint-1000"));
}

// Run as root on code without the check, this test trained into /: what appears there during
// it is removed again, and is the failure.
TEST(RunDirectory, TheFilesystemRootIsRefused) {
  const auto entries = [] {
    std::set<fs::path> names;
    for (const fs::directory_entry& e : fs::directory_iterator("/")) names.insert(e.path());
    return names;
  };
  const std::set<fs::path> before = entries();
  const Outcome o = run_train(two_steps("/"));
  std::vector<fs::path> written;
  for (const fs::path& path : entries()) {
    if (!before.count(path)) written.push_back(path);
  }
  for (const fs::path& path : written) fs::remove_all(path);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("train: train.output_dir: '/' is the filesystem's root; choose a "
                          "directory for the run"),
            std::string::npos)
      << o.output;
  EXPECT_TRUE(written.empty()) << "the run wrote " << written.size() << " entries into /";
}

TEST(RunDirectory, ADirectoryOfOtherFilesIsRefusedUnlessOverwrittenAndTheirsAreKept) {
  const std::string out = fresh_dir("foreign_files");
  fs::create_directories(out);
  std::ofstream(fs::path(out) / "thesis.tex") << "years of work";
  fs::create_directories(fs::path(out) / "photos");
  Outcome o = run_train(two_steps(out));
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("train.output_dir: '" + out +
                          "' already holds files that are not a heed run's (photos, thesis.tex); "
                          "choose a new or empty directory, or set "
                          "train.overwrite_output_dir=true"),
            std::string::npos)
      << o.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / ".lock"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "vocab.txt"));

  o = run_train(two_steps(out, "--set train.overwrite_output_dir=true"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  // A second overwrite removes the first run's files and nothing else.
  o = run_train(two_steps(out, "--set train.overwrite_output_dir=true"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(file_bytes(out + "/thesis.tex"), "years of work");
  EXPECT_TRUE(fs::is_directory(fs::path(out) / "photos"));
}

TEST(RunDirectory, TheRunsOwnInputsThereAreNotForeign) {
  const std::string out = fresh_dir("own_inputs");
  fs::create_directories(out);
  fs::copy_file(HEED_SOURCE_DIR "/tests/data/golden/vocab.txt", fs::path(out) / "vocab.txt");
  fs::copy_file(HEED_SOURCE_DIR "/configs/tiny/bert_mlm.yaml", fs::path(out) / "run.yaml");
  std::string args = two_steps(out);
  args.replace(args.find("configs/tiny/bert_mlm.yaml"), 26, out + "/run.yaml");
  const Outcome o = run_train(args);
  EXPECT_EQ(o.exit_code, 0) << o.output;
}

TEST(RunDirectory, AFileIsRefusedByName) {
  const std::string out = fresh_dir("a_file");
  std::ofstream(out) << "not a directory";
  const Outcome o = run_train(two_steps(out));
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("train.output_dir: '" + out + "' is a file, not a directory"),
            std::string::npos)
      << o.output;
  EXPECT_EQ(file_bytes(out), "not a directory");
}

// A writer killed between creating its temporary file and renaming it leaves NAME.tmp.PID.N.
TEST(RunDirectory, TemporariesOfKilledWritersAreRemovedAtTheNextStart) {
  const std::string out = fresh_dir("stale_temporaries");
  ASSERT_EQ(run_train(two_steps(out)).exit_code, 0);
  std::ofstream(fs::path(out) / "metrics.jsonl.tmp.999999999.0") << "half";
  const Outcome o = run_train(two_steps(out, "--set train.max_steps=4 --resume"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("removed metrics.jsonl.tmp.999999999.0 left by a write that was cut "
                          "short"),
            std::string::npos)
      << o.output;
  EXPECT_FALSE(fs::exists(fs::path(out) / "metrics.jsonl.tmp.999999999.0"));
}

// A run killed by SIGKILL cannot mark its own page stopped: the page it last wrote says by when
// the next would come, and viz/report.html shows the run as stopped once that has passed.
TEST(RunDirectory, AKilledRunsOwnPageSaysByWhenItWouldHaveBeenRewritten) {
  const std::string out = fresh_dir("killed_page");
  const Outcome o = run_train(short_mlm_run(out, 6, ""), "HEED_FAULT_AFTER_STEP=3:KILL");
  ASSERT_EQ(o.exit_code, 128 + SIGKILL) << o.output;
  const std::string page = file_bytes(out + "/report.html");
  const nlohmann::json data = page_data(page);
  const nlohmann::json& run = data.at("runs").at(0);
  EXPECT_EQ(run.at("status"), "running");
  ASSERT_TRUE(run.at("stale_after_seconds").is_number()) << run.dump();
  EXPECT_GE(run.at("stale_after_seconds").get<double>(), 600.0);
  EXPECT_NE(page.find("<meta name=\"heed-refresh\" content=\"30\">"), std::string::npos);
}
