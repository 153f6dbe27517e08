#include "data/loader.h"

#include <numeric>

#include "base/error.h"

namespace heed::data {
namespace {
// Tags that keep the shuffling and collating streams of one seed apart.
constexpr uint64_t kShuffleStream = 0x5368756666ULL;
constexpr uint64_t kCollateStream = 0x436f6c6c61ULL;
}  // namespace

Loader::Loader(std::shared_ptr<const Dataset> dataset, CollateFn collate, LoaderOptions options)
    : dataset_(std::move(dataset)), collate_(std::move(collate)), options_(options) {
  HEED_CHECK(dataset_ != nullptr, "loader needs a dataset");
  HEED_CHECK(options_.batch_size > 0, "loader batch_size must be positive");
  HEED_CHECK(options_.world_size >= 1 && options_.rank >= 0 && options_.rank < options_.world_size,
             "loader rank {} is not in [0, world_size {})", options_.rank, options_.world_size);
  const uint64_t global = options_.batch_size * static_cast<uint64_t>(options_.world_size);
  const uint64_t n = dataset_->size();
  const bool drop_last = options_.drop_last || options_.world_size > 1;
  batches_per_epoch_ = drop_last ? n / global : (n + global - 1) / global;
  HEED_CHECK(batches_per_epoch_ > 0,
             "dataset has {} examples: fewer than one global batch of {} (batch_size {} x {} "
             "ranks)",
             n, global, options_.batch_size, options_.world_size);
  if (options_.group_by_length) {
    lengths_.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const Example e = dataset_->get(i);
      lengths_.push_back(static_cast<uint32_t>(e.input_ids.size() + e.target_ids.size()));
    }
  }
  start_prefetch();
}

Loader::~Loader() {
  stop_prefetch();
}

LoaderState Loader::advance(LoaderState p, uint64_t per_epoch) {
  if (++p.batch == per_epoch) {
    p.batch = 0;
    ++p.epoch;
  }
  return p;
}

std::shared_ptr<const std::vector<size_t>> Loader::order_of(uint64_t epoch) const {
  std::lock_guard lock(order_mutex_);
  if (cached_epoch_ != epoch || !cached_order_) {
    auto order = std::make_shared<std::vector<size_t>>(dataset_->size());
    std::iota(order->begin(), order->end(), size_t{0});
    if (options_.shuffle) {
      Rng rng = Rng::for_stream(options_.seed ^ kShuffleStream, epoch);
      for (size_t i = order->size(); i > 1; --i)
        std::swap((*order)[i - 1], (*order)[rng.uniform_int(i)]);
      if (options_.group_by_length) group_by_length(*order, rng);
    } else if (options_.group_by_length) {
      std::ranges::stable_sort(*order,
                               [&](size_t a, size_t b) { return lengths_[a] > lengths_[b]; });
    }
    cached_order_ = std::move(order);
    cached_epoch_ = epoch;
  }
  return cached_order_;
}

void Loader::group_by_length(std::vector<size_t>& order, Rng& rng) const {
  const size_t global = options_.batch_size * static_cast<size_t>(options_.world_size);
  const size_t group = kLengthGroupBatches * global;
  const auto longer = [&](size_t a, size_t b) { return lengths_[a] > lengths_[b]; };
  // Only the full global batches are grouped: the rest stays a random sample of lengths
  // (drop_last drops it) and stays last, where batch positions expect it.
  const size_t full = order.size() / global;
  for (size_t begin = 0; begin < full * global; begin += group) {
    const size_t end = std::min(full * global, begin + group);
    std::stable_sort(order.begin() + begin, order.begin() + end, longer);
  }
  std::vector<size_t> batches(full);
  std::iota(batches.begin(), batches.end(), size_t{0});
  for (size_t i = full; i > 1; --i) std::swap(batches[i - 1], batches[rng.uniform_int(i)]);
  std::vector<size_t> grouped;
  grouped.reserve(order.size());
  for (size_t b : batches)
    grouped.insert(grouped.end(), order.begin() + b * global, order.begin() + (b + 1) * global);
  grouped.insert(grouped.end(), order.begin() + full * global, order.end());
  order = std::move(grouped);
}

Batch Loader::batch_at(const LoaderState& p) const {
  HEED_CHECK(p.batch < batches_per_epoch_,
             "loader position batch {} is past the {} batches of "
             "an epoch",
             p.batch, batches_per_epoch_);
  const auto order_ptr = order_of(p.epoch);
  const std::vector<size_t>& order = *order_ptr;
  const size_t global = options_.batch_size * static_cast<size_t>(options_.world_size);
  const size_t begin = static_cast<size_t>(p.batch) * global + options_.rank * options_.batch_size;
  const size_t end = std::min(begin + options_.batch_size, order.size());
  std::vector<Example> examples;
  examples.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) examples.push_back(dataset_->get(order[i]));
  Rng rng = Rng::for_stream(options_.seed ^ kCollateStream, p.epoch, p.batch,
                            static_cast<uint64_t>(options_.rank));
  return collate_(examples, rng);
}

Batch Loader::next() {
  if (options_.prefetch == 0) {
    Batch b = batch_at(position_);
    position_ = advance(position_, batches_per_epoch_);
    return b;
  }
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return !ready_.empty() || worker_error_; });
  if (ready_.empty()) std::rethrow_exception(worker_error_);
  Batch b = std::move(ready_.front());
  ready_.pop_front();
  position_ = advance(position_, batches_per_epoch_);
  cv_.notify_all();
  return b;
}

void Loader::restore(const LoaderState& state) {
  HEED_CHECK(state.batch < batches_per_epoch_,
             "cannot restore loader position batch {}: an epoch has {} batches (was the dataset "
             "or batch size changed since the checkpoint?)",
             state.batch, batches_per_epoch_);
  stop_prefetch();
  position_ = state;
  start_prefetch();
}

void Loader::start_prefetch() {
  if (options_.prefetch == 0) return;
  ready_.clear();
  worker_error_ = nullptr;
  stop_ = false;
  produce_at_ = position_;
  worker_ = std::thread([this] {
    while (true) {
      LoaderState at;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || ready_.size() < options_.prefetch; });
        if (stop_) return;
        at = produce_at_;
      }
      try {
        Batch b = batch_at(at);
        std::lock_guard lock(mutex_);
        if (stop_) return;
        ready_.push_back(std::move(b));
        produce_at_ = advance(at, batches_per_epoch_);
      } catch (...) {
        std::lock_guard lock(mutex_);
        worker_error_ = std::current_exception();
        cv_.notify_all();
        return;
      }
      cv_.notify_all();
    }
  });
}

void Loader::stop_prefetch() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
  ready_.clear();
}

}  // namespace heed::data
