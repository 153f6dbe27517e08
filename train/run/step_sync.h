#pragma once
// What one training step asks of data parallelism, without knowing of ranks or MPI: the
// numbers it counts summed over the ranks, and the gradients of its last backward summed while
// that backward runs (as PyTorch's DDP sums them outside no_sync()). A process alone is this
// base class, which keeps every number as it is; train/distributed/data_parallel.h is the other.
#include <cstdint>
#include <span>

namespace heed::train {

// What summing one step's gradients over the ranks cost.
struct ReductionStats {
  int64_t bytes = 0;  // gradient bytes each rank sent into the sums
  int64_t buckets = 0;
  int64_t started_in_backward = 0;  // buckets whose sum began before backward ended
  double wait_seconds = 0.0;        // after backward: the communication it did not hide
};

class StepSync {
 public:
  virtual ~StepSync() = default;
  // Sums `values` over the ranks, in place: every rank then holds the global batch's numbers.
  virtual void sum(std::span<int64_t> values) const { (void)values; }
  virtual void sum(std::span<double> values) const { (void)values; }
  // The next backward completes the step's gradients: their sums start as it makes them.
  // Every rank calls it, also one that has nothing to run backward on.
  virtual void sync_next_backward() {}
  // Waits until every gradient holds its sum over the ranks.
  virtual ReductionStats wait_for_gradients() { return {}; }
};

}  // namespace heed::train
