#pragma once
// SIGINT and SIGTERM during a run ask it to stop: the loop notices after the step it is in,
// writes a checkpoint and ends cleanly, rather than die with its work since the last one.

namespace heed::train {

// Installs the handlers for the life of a run, restoring the old ones after.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal received since the handlers were installed, or 0.
  static int received();

 private:
  void (*previous_int_)(int);
  void (*previous_term_)(int);
};

}  // namespace heed::train
