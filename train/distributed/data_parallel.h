#pragma once
// What `mpirun -np N train` adds around the trainer: this rank's rows of each global batch,
// the same starting parameters everywhere, gradients summed over the ranks while backward runs
// (gradient_reducer.h), the optimizer state sharded with train.zero_stage 1
// (optimizer_shards.h), and a dropout stream of its own per rank. Every rank reads the same
// seeded order of global batches, so the loader's position is one number for the whole job.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "autograd/generator.h"
#include "data/batch.h"
#include "nn/models/pretrained.h"
#include "optim/optimizer.h"
#include "train/config/config.h"
#include "train/distributed/gradient_reducer.h"
#include "train/distributed/optimizer_shards.h"
#include "train/distributed/world.h"
#include "train/run/step_sync.h"

namespace heed::train {

// Rank `rank`'s dropout seed: rank 0 keeps the run's own (so a world of one is the plain run),
// the others a different, reproducible one.
uint64_t rank_seed(uint64_t seed, int rank);

// Refuses what cannot run: a global batch with fewer rows than ranks, a rank whose resolved
// config differs from rank 0's.
void check_world(const World& world, const RunConfig& config);

// Refuses a rank whose input files (config key -> path) hold other bytes than rank 0's: with
// another working directory or node, a valid but different file would train silently. The
// error names the rank, the key and the file. A collective.
void check_same_inputs(const World& world,
                       const std::vector<std::pair<std::string, std::string>>& files);

// The step's view of the job (train/run/step_sync.h): counts and losses summed over the ranks,
// and the gradients of the step's last backward summed in buckets as it runs.
class DataParallel : public StepSync {
 public:
  DataParallel(const World& world, nn::PretrainedModel& model, optim::Optimizer& optimizer,
               const TrainConfig& train);

  const World& world() const { return world_; }
  // Rows [B r / N, B (r + 1) / N) of a global batch of B rows, on rank r of N.
  data::Batch rows(const data::Batch& global) const;
  // Rank 0's parameter values on every rank: after the model is built or loaded.
  void broadcast_parameters();
  // The dropout generator of this rank: its own seed, and the offset it had reached (the
  // saved one of its rank when the run was resumed at the same world size).
  void seed_dropout(const Generator::State& rank0, const std::vector<uint64_t>& rank_offsets);
  // Rank 0's optimizer state (read from a checkpoint) on every rank, so that only rank 0 reads
  // the checkpoint's files; with ZeRO-1 each rank keeps its share.
  void broadcast_optimizer_state(optim::Optimizer& optimizer);
  // Every rank's dropout offset, in rank order (a collective).
  std::vector<uint64_t> dropout_offsets() const;

  // The line a run starts with: ranks, rows, buckets, bytes, sharding.
  std::string describe(const TrainConfig& train) const;

  // StepSync
  void sum(std::span<int64_t> values) const override { world_.sum(values); }
  void sum(std::span<double> values) const override { world_.sum(values); }
  void sync_next_backward() override { reducer_->prepare(); }
  ReductionStats wait_for_gradients() override { return reducer_->finish(); }

  // The gradient buckets (bench/ times their sums alone).
  GradientReducer& reducer() { return *reducer_; }

  // ZeRO-1: before a checkpoint, rank 0 gathers the optimizer state the others own; after it,
  // each rank forgets again what it does not own. Every rank calls both. Nothing without it.
  void gather_optimizer_state();
  void drop_others_optimizer_state();

 private:
  const World& world_;
  nn::PretrainedModel& model_;
  std::unique_ptr<GradientReducer> reducer_;
  std::unique_ptr<OptimizerShards> shards_;
  int64_t elements_ = 0;  // the parameters'
};

}  // namespace heed::train
