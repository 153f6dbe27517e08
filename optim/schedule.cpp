#include "optim/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "base/error.h"
#include "io/json_fields.h"

namespace heed::optim {

namespace {

// The warmup ramp all three schedules share: s / max(1, W).
double warmup_factor(int64_t step, int64_t warmup_steps) {
  return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup_steps));
}

}  // namespace

double constant_schedule(int64_t) {
  return 1.0;
}

double constant_schedule_with_warmup(int64_t step, int64_t warmup_steps) {
  if (step < warmup_steps) return warmup_factor(step, warmup_steps);
  return 1.0;
}

double linear_schedule_with_warmup(int64_t step, int64_t warmup_steps, int64_t total_steps) {
  if (step < warmup_steps) return warmup_factor(step, warmup_steps);
  return std::max(0.0, static_cast<double>(total_steps - step) /
                           static_cast<double>(std::max<int64_t>(1, total_steps - warmup_steps)));
}

double cosine_schedule_with_warmup(int64_t step, int64_t warmup_steps, int64_t total_steps,
                                   double num_cycles) {
  if (step < warmup_steps) return warmup_factor(step, warmup_steps);
  const double progress = static_cast<double>(step - warmup_steps) /
                          static_cast<double>(std::max<int64_t>(1, total_steps - warmup_steps));
  return std::max(0.0, 0.5 * (1.0 + std::cos(std::numbers::pi * num_cycles * 2.0 * progress)));
}

LRLambda make_schedule(const std::string& name, int64_t warmup_steps, int64_t total_steps) {
  HEED_CHECK(warmup_steps >= 0, "schedule '{}': warmup_steps must be >= 0, got {}", name,
             warmup_steps);
  HEED_CHECK(total_steps >= 0, "schedule '{}': total steps must be >= 0, got {}", name,
             total_steps);
  if (name == "constant") return constant_schedule;
  if (name == "constant_with_warmup") {
    return [=](int64_t s) { return constant_schedule_with_warmup(s, warmup_steps); };
  }
  if (name == "linear") {
    return [=](int64_t s) { return linear_schedule_with_warmup(s, warmup_steps, total_steps); };
  }
  if (name == "cosine") {
    return [=](int64_t s) { return cosine_schedule_with_warmup(s, warmup_steps, total_steps); };
  }
  fail("unknown schedule '{}' (known: constant, constant_with_warmup, linear, cosine)", name);
}

LRScheduler::LRScheduler(Optimizer& optimizer, LRLambda lambda)
    : optimizer_(&optimizer), lambda_(std::move(lambda)) {
  HEED_CHECK(lambda_ != nullptr, "LRScheduler needs a schedule function");
  for (const ParamGroup& g : optimizer_->param_groups()) base_lrs_.push_back(*g.lr);
  apply();
}

void LRScheduler::step() {
  ++step_;
  apply();
}

void LRScheduler::apply() {
  const double factor = lambda_(step_);
  auto& groups = optimizer_->param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].lr = base_lrs_[i] * factor;
}

std::vector<double> LRScheduler::last_lr() const {
  std::vector<double> out;
  for (const ParamGroup& g : optimizer_->param_groups()) out.push_back(*g.lr);
  return out;
}

nlohmann::json LRScheduler::state_dict() const {
  return {{"step", step_}, {"base_lrs", base_lrs_}};
}

void LRScheduler::load_state_dict(const nlohmann::json& state) {
  load_state_dict(io::JsonFields(state, "scheduler state"));
}

void LRScheduler::load_state_dict(const io::JsonFields& state) {
  const int64_t step = state.int64("step");
  std::vector<double> base_lrs = state.numbers("base_lrs");
  HEED_CHECK(step >= 0, "{}: scheduler step must be >= 0, got {}", state.where(), step);
  HEED_CHECK(base_lrs.size() == optimizer_->param_groups().size(),
             "{}: the scheduler has {} base lrs, the optimizer has {} parameter groups",
             state.where(), base_lrs.size(), optimizer_->param_groups().size());
  step_ = step;
  base_lrs_ = std::move(base_lrs);
  apply();
}

void LRScheduler::set_base_lr(double lr) {
  std::fill(base_lrs_.begin(), base_lrs_.end(), lr);
  apply();
}

}  // namespace heed::optim
