#include "train/run/stop_signals.h"

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <thread>

namespace heed::train {
namespace {

std::atomic<int> g_stop_signal{0};
std::atomic<bool> g_run_began{false};
// What each signal did before install(): SIG_DFL or SIG_IGN (or a caller's handler).
std::array<struct sigaction, StopSignals::kSignals.size()> g_inherited{};

extern "C" void on_stop_signal(int) {
  // Runs only if a thread started before install() takes a signal. Installed so that a signal
  // the parent process ignored (a shell's `cmd &` ignores SIGINT) still reaches the watcher.
}

sigset_t signal_set() {
  sigset_t set;
  sigemptyset(&set);
  for (const int signal : StopSignals::kSignals) sigaddset(&set, signal);
  return set;
}

// A signal that is not a stop request: what it would have done had heed never blocked it (end the
// process, nothing, or a handler the program had), done by raising it again here with that action.
void act_as_inherited(size_t index, int signal) {
  struct sigaction ours;
  sigaction(signal, &g_inherited[index], &ours);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  raise(signal);
  pthread_sigmask(SIG_BLOCK, &only, nullptr);
  sigaction(signal, &ours, nullptr);
}

void watch(sigset_t set) {
  while (true) {
    int signal = 0;
    if (sigwait(&set, &signal) != 0) continue;
    if (g_run_began.load() && g_stop_signal.load() == 0) {
      g_stop_signal.store(signal);  // the stop request
      continue;
    }
    for (size_t i = 0; i < StopSignals::kSignals.size(); ++i) {
      if (StopSignals::kSignals[i] == signal) act_as_inherited(i, signal);
    }
  }
}

}  // namespace

void StopSignals::install() {
  static std::once_flag once;
  std::call_once(once, [] {
    const sigset_t set = signal_set();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    struct sigaction handler = {};
    handler.sa_handler = on_stop_signal;
    sigemptyset(&handler.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &handler, &g_inherited[i]);
    std::thread(watch, set).detach();
  });
}

void StopSignals::run_begins() {
  install();
  g_run_began = true;
}

int StopSignals::received() {
  return g_stop_signal.load();
}

}  // namespace heed::train
