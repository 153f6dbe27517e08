#include "train/distributed/data_parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "base/error.h"
#include "io/checksum.h"
#include "nn/lora.h"
#include "train/config/config_origins.h"

namespace heed::train {

uint64_t rank_seed(uint64_t seed, int rank) {
  if (rank == 0) return seed;
  // SplitMix64's finalizer over (seed, rank): neighbouring ranks get unrelated streams.
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(rank);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void check_world(const World& world, const RunConfig& c) {
  if (!world.distributed()) return;
  if (c.train.batch_size < world.size()) {
    config_fail(c.origins.where("train.batch_size"),
                "train.batch_size is the global batch, split over the ranks: {} rows cannot give "
                "each of {} ranks one",
                c.train.batch_size, world.size());
  }
  const std::string mine = to_yaml(c);
  std::string main = mine;
  world.broadcast(main);
  HEED_CHECK(mine == main,
             "rank {}: its resolved config differs from rank 0's; every rank of a job must run "
             "the same config (compare `train --print-config` on each)",
             world.rank());
}

void check_same_inputs(const World& world,
                       const std::vector<std::pair<std::string, std::string>>& files) {
  if (!world.distributed()) return;
  // "key digest" lines, one per file, as this rank sees them; then rank 0's.
  std::string mine;
  for (const auto& [key, path] : files) {
    mine += key + " " + io::to_hex(io::sha256_file(path)) + "\n";
  }
  std::string main = mine;
  world.broadcast(main);
  if (mine == main) return;
  std::map<std::string, std::string> on_main;
  std::istringstream lines(main);
  for (std::string key, digest; lines >> key >> digest;) on_main[key] = digest;
  for (const auto& [key, path] : files) {
    const std::string here = io::to_hex(io::sha256_file(path)).substr(0, 12);
    const auto there = on_main.find(key);
    if (there == on_main.end()) {
      fail(
          "{}: {} is read here, but rank 0 reads no such file; every rank must read the same "
          "data",
          key, path);
    }
    if (there->second.substr(0, 12) != here) {
      fail(
          "{}: {} differs from rank 0's (SHA-256 {}... here, {}... on rank 0); every rank must "
          "read the same data (check each rank's working directory and filesystem)",
          key, path, here, there->second.substr(0, 12));
    }
    on_main.erase(there);
  }
  fail("{}: rank 0 reads such a file, but this rank has none; every rank must read the same data",
       on_main.begin()->first);
}

DataParallel::DataParallel(const World& world, nn::PretrainedModel& model,
                           optim::Optimizer& optimizer, const TrainConfig& train)
    : world_(world), model_(model) {
  const auto bucket_bytes = static_cast<int64_t>(train.bucket_mb * 1024 * 1024);
  // Only what trains is reduced: a frozen parameter (LoRA's base) never gets a gradient.
  std::vector<Tensor> trainable;
  for (auto& [name, p] : nn::trainable_parameters(model)) trainable.push_back(p);
  reducer_ =
      std::make_unique<GradientReducer>(world, trainable, std::max<int64_t>(1, bucket_bytes));
  if (train.zero_stage == 1) shards_ = std::make_unique<OptimizerShards>(world, optimizer);
  for (const Tensor& p : trainable) elements_ += p.numel();
}

std::string DataParallel::describe(const TrainConfig& train) const {
  const int n = world_.size();
  const int64_t fewest = train.batch_size / n, most = (train.batch_size + n - 1) / n;
  std::string line = fmt::format(
      "data parallel: {} ranks (MPI), {} rows each of the global batch of {}; gradients summed "
      "in {} bucket{} of about {} MB ({:.1f} MB per step), during backward",
      n, fewest == most ? fmt::format("{}", most) : fmt::format("{}-{}", fewest, most),
      train.batch_size, reducer_->num_buckets(), reducer_->num_buckets() == 1 ? "" : "s",
      train.bucket_mb, elements_ * 4.0 / 1e6);
  if (shards_) {
    line += fmt::format("; ZeRO-1: rank 0 keeps the optimizer state of {} of {} parameters",
                        shards_->owned_elements(), elements_);
  }
  return line;
}

data::Batch DataParallel::rows(const data::Batch& global) const {
  const int64_t b = global.batch_size, r = world_.rank(), n = world_.size();
  return data::batch_rows(global, b * r / n, b * (r + 1) / n);
}

void DataParallel::broadcast_parameters() {
  std::vector<World::Piece> pieces;
  std::vector<Tensor> all = model_.parameters();
  for (auto& [name, p] : nn::adapter_parameters(model_)) all.push_back(p);
  for (Tensor& p : all) {
    HEED_CHECK(p.is_contiguous(), "a parameter that is not contiguous cannot be broadcast");
    pieces.push_back({p.raw_data(), static_cast<size_t>(p.numel()) * dtype_size(p.dtype()), 0});
  }
  world_.broadcast_all(pieces);
  if (!world_.is_main()) {
    for (Tensor& p : all) p.storage()->bump_version();
  }
}

void DataParallel::broadcast_optimizer_state(optim::Optimizer& optimizer) {
  for (const optim::ParamGroup& group : optimizer.param_groups()) {
    for (const auto& [name, param] : group.params) {
      std::string bytes;
      if (world_.is_main()) {
        const optim::ParamState* state = optimizer.state(name);
        bytes = pack_state(state ? *state : optim::ParamState{});
      }
      world_.broadcast(bytes);
      if (!world_.is_main()) optimizer.set_state(name, unpack_state(bytes, param));
    }
  }
  if (shards_) shards_->drop_others_state();
}

void DataParallel::seed_dropout(const Generator::State& rank0,
                                const std::vector<uint64_t>& rank_offsets) {
  const auto rank = static_cast<size_t>(world_.rank());
  Generator::State mine{rank_seed(rank0.seed, world_.rank()), rank0.offset};
  if (rank_offsets.size() == static_cast<size_t>(world_.size())) mine.offset = rank_offsets[rank];
  model_.dropout_generator->set_state(mine);
}

std::vector<uint64_t> DataParallel::dropout_offsets() const {
  std::vector<int64_t> offsets(static_cast<size_t>(world_.size()), 0);
  offsets[static_cast<size_t>(world_.rank())] =
      static_cast<int64_t>(model_.dropout_generator->state().offset);
  world_.sum(offsets);
  return {offsets.begin(), offsets.end()};
}

void DataParallel::gather_optimizer_state() {
  if (shards_) shards_->gather_state();
}

void DataParallel::drop_others_optimizer_state() {
  if (shards_) shards_->drop_others_state();
}

}  // namespace heed::train
