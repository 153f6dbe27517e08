#pragma once
// Running the train program end to end, for the tests of tests/train/: its output and exit
// code, fresh output directories, and what a run leaves in them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace heed::testing {

namespace fs = std::filesystem;

struct Outcome {
  int exit_code = -1;
  std::string output;  // stderr and stdout
};

// Runs a shell command: its output and exit code (128 + the signal that killed it).
inline Outcome run_command(const std::string& cmd) {
  Outcome o;
  FILE* pipe = popen(cmd.c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) o.output.append(buf, n);
  const int status = pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return o;
}

// Runs `train` from the source directory (the tiny configs' paths are relative to it); with
// HEED_FAULT_AFTER_STEP in `env`, its twin that injects the fault.
inline Outcome run_train(const std::string& args, const std::string& env = "") {
  const bool fault = env.find("HEED_FAULT_AFTER_STEP") != std::string::npos;
  const std::string program = fault ? HEED_FAULT_TRAIN_BIN : HEED_TRAIN_BIN;
  return run_command("cd " HEED_SOURCE_DIR " && " + env + " " + program + " " + args + " 2>&1");
}

#ifdef HEED_INFER_BIN
// Runs `infer` with `args` (the subcommand first), `input` on its stdin.
inline Outcome run_infer(const std::string& args, const std::string& input = "") {
  std::string command = std::string(HEED_INFER_BIN) + " " + args + " 2>&1";
  if (!input.empty()) {  // a file of this process's own: ctest runs tests side by side
    const fs::path in =
        fs::path(::testing::TempDir()) / ("heed_infer_stdin_" + std::to_string(getpid()) + ".txt");
    std::ofstream(in) << input;
    command += " <" + in.string();
  }
  return run_command(command);
}
#endif

// The tiny MLM for `steps` steps into `out`, a checkpoint every two, each step's loss and
// learning rate logged, no evaluation before the end: for the tests of faults and resuming.
inline std::string short_mlm_run(const std::string& out, int steps, const std::string& extra) {
  return "--config configs/tiny/bert_mlm.yaml --set train.output_dir=" + out +
         " --set tokenizer.vocab=" + out +
         "/vocab.txt --set train.max_steps=" + std::to_string(steps) +
         " --set schedule.warmup_steps=1 --set checkpoint.every_steps=2 "
         "--set logging.every_steps=1 --set eval.every_steps=0 " +
         extra;
}

inline std::string fresh_dir(const std::string& name) {
  fs::path p = fs::path(::testing::TempDir()) / ("heed_e2e_" + name);
  fs::remove_all(p);
  return p.string();
}

// The (step, loss) records of metrics.jsonl.
inline std::vector<std::pair<int64_t, double>> losses(const std::string& dir) {
  std::ifstream in(dir + "/metrics.jsonl");
  std::vector<std::pair<int64_t, double>> out;
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("loss") && !j.contains("split")) out.emplace_back(j["step"], j["loss"]);
  }
  return out;
}

inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Two checkpoint directories hold the same model and optimizer state, byte for byte.
inline void expect_same_training_files(const std::string& a, const std::string& b) {
  for (const char* file : {"model.safetensors", "optimizer.safetensors"})
    EXPECT_EQ(file_bytes(a + "/" + file), file_bytes(b + "/" + file)) << a << " " << file;
}

}  // namespace heed::testing
