// trainer_state.json, written and read in one place (train/checkpoint/training_state.h), and the
// rules of what is due after a step (train/run/due.h).
#include <gtest/gtest.h>

#include "train/checkpoint/training_state.h"
#include "train/run/due.h"

namespace heed::train {
namespace {

TrainingState a_state() {
  TrainingState s;
  s.step = 12;
  s.tokens_seen = 3456;
  s.elapsed_seconds = 7.25;
  s.loader = {.epoch = 2, .batch = 5};
  s.dropout_rng = {.seed = 42, .offset = 1024};
  s.rank_dropout_offsets = {1024, 2048};
  s.metrics_size = 789;
  s.world_size = 2;
  s.task = "mlm";
  s.data_order = {{"train.seed", 42}};
  s.scheduler = {{"last_epoch", 12}};
  s.best_model = nlohmann::json{{"best_metric", 1.5}};
  return s;
}

TEST(TrainingState, ReadsBackWhatItWrites) {
  const TrainingState written = a_state();
  const nlohmann::json j = to_json(written);
  const TrainingState read = read_training_state(io::JsonFields(j, "trainer_state.json"));
  EXPECT_EQ(read.step, 12);
  EXPECT_EQ(read.tokens_seen, 3456);
  EXPECT_EQ(read.elapsed_seconds, 7.25);
  EXPECT_EQ(read.loader.epoch, 2u);
  EXPECT_EQ(read.loader.batch, 5u);
  EXPECT_EQ(read.dropout_rng.seed, 42u);
  EXPECT_EQ(read.dropout_rng.offset, 1024u);
  EXPECT_EQ(read.rank_dropout_offsets, (std::vector<uint64_t>{1024, 2048}));
  EXPECT_EQ(read.metrics_size, 789u);
  EXPECT_EQ(read.world_size, 2);
  EXPECT_EQ(read.task, "mlm");
  EXPECT_EQ(read.data_order, written.data_order);
  EXPECT_EQ(read.scheduler, written.scheduler);
  EXPECT_EQ(read.best_model, written.best_model);
  EXPECT_EQ(to_json(read), j);
}

TEST(TrainingState, AFieldOutOfRangeNamesTheFileAndTheField) {
  nlohmann::json j = to_json(a_state());
  j["loader"]["epoch"] = -1;
  try {
    (void)read_training_state(io::JsonFields(j, "run/checkpoint-12/trainer_state.json"));
    FAIL() << "read a negative epoch";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("run/checkpoint-12/trainer_state.json"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("loader.epoch"), std::string::npos) << e.what();
  }
}

TEST(TrainingState, AnotherWorldSizeIsNotedAndTheSameOneIsNot) {
  TrainingState s = a_state();
  s.where = "ckpt/trainer_state.json";
  EXPECT_FALSE(world_size_note(s, 2).has_value());
  ASSERT_TRUE(world_size_note(s, 3).has_value());
  EXPECT_NE(world_size_note(s, 3)->find("2 ranks, and this one has 3"), std::string::npos);
  s.world_size.reset();  // written before checkpoints recorded it
  EXPECT_FALSE(world_size_note(s, 3).has_value());
}

RunConfig config_with(int64_t max_steps, int64_t log_every, int64_t eval_every,
                      int64_t checkpoint_every, bool best_at_end) {
  RunConfig c;
  c.train.max_steps = max_steps;
  c.logging.every_steps = log_every;
  c.eval.every_steps = eval_every;
  c.checkpoint.every_steps = checkpoint_every;
  c.eval.load_best_model_at_end = best_at_end;
  return c;
}

TEST(Due, PeriodsCountFromStepZeroAndTheLastStepIsAlwaysLoggedAndCheckpointed) {
  const RunConfig c = config_with(10, 4, 3, 5, false);
  EXPECT_FALSE(due_after(1, c, true).log);
  EXPECT_TRUE(due_after(4, c, true).log);
  EXPECT_TRUE(due_after(3, c, true).evaluate);
  EXPECT_FALSE(due_after(4, c, true).evaluate);
  EXPECT_FALSE(due_after(3, c, false).evaluate);  // nothing to evaluate
  EXPECT_TRUE(due_after(5, c, true).checkpoint);
  EXPECT_FALSE(due_after(6, c, true).checkpoint);
  const Due last = due_after(10, c, true);
  EXPECT_TRUE(last.last && last.log && last.checkpoint);
  EXPECT_FALSE(last.evaluate);  // the final evaluation comes after the loop
}

TEST(Due, TheBestModelsChoiceJudgesTheLastStep) {
  EXPECT_TRUE(due_after(10, config_with(10, 4, 3, 5, true), true).evaluate);
  EXPECT_FALSE(due_after(10, config_with(10, 4, 3, 5, true), false).evaluate);
}

TEST(Due, ZeroTurnsPeriodicEvaluationAndCheckpointsOff) {
  const RunConfig c = config_with(10, 1, 0, 0, false);
  EXPECT_FALSE(due_after(5, c, true).evaluate);
  EXPECT_FALSE(due_after(5, c, true).checkpoint);
  EXPECT_TRUE(due_after(10, c, true).checkpoint);
}

}  // namespace
}  // namespace heed::train
