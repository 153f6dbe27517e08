// The train program with a fault at a known step, for the end-to-end tests of crashes and
// signals: HEED_FAULT_AFTER_STEP=N:SIGNAL makes the process send itself SIGNAL (KILL, TERM, INT
// or USR1) once step N is done and checkpointed. The program users run has no such hook.
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "train/run/stop_signals.h"
#include "train/train_command.h"

int main(int argc, char** argv) {
  heed::train::TrainerHooks hooks;
  if (const char* spec = std::getenv("HEED_FAULT_AFTER_STEP")) {
    const std::string s(spec);
    const size_t colon = s.find(':');
    const std::string name = colon == std::string::npos ? "" : s.substr(colon + 1);
    const std::map<std::string, int> signals = {
        {"KILL", SIGKILL}, {"TERM", SIGTERM}, {"INT", SIGINT}, {"USR1", SIGUSR1}};
    if (!signals.contains(name)) {
      std::fprintf(stderr, "HEED_FAULT_AFTER_STEP: expected STEP:KILL|TERM|INT|USR1, got '%s'\n",
                   spec);
      return 2;
    }
    const long long step = std::stoll(s.substr(0, colon));
    const int signal = signals.at(name);
    hooks.after_step = [step, signal](int64_t done) {
      if (done != step) return;
      kill(getpid(), signal);  // to the process, as `kill` sends it
      // The watcher thread takes it; wait until it has, so that the run stops after this step
      // (a signal from outside that arrives during a step is taken by the step's end).
      while (signal != SIGKILL && heed::train::StopSignals::received() == 0) {
        std::this_thread::yield();
      }
    };
  }
  return heed::train::train_command(argc, argv, hooks);
}
