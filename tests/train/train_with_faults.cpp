// The train program with a fault at a known step, for the end-to-end tests of crashes and
// signals: HEED_FAULT_AFTER_STEP=N:SIGNAL makes the process send itself SIGNAL (KILL, TERM or
// INT) once step N is done and checkpointed. The program users run has no such hook.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "train/train_command.h"

int main(int argc, char** argv) {
  heed::train::TrainerHooks hooks;
  if (const char* spec = std::getenv("HEED_FAULT_AFTER_STEP")) {
    const std::string s(spec);
    const size_t colon = s.find(':');
    const std::string name = colon == std::string::npos ? "" : s.substr(colon + 1);
    if (name != "KILL" && name != "TERM" && name != "INT") {
      std::fprintf(stderr, "HEED_FAULT_AFTER_STEP: expected STEP:KILL|TERM|INT, got '%s'\n", spec);
      return 2;
    }
    const long long step = std::stoll(s.substr(0, colon));
    const int signal = name == "KILL" ? SIGKILL : name == "TERM" ? SIGTERM : SIGINT;
    hooks.after_step = [step, signal](int64_t done) {
      if (done == step) std::raise(signal);
    };
  }
  return heed::train::train_command(argc, argv, hooks);
}
