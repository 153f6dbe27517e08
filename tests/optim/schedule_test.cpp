#include "optim/schedule.h"

#include <gtest/gtest.h>

#include <cmath>

#include "optim/adamw.h"
#include "optim_test_util.h"

namespace heed::optim {
namespace {

using heed::testing::leaf;

// Expected values are Hugging Face's formulas worked by hand at W = 10, N = 100.
TEST(Schedule, ConstantWithWarmup) {
  EXPECT_EQ(constant_schedule(0), 1.0);
  EXPECT_EQ(constant_schedule_with_warmup(0, 4), 0.0);
  EXPECT_EQ(constant_schedule_with_warmup(1, 4), 0.25);
  EXPECT_EQ(constant_schedule_with_warmup(3, 4), 0.75);
  EXPECT_EQ(constant_schedule_with_warmup(4, 4), 1.0);
  EXPECT_EQ(constant_schedule_with_warmup(1000, 4), 1.0);
  EXPECT_EQ(constant_schedule_with_warmup(0, 0), 1.0);
}

TEST(Schedule, LinearWithWarmup) {
  EXPECT_EQ(linear_schedule_with_warmup(0, 10, 100), 0.0);  // the first update uses lr 0
  EXPECT_EQ(linear_schedule_with_warmup(5, 10, 100), 0.5);
  EXPECT_EQ(linear_schedule_with_warmup(10, 10, 100), 1.0);  // (100 - 10) / 90
  EXPECT_EQ(linear_schedule_with_warmup(55, 10, 100), 0.5);  // 45 / 90
  EXPECT_EQ(linear_schedule_with_warmup(91, 10, 100), 0.1);  // 9 / 90
  EXPECT_EQ(linear_schedule_with_warmup(100, 10, 100), 0.0);
  EXPECT_EQ(linear_schedule_with_warmup(150, 10, 100), 0.0);  // clamped, never negative
  // Without warmup the first step has the full rate; W = N divides by max(1, 0).
  EXPECT_EQ(linear_schedule_with_warmup(0, 0, 4), 1.0);
  EXPECT_EQ(linear_schedule_with_warmup(1, 0, 4), 0.75);
  EXPECT_EQ(linear_schedule_with_warmup(3, 4, 4), 0.75);
  EXPECT_EQ(linear_schedule_with_warmup(4, 4, 4), 0.0);
}

TEST(Schedule, CosineWithWarmup) {
  EXPECT_EQ(cosine_schedule_with_warmup(0, 10, 100), 0.0);
  EXPECT_EQ(cosine_schedule_with_warmup(5, 10, 100), 0.5);
  EXPECT_EQ(cosine_schedule_with_warmup(10, 10, 100), 1.0);  // cos(0)
  // Halfway through the decay: (1 + cos(pi / 2)) / 2 = 1/2.
  EXPECT_NEAR(cosine_schedule_with_warmup(55, 10, 100), 0.5, 1e-15);
  EXPECT_NEAR(cosine_schedule_with_warmup(100, 10, 100), 0.0, 1e-15);  // (1 + cos(pi)) / 2
  // W = 0, N = 4: s = 1 gives (1 + cos(pi/4)) / 2 = 1/2 + sqrt(2)/4; s = 3 gives 1/2 - sqrt(2)/4.
  EXPECT_NEAR(cosine_schedule_with_warmup(1, 0, 4), 0.5 + std::sqrt(2.0) / 4, 1e-15);
  EXPECT_NEAR(cosine_schedule_with_warmup(3, 0, 4), 0.5 - std::sqrt(2.0) / 4, 1e-15);
  // Past N, num_cycles 0.5 rises again along the cosine but is clamped at 0 only below 0:
  // q = 1.25 gives (1 + cos(1.25 pi)) / 2 = 1/2 - sqrt(2)/4, as Hugging Face computes it.
  EXPECT_NEAR(cosine_schedule_with_warmup(5, 0, 4), 0.5 - std::sqrt(2.0) / 4, 1e-15);
  // num_cycles 1: a full period, back to 1 at N.
  EXPECT_NEAR(cosine_schedule_with_warmup(4, 0, 4, 1.0), 1.0, 1e-15);
}

TEST(Schedule, MakeScheduleByName) {
  EXPECT_EQ(make_schedule("linear", 10, 100)(55), 0.5);
  EXPECT_EQ(make_schedule("cosine", 10, 100)(5), 0.5);
  EXPECT_EQ(make_schedule("constant_with_warmup", 10, 100)(50), 1.0);
  EXPECT_EQ(make_schedule("constant", 10, 100)(0), 1.0);
  EXPECT_THROW(make_schedule("polynomial", 10, 100), Error);
  EXPECT_THROW(make_schedule("linear", -1, 100), Error);
}

TEST(Schedule, SchedulerSetsEveryGroupsLrFromItsBase) {
  Tensor a = leaf<float>({1.0f}, {1}), b = leaf<float>({1.0f}, {1});
  AdamW adamw(std::vector<ParamGroup>{{{{"a", a}}, 1e-3, {}, {}}, {{{"b", b}}, 2e-3, {}, {}}});
  LRScheduler scheduler(adamw, make_schedule("linear", 2, 4));
  EXPECT_EQ(scheduler.last_lr(), (std::vector<double>{0.0, 0.0}));  // lambda(0) applied at once
  scheduler.step();
  EXPECT_EQ(scheduler.last_lr(), (std::vector<double>{0.5e-3, 1e-3}));
  scheduler.step();
  EXPECT_EQ(scheduler.last_lr(), (std::vector<double>{1e-3, 2e-3}));
  scheduler.step();
  EXPECT_EQ(scheduler.last_lr(), (std::vector<double>{0.5e-3, 1e-3}));
  EXPECT_EQ(scheduler.last_step(), 3);

  // A new scheduler on the same optimizer (whose lrs are now scheduled values) takes its
  // base lrs from the state, not from the groups.
  LRScheduler resumed(adamw, make_schedule("linear", 2, 4));
  resumed.load_state_dict(scheduler.state_dict());
  EXPECT_EQ(resumed.last_step(), 3);
  EXPECT_EQ(resumed.base_lrs(), (std::vector<double>{1e-3, 2e-3}));
  EXPECT_EQ(resumed.last_lr(), (std::vector<double>{0.5e-3, 1e-3}));
  resumed.step();
  EXPECT_EQ(resumed.last_lr(), (std::vector<double>{0.0, 0.0}));

  EXPECT_THROW(resumed.load_state_dict(nlohmann::json{{"step", 1}, {"base_lrs", {1e-3}}}), Error);
  EXPECT_THROW(resumed.load_state_dict(nlohmann::json{{"steps", 1}}), Error);
}

TEST(Schedule, WarmupMakesTheFirstUpdateUseLrZero) {
  Tensor p = leaf<float>({1.0f, 2.0f}, {2});
  AdamW adamw(NamedTensors{{"p", p}}, {.lr = 0.1, .weight_decay = 0.1});
  LRScheduler scheduler(adamw, make_schedule("linear", 5, 10));
  heed::testing::set_grad(p, ones({2}));
  adamw.step();
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{1.0f, 2.0f}));
  scheduler.step();
  adamw.step();
  EXPECT_NE(p.to_vector<float>(), (std::vector<float>{1.0f, 2.0f}));
}

}  // namespace
}  // namespace heed::optim
