// The best-model choice of eval.load_best_model_at_end: metric names and their default
// direction, strict improvement (ties keep the earlier step), and the state a checkpoint
// keeps for a resumed run.
#include "train/run/best_model.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "autograd/tensor.h"
#include "train/run/metrics.h"
#include "train/tasks/task.h"

namespace heed::train {
namespace {

// What a config of `task` may name in eval.metric_for_best_model.
std::vector<std::string> metric_names_of(std::string_view task,
                                         const std::vector<std::string>& labels, bool decode) {
  const TrainingTask& t = task_for(task);
  return t.metric_names(t.scored_classes(labels), EvalConfig{.decode = decode});
}

TEST(BestModel, MetricNamesFollowHuggingFace) {
  EXPECT_EQ(best_model_metric(std::nullopt), "loss");
  EXPECT_EQ(best_model_metric("eval_accuracy"), "accuracy");
  EXPECT_EQ(best_model_metric("spam_f1"), "spam_f1");
  EXPECT_FALSE(greater_is_better_by_default("loss"));
  EXPECT_FALSE(greater_is_better_by_default("perplexity"));
  EXPECT_FALSE(greater_is_better_by_default("sequence_error_rate"));
  EXPECT_FALSE(greater_is_better_by_default("token_error_rate"));
  EXPECT_TRUE(greater_is_better_by_default("accuracy"));
  EXPECT_TRUE(greater_is_better_by_default("spam_f1"));
  EXPECT_TRUE(greater_is_better_by_default("macro_f1"));
}

TEST(BestModel, HigherIsBetterKeepsTheEarliestOfATie) {
  BestModel best("accuracy", true);
  EXPECT_FALSE(best.has_value());
  EXPECT_TRUE(best.consider({{"accuracy", 0.90}, {"loss", 0.3}}, 100));
  EXPECT_TRUE(best.consider({{"accuracy", 0.95}, {"loss", 0.4}}, 200));
  EXPECT_FALSE(best.consider({{"accuracy", 0.95}, {"loss", 0.1}}, 300));
  EXPECT_FALSE(best.consider({{"accuracy", 0.94}}, 400));
  EXPECT_EQ(best.step(), 200);
  EXPECT_EQ(best.value(), 0.95);
}

TEST(BestModel, LowerIsBetterForTheLoss) {
  BestModel best("loss", false);
  EXPECT_TRUE(best.consider({{"loss", 2.0}}, 10));
  EXPECT_FALSE(best.consider({{"loss", 2.5}}, 20));
  EXPECT_TRUE(best.consider({{"loss", 1.5}}, 30));
  EXPECT_EQ(best.step(), 30);
  EXPECT_THROW(best.consider({{"accuracy", 0.5}}, 40), Error);  // the metric is missing
}

TEST(BestModel, StateRoundTripsAndRefusesAnotherRule) {
  BestModel best("spam_f1", true);
  best.consider({{"spam_f1", 0.97}}, 600);
  const nlohmann::json state = best.state();
  EXPECT_EQ(state["best_metric"], 0.97);
  EXPECT_EQ(state["best_global_step"], 600);

  BestModel restored("spam_f1", true);
  restored.load_state(heed::io::JsonFields(state, "trainer_state.json"), "checkpoint-600");
  EXPECT_EQ(restored.step(), 600);
  EXPECT_FALSE(restored.consider({{"spam_f1", 0.97}}, 700));  // compared against the saved best

  BestModel before_any("spam_f1", true);
  const nlohmann::json no_best = BestModel("spam_f1", true).state();
  before_any.load_state(heed::io::JsonFields(no_best, "trainer_state.json"), "checkpoint-10");
  EXPECT_FALSE(before_any.has_value());

  BestModel other_metric("loss", false);
  try {
    other_metric.load_state(heed::io::JsonFields(state, "trainer_state.json"),
                            "runs/x/checkpoint-600");
    FAIL() << "a changed metric must be refused";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "eval.metric_for_best_model: is 'loss' (greater_is_better: false) but was "
              "'spam_f1' (true) in runs/x/checkpoint-600; the best so far would be judged by "
              "another rule (start a new train.output_dir, or set it back)");
  }
  BestModel other_direction("spam_f1", false);
  EXPECT_THROW(other_direction.load_state(heed::io::JsonFields(state, "trainer_state.json"),
                                          "checkpoint-600"),
               ConfigError);
}

TEST(BestModel, ADamagedStateNamesTheFileAndTheField) {
  const nlohmann::json state = {{"metric_for_best_model", "loss"},
                                {"greater_is_better", false},
                                {"best_metric", 0.5},
                                {"best_global_step", -1e300}};
  BestModel best("loss", false);
  try {
    best.load_state(
        heed::io::JsonFields(state, "runs/x/checkpoint-6/trainer_state.json", "best_model."),
        "runs/x/checkpoint-6");
    FAIL() << "a step that is not an integer must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "runs/x/checkpoint-6/trainer_state.json: field 'best_model.best_global_step' must "
              "be an integer, not -1e+300");
  }
  const nlohmann::json no_rule = nlohmann::json::object();
  EXPECT_THROW(best.load_state(heed::io::JsonFields(no_rule, "trainer_state.json"), "checkpoint-6"),
               Error);
}

TEST(BestModel, EvaluationMetricNamesAreWhatEvaluationsReport) {
  // Drift guard: the names a config may choose are the keys the accumulator reports.
  MetricAccumulator metrics({"ham", "spam"});
  metrics.add(0.5, 3, from_vector<float>({2, 1, 0, 3, 1, 0}, {3, 2}),
              from_vector<int64_t>({0, 1, 0}, {3}));
  std::vector<std::string> reported;
  for (const auto& [name, value] : metrics.results()) reported.push_back(name);
  std::vector<std::string> listed = metrics.metric_names();
  std::ranges::sort(reported);
  std::ranges::sort(listed);
  EXPECT_EQ(listed, reported);

  const std::vector<std::string> classification =
      metric_names_of("classification", {"ham", "spam"}, true);
  EXPECT_TRUE(std::ranges::count(classification, "spam_f1"));
  EXPECT_TRUE(std::ranges::count(classification, "macro_f1"));
  EXPECT_FALSE(std::ranges::count(classification, "token_error_rate"));
  // Token classification reports no per-class scores, whatever its labels.
  EXPECT_EQ(metric_names_of("token_classification", {"NN", "VB"}, true),
            (std::vector<std::string>{"loss", "perplexity", "accuracy"}));
  EXPECT_TRUE(std::ranges::count(metric_names_of("seq2seq", {}, true), "sequence_error_rate"));
  EXPECT_FALSE(std::ranges::count(metric_names_of("seq2seq", {}, false), "sequence_error_rate"));
}

}  // namespace
}  // namespace heed::train
