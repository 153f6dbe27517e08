#pragma once
// The programs run as subprocesses from the source directory, each test in a fresh directory:
// their exit code, stdout and stderr.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace heed::testing {

namespace fs = std::filesystem;

struct Outcome {
  int code = -1;
  std::string out, err;
};

// Runs `command` (a shell command line) from the source directory with `input` on stdin.
class Programs : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("heed_programs_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  Outcome run(const std::string& command, const std::string& input = "") const {
    std::ofstream(dir_ / "stdin.txt") << input;
    const std::string line = "cd " HEED_SOURCE_DIR " && OMP_NUM_THREADS=1 " + command + " <" +
                             path("stdin.txt") + " 2>" + path("stderr.txt");
    Outcome r;
    FILE* pipe = popen(line.c_str(), "r");
    if (pipe == nullptr) return r;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, n);
    const int status = pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::stringstream e;
    e << std::ifstream(path("stderr.txt")).rdbuf();
    r.err = e.str();
    return r;
  }

  // The file's bytes ("" when it cannot be read).
  static std::string file(const std::string& name) {
    std::stringstream s;
    s << std::ifstream(name, std::ios::binary).rdbuf();
    return s.str();
  }

  // `report RUN --out DIR/page.html`.
  Outcome run_report(const std::string& run_dir) const;

  fs::path dir_;
};

const std::string kTrain = HEED_TRAIN_BIN;
const std::string kInfer = HEED_INFER_BIN;
const std::string kTokenize = HEED_TOKENIZE_BIN;
const std::string kVocab = HEED_SOURCE_DIR "/tests/data/golden/vocab.txt";

const std::string kReport = HEED_REPORT_BIN;

inline Outcome Programs::run_report(const std::string& run_dir) const {
  return run(kReport + " " + run_dir + " --out " + path("page.html"));
}

}  // namespace heed::testing
