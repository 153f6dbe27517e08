// task: distill end to end: a 1-layer student of the tiny BERT masked LM learns, resumes bit for
// bit after SIGKILL, saves a plain BERT checkpoint that infer reads, and a student that is
// its teacher has nothing to learn from it; configs that cannot run say why in one line.
#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "train/run_train.h"

using namespace heed::testing;

namespace {

class Distill : public ::testing::Test {
 protected:
  // The teacher: the tiny masked LM, 60 steps of it, trained for each test (ctest runs the
  // tests as processes of their own, side by side).
  void SetUp() override {
    teacher_run_ = fresh_dir(std::string("distill_teacher_") +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    Outcome teacher = run_train(
        "--config configs/tiny/bert_mlm.yaml --set train.output_dir=" + teacher_run_ +
        " --set tokenizer.vocab=" + teacher_run_ + "/vocab.txt --set train.max_steps=60 " +
        "--set eval.every_steps=0 --set train.eval_at_end=false --set checkpoint.every_steps=0");
    ASSERT_EQ(teacher.exit_code, 0) << teacher.output;
    teacher_ = teacher_run_ + "/checkpoint-60";
  }

  std::string args(const std::string& out, const std::string& extra = "") const {
    return "--config configs/tiny/distill.yaml --set distill.teacher=" + teacher_ +
           " --set train.output_dir=" + out + " " + extra;
  }

  std::string teacher_run_, teacher_;
};

// The first logged record of metrics.jsonl with `key`.
double first_logged(const std::string& dir, const std::string& key) {
  std::ifstream in(dir + "/metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j.contains(key) && !j.contains("split")) return j[key];
  }
  ADD_FAILURE() << "no " << key << " in " << dir;
  return 0.0;
}

}  // namespace

TEST_F(Distill, StudentLearnsResumesExactlyAndSavesAPlainModel) {
  const std::string whole = fresh_dir("distill_whole"), resumed = fresh_dir("distill_resumed");
  const std::string run =
      "--set train.max_steps=40 --set checkpoint.every_steps=10 "
      "--set logging.every_steps=1 --set eval.every_steps=0 ";
  Outcome o = run_train(args(whole, run));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  Outcome killed = run_train(args(resumed, run), "HEED_FAULT_AFTER_STEP=27:KILL");
  EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.output;
  Outcome again = run_train(args(resumed, run + "--resume"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("at step 20"), std::string::npos) << again.output;

  const auto a = losses(whole), b = losses(resumed);
  ASSERT_EQ(a.size(), 40u);
  EXPECT_EQ(a, b);
  EXPECT_LT(a.back().second, a.front().second);
  const std::string checkpoint = whole + "/checkpoint-40";
  expect_same_training_files(checkpoint, resumed + "/checkpoint-40");

  // The student alone: one layer, no tensor of the teacher's second, the teacher's tokenizer.
  const auto config = nlohmann::json::parse(file_bytes(checkpoint + "/config.json"));
  EXPECT_EQ(config["num_hidden_layers"], 1);
  EXPECT_EQ(config["architectures"][0], "BertForMaskedLM");
  const std::string model = file_bytes(checkpoint + "/model.safetensors");
  EXPECT_NE(model.find("bert.encoder.layer.0.attention.self.query.weight"), std::string::npos);
  EXPECT_EQ(model.find("bert.encoder.layer.1."), std::string::npos);
  EXPECT_EQ(file_bytes(checkpoint + "/vocab.txt"), file_bytes(teacher_ + "/vocab.txt"));
  // Evaluation measures the student's own masked LM.
  const auto metrics = nlohmann::json::parse(file_bytes(whole + "/final_metrics.json"));
  EXPECT_TRUE(metrics["test"].contains("perplexity"));

  const Outcome fill = run_infer("fill-mask --checkpoint " + checkpoint +
                                 " --text 'the [MASK] ship sees the sea.' --json");
  ASSERT_EQ(fill.exit_code, 0) << fill.output;
  EXPECT_NE(fill.output.find("\"filled\""), std::string::npos) << fill.output;
}

TEST_F(Distill, AStudentThatIsItsTeacherHasNothingToLearnFromIt) {
  // Every teacher layer, no dropout in the student (the teacher never has any): the soft
  // targets and the hidden states agree exactly, so with the MLM term off the loss is 0.
  const std::string out = fresh_dir("distill_identity");
  Outcome o = run_train(
      args(out,
           "--set model.num_hidden_layers=2 --set model.hidden_dropout_prob=0 "
           "--set model.attention_probs_dropout_prob=0 --set distill.alpha_mlm=0 "
           "--set train.max_steps=1 --set schedule.warmup_steps=0 --set logging.every_steps=1 "
           "--set eval.every_steps=0 --set train.eval_at_end=false"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NEAR(first_logged(out, "loss"), 0.0, 1e-5);
  // The same run with the soft targets restricted to the masked tokens.
  const std::string masked = fresh_dir("distill_identity_masked");
  o = run_train(args(masked,
                     "--set model.num_hidden_layers=2 --set model.hidden_dropout_prob=0 "
                     "--set model.attention_probs_dropout_prob=0 --set distill.alpha_mlm=0 "
                     "--set distill.restrict_ce_to_mask=true --set train.max_steps=1 --set "
                     "schedule.warmup_steps=0 "
                     "--set logging.every_steps=1 --set eval.every_steps=0 "
                     "--set train.eval_at_end=false"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NEAR(first_logged(masked, "loss"), 0.0, 1e-5);
}

TEST_F(Distill, ADistilBertStudentOfABertTeacherLearnsAndIsAPlainDistilBert) {
  // DistilBERT's recipe: the student takes the teacher's embeddings (not its token types), the
  // chosen layers under DistilBERT's names, and the head.
  const std::string out = fresh_dir("distill_distilbert");
  Outcome o = run_train(args(out,
                             "--set 'model={arch: distilbert, dim: 64, n_layers: 1, n_heads: 2, "
                             "hidden_dim: 128, max_position_embeddings: 32}' "
                             "--set train.max_steps=30 --set logging.every_steps=1"));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const auto l = losses(out);
  ASSERT_EQ(l.size(), 30u);
  EXPECT_LT(l.back().second, l.front().second);
  const std::string checkpoint = out + "/checkpoint-30";
  const auto config = nlohmann::json::parse(file_bytes(checkpoint + "/config.json"));
  EXPECT_EQ(config["model_type"], "distilbert");
  EXPECT_EQ(config["n_layers"], 1);
  const std::string model = file_bytes(checkpoint + "/model.safetensors");
  EXPECT_NE(model.find("distilbert.transformer.layer.0.attention.q_lin.weight"), std::string::npos);
  EXPECT_EQ(model.find("token_type"), std::string::npos);
  // A student wider than its teacher is named by DistilBERT's key.
  Outcome wide = run_train(args(fresh_dir("distill_distilbert_wide"),
                                "--set 'model={arch: distilbert, dim: 32, n_layers: 1, n_heads: 2, "
                                "hidden_dim: 128, max_position_embeddings: 32}'"));
  EXPECT_EQ(wide.exit_code, 2) << wide.output;
  EXPECT_NE(wide.output.find("model.dim: 32 differs from the teacher's 64"), std::string::npos)
      << wide.output;
}

TEST_F(Distill, ConfigsThatCannotRunSayWhy) {
  const std::string out = fresh_dir("distill_bad");
  const auto expect_error = [&](const std::string& extra, const std::string& message) {
    Outcome o = run_train(args(out, extra));
    EXPECT_EQ(o.exit_code, 2) << extra << "\n" << o.output;
    EXPECT_NE(o.output.find(message), std::string::npos) << extra << "\n" << o.output;
  };
  expect_error("--set distill.teacher=null", "distill.teacher: missing");
  expect_error("--set distill.student_layers=[0,2]", "distill.student_layers: names 2 layers");
  expect_error("--set distill.student_layers=[5]", "distill.student_layers: 5 is not a layer");
  expect_error("--set model.hidden_size=32 --set model.intermediate_size=64",
               "model.hidden_size: 32 differs from the teacher's 64");
  expect_error("--set model.num_hidden_layers=3", "model.num_hidden_layers: 3 is more than");
  expect_error("--set distill.alpha_ce=0 --set distill.alpha_mlm=0 --set distill.alpha_cos=0",
               "nothing to learn");
  expect_error("--set distill.temperature=0", "distill.temperature: must be > 0");
  // A teacher on a task that has none.
  Outcome o = run_train("--config configs/tiny/bert_mlm.yaml --set train.output_dir=" + out +
                        " --set tokenizer.vocab=" + teacher_run_ +
                        "/vocab.txt --set distill.teacher=" + teacher_);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("distill.teacher: task 'mlm' has no teacher"), std::string::npos)
      << o.output;
}
