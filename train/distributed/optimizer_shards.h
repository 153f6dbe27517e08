#pragma once
// ZeRO stage 1 (Rajbhandari et al. 2020): each rank keeps the optimizer state (AdamW's two
// moments, 8 bytes per parameter) of its own share of the parameters only, so the state per
// rank falls from 8 to about 8/N bytes per parameter. Every rank still holds the averaged
// gradients of all parameters; each updates the parameters it owns, and the new values are
// then broadcast from their owners. The update is the one every rank of plain data
// parallelism makes, bit for bit.
//
// Ownership is by whole parameter, balanced by size. A checkpoint gathers the full state onto
// rank 0, so it resumes at any world size, with or without sharding.
//
// The shards attach to the optimizer's step hooks (as PyTorch's ZeroRedundancyOptimizer wraps
// one): before each step the gradients of parameters other ranks own are dropped, after it the
// new values come from their owners. The code that calls optimizer.step() does not change.
#include <cstdint>
#include <string>
#include <vector>

#include "optim/optimizer.h"
#include "train/distributed/world.h"

namespace heed::train {

// A parameter's optimizer state as one message (its step, then each state tensor's name and f32
// elements), and back for a parameter of `param`'s size.
std::string pack_state(const optim::ParamState& state);
optim::ParamState unpack_state(const std::string& bytes, const Tensor& param);

class OptimizerShards {
 public:
  OptimizerShards(const World& world, optim::Optimizer& optimizer);
  ~OptimizerShards();
  OptimizerShards(const OptimizerShards&) = delete;
  OptimizerShards& operator=(const OptimizerShards&) = delete;
  // Rank 0 receives the state of every parameter the others own (before saving it); the other
  // ranks send theirs. Every rank calls it.
  void gather_state();
  // Forgets the state of parameters this rank does not own: after gather_state and the save,
  // and after loading a full state file.
  void drop_others_state();

  int owner(size_t param) const { return owners_.at(param); }
  // The number of parameter elements this rank keeps state for.
  int64_t owned_elements() const { return owned_elements_; }

 private:
  // Before optimizer.step(): drops the gradients of the parameters other ranks own, so that
  // the step updates (and makes state for) this rank's share alone.
  void before_step();
  // After it: every parameter's new value, from its owner, on every rank.
  void after_step();

  const World& world_;
  optim::Optimizer& optimizer_;
  std::vector<std::pair<std::string, Tensor>> params_;  // every group's, in order
  std::vector<int> owners_;
  int64_t owned_elements_ = 0;
  uint64_t pre_hook_ = 0, post_hook_ = 0;  // on optimizer_
};

}  // namespace heed::train
