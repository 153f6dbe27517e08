#pragma once
// Learning-rate schedules as Hugging Face's transformers.optimization defines them: each is
// a multiplier of the base learning rate as a function of the number of scheduler steps
// taken, s = 0, 1, 2, ... (a LambdaLR factor). W is the number of warmup steps, N the total.
// With W > 0 the first optimizer update uses lr 0, as in Hugging Face.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_fields.h"
#include "optim/optimizer.h"

namespace heed::optim {

// 1 (get_constant_schedule).
double constant_schedule(int64_t step);
// s / max(1, W) during warmup, then 1 (get_constant_schedule_with_warmup).
double constant_schedule_with_warmup(int64_t step, int64_t warmup_steps);
// s / max(1, W) during warmup, then max(0, (N - s) / max(1, N - W))
// (get_linear_schedule_with_warmup).
double linear_schedule_with_warmup(int64_t step, int64_t warmup_steps, int64_t total_steps);
// s / max(1, W) during warmup, then max(0, (1 + cos(2 pi c q)) / 2) with
// q = (s - W) / max(1, N - W) and c = num_cycles; 0.5 decays to 0 at N
// (get_cosine_schedule_with_warmup).
double cosine_schedule_with_warmup(int64_t step, int64_t warmup_steps, int64_t total_steps,
                                   double num_cycles = 0.5);

using LRLambda = std::function<double(int64_t step)>;

// One of the schedules above by the name a config uses: "constant", "constant_with_warmup",
// "linear" or "cosine". Throws on an unknown name or negative step counts.
LRLambda make_schedule(const std::string& name, int64_t warmup_steps, int64_t total_steps);

// Sets every group's lr to base_lr * lambda(s), as torch.optim.lr_scheduler.LambdaLR: the
// base lrs are the groups' lrs when the scheduler is made, and the constructor already
// applies lambda(0). Call step() after each optimizer.step(). The optimizer must outlive
// the scheduler.
class LRScheduler {
 public:
  LRScheduler(Optimizer& optimizer, LRLambda lambda);

  void step();
  // Scheduler steps taken so far (s).
  int64_t last_step() const { return step_; }
  // The lr of each group as last set.
  std::vector<double> last_lr() const;
  const std::vector<double>& base_lrs() const { return base_lrs_; }

  // {"step": s, "base_lrs": [...]}: what a checkpoint keeps. Loading sets the groups' lrs
  // for the loaded step; it throws if the number of groups differs.
  nlohmann::json state_dict() const;
  void load_state_dict(const nlohmann::json& state);
  // The same, read from a file (a checkpoint's trainer_state.json) that errors then name.
  void load_state_dict(const io::JsonFields& state);
  // Every group's base lr (a resumed run given a new learning rate); the groups' lrs follow.
  void set_base_lr(double lr);

 private:
  void apply();
  Optimizer* optimizer_;
  LRLambda lambda_;
  std::vector<double> base_lrs_;
  int64_t step_ = 0;
};

}  // namespace heed::optim
