#pragma once
// The loader: seeded per-epoch shuffling, batches built by a collate function, a position
// that can be saved in a checkpoint and restored exactly, and optional prefetch on one
// background thread.
//
// Determinism: the order of epoch e is a permutation drawn from Rng::for_stream(seed, e), and
// the collator's randomness for batch b of epoch e (MLM masking) from its own stream of
// (seed, e, b, rank). A batch therefore depends only on its position, which is all the state
// there is: restoring {epoch, batch} replays the same batches, with or without prefetch.
//
// Data parallel: with world_size W, global batch b of an epoch is examples
// [b*W*B, (b+1)*W*B) of the permutation, and rank r collates its slice [r*B, (r+1)*B).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "data/batch.h"
#include "data/datasets.h"
#include "data/rng.h"

namespace heed::data {

using CollateFn = std::function<Batch(std::span<const Example>, Rng&)>;

struct LoaderOptions {
  size_t batch_size = 32;  // per rank
  bool shuffle = true;
  // Batches of examples of similar length, so that they pad little (like Hugging Face's
  // group_by_length): the shuffled order is cut into groups of kLengthGroupBatches global
  // batches, each group is sorted by length (longest first), and then, unlike Hugging Face,
  // the full global batches are shuffled across the epoch, so that it still visits lengths
  // in a random order. Without shuffle (evaluation), the whole dataset is sorted by length,
  // longest first: the batches pad least, and the first shows at once whether memory suffices.
  bool group_by_length = false;
  // Drop the last global batch of an epoch when it is not full (always true with W > 1, so
  // that every rank gets the same number of batches).
  bool drop_last = false;
  uint64_t seed = 0;
  size_t prefetch = 0;  // batches built ahead on a background thread; 0 = none
  int rank = 0;
  int world_size = 1;
};

// Where the loader is: the next batch next() returns is batch `batch` of epoch `epoch`.
struct LoaderState {
  uint64_t epoch = 0;
  uint64_t batch = 0;
  bool operator==(const LoaderState&) const = default;
};

class Loader {
 public:
  static constexpr size_t kLengthGroupBatches = 50;

  Loader(std::shared_ptr<const Dataset> dataset, CollateFn collate, LoaderOptions options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // The next batch; epochs roll over by themselves.
  Batch next();
  LoaderState state() const { return position_; }
  void restore(const LoaderState& state);
  uint64_t batches_per_epoch() const { return batches_per_epoch_; }
  const LoaderOptions& options() const { return options_; }

  // The batch at a position, built directly (what next() returns there).
  Batch batch_at(const LoaderState& position) const;

 private:
  std::shared_ptr<const std::vector<size_t>> order_of(uint64_t epoch) const;
  void group_by_length(std::vector<size_t>& order, Rng& rng) const;
  void start_prefetch();
  void stop_prefetch();
  static LoaderState advance(LoaderState p, uint64_t per_epoch);

  std::shared_ptr<const Dataset> dataset_;
  std::vector<uint32_t> lengths_;  // with group_by_length: input + target ids per example
  CollateFn collate_;
  LoaderOptions options_;
  uint64_t batches_per_epoch_ = 0;
  LoaderState position_;

  // The permutation of the epoch last asked for, so each epoch shuffles once.
  mutable std::mutex order_mutex_;
  mutable uint64_t cached_epoch_ = UINT64_MAX;
  mutable std::shared_ptr<const std::vector<size_t>> cached_order_;

  // Prefetch: the worker fills `ready_` with batches from `produce_at_` onwards.
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Batch> ready_;
  LoaderState produce_at_;
  bool stop_ = false;
  std::exception_ptr worker_error_;
};

}  // namespace heed::data
