// The stop signals reach only the watcher thread: every thread started after install(), the
// OpenMP workers that run oneDNN's kernels among them, has them blocked, so no signal frame is
// ever written on a kernel's borrowed stack (train/run/stop_signals.h). Once a run has begun, the
// first signal is the stop request.
#include "train/run/stop_signals.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

namespace heed::train {
namespace {

bool blocks_every_stop_signal() {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  for (const int signal : StopSignals::kSignals) {
    if (sigismember(&mask, signal) != 1) return false;
  }
  return true;
}

TEST(StopSignals, ThreadsStartedAfterInstallCannotTakeThem) {
  StopSignals::install();
  EXPECT_TRUE(blocks_every_stop_signal());
  bool in_thread = false;
  std::thread([&] { in_thread = blocks_every_stop_signal(); }).join();
  EXPECT_TRUE(in_thread);
  std::vector<int> in_workers(4, 0);
#pragma omp parallel num_threads(4)
  in_workers[omp_get_thread_num()] = blocks_every_stop_signal() ? 1 : 0;
  EXPECT_EQ(in_workers, std::vector<int>(4, 1));
}

TEST(StopSignals, TheFirstSignalOnceARunBeganIsTheStopRequest) {
  StopSignals::run_begins();
  ASSERT_EQ(StopSignals::received(), 0);
  kill(getpid(), SIGUSR1);  // to the process, as `kill` sends it
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (StopSignals::received() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(StopSignals::received(), SIGUSR1);
}

}  // namespace
}  // namespace heed::train
