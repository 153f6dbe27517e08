// What each task picks from a line of data.train to train a WordPiece vocabulary on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "train/config/task_names.h"
#include "train/run/task_setup.h"
#include "train/tasks/load_run_config.h"
#include "train/tasks/task.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

using Texts = std::vector<std::string_view>;

// Each task registers itself from its own file, which nothing else calls into: linked from a
// static library as it is, the file would be dropped with its registration (train/CMakeLists.txt).
// Listed in the order of their ranks, as messages and configs/README.md list them.
TEST(Tasks, EveryTaskRegistersItselfUnderItsYamlName) {
  EXPECT_EQ(task_names(),
            (std::vector<std::string>{"mlm", "distill", "clm", "seq2seq", "span_corruption",
                                      "classification", "token_classification"}));
  using Archs = std::vector<Arch>;
  EXPECT_EQ(task_for("mlm").architectures(),
            (Archs{Arch::kBert, Arch::kRoberta, Arch::kDistilBert}));
  EXPECT_EQ(task_for("distill").architectures(),
            (Archs{Arch::kBert, Arch::kRoberta, Arch::kDistilBert}));
  EXPECT_TRUE(task_for("distill").has_teacher());
  EXPECT_FALSE(task_for("mlm").has_teacher());
  EXPECT_EQ(task_for("clm").architectures(), Archs{Arch::kGpt2});
  EXPECT_EQ(task_for("seq2seq").architectures(), (Archs{Arch::kBart, Arch::kT5}));
  EXPECT_TRUE(task_for("seq2seq").has_targets());
  // Span corruption reads a corpus stream (data.max_seq_length), not source/target pairs.
  EXPECT_EQ(task_for("span_corruption").architectures(), Archs{Arch::kT5});
  EXPECT_FALSE(task_for("span_corruption").has_targets());
  EXPECT_EQ(task_for("classification").architectures(),
            (Archs{Arch::kBert, Arch::kRoberta, Arch::kDistilBert}));
  EXPECT_EQ(task_for("token_classification").architectures(),
            (Archs{Arch::kBert, Arch::kRoberta, Arch::kDistilBert}));
  EXPECT_THROW(task_for("translation"), Error);
}

TEST(Tasks, VocabularyTextsAreTheTextColumnsOfEachTasksFiles) {
  EXPECT_EQ(task_for("mlm").vocabulary_texts("a line\tof text"), Texts{"a line\tof text"});
  EXPECT_EQ(task_for("clm").vocabulary_texts("plain text"), Texts{"plain text"});
  // label<TAB>text (and a pair's second text): never the label.
  EXPECT_EQ(task_for("classification").vocabulary_texts("spam\tbuy now\tcheap"),
            (Texts{"buy now", "cheap"}));
  // word<TAB>tag: never the tag.
  EXPECT_EQ(task_for("token_classification").vocabulary_texts("dogs\tNNS"), Texts{"dogs"});
  // source<TAB>target: both sides share the vocabulary.
  EXPECT_EQ(task_for("seq2seq").vocabulary_texts("the house\tdas haus"),
            (Texts{"the house", "das haus"}));
}

// What build_task_data logs about the data of a config: files in a scratch directory.
class TaskSetup : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("heed_task_setup_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nbuy\nnow\nsee\nyou\nthe\ncat\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // A tiny BERT config of `task` over train and valid files, plus `extra` lines.
  std::string config(const std::string& task, const std::string& train, const std::string& valid,
                     const std::string& extra = "") const {
    return write("run.yaml", "task: " + task +
                                 "\n"
                                 "model: {arch: bert, hidden_size: 8, num_hidden_layers: 1,\n"
                                 "        num_attention_heads: 2, intermediate_size: 16,\n"
                                 "        max_position_embeddings: 16}\n"
                                 "tokenizer: {type: wordpiece, vocab: " +
                                 (dir_ / "vocab.txt").string() +
                                 "}\n"
                                 "data: {train: " +
                                 train + ", valid: " + valid + ", max_seq_length: 16" + extra +
                                 "}\n"
                                 "train: {batch_size: 2, max_steps: 1, output_dir: " +
                                 (dir_ / "run").string() + "}\n");
  }

  // The lines build_task_data logs that start with "warning:".
  static std::vector<std::string> warnings(const RunConfig& c) {
    std::vector<std::string> lines;
    build_task_data(c, [&](const std::string& line) {
      if (line.starts_with("warning:")) lines.push_back(line);
    });
    return lines;
  }

  fs::path dir_;
};

// A class found in the data with fewer than 3 training examples is named with where it is first
// seen: with data.labels unset, a one-row typo would otherwise become a class.
TEST_F(TaskSetup, RareClassesFoundInTheDataAreNamedWithTheirFirstLine) {
  std::string rows;
  for (int i = 0; i < 4; ++i) rows += "spam\tbuy now\nham\tsee you\n";
  const std::string train = write("train.tsv", rows + "spma\tbuy now\n" + rows);
  const std::string valid = write("valid.tsv", "spam\tbuy now\nham\tsee you\n");
  EXPECT_EQ(warnings(load_run_config(config("classification", train, valid))),
            std::vector<std::string>{
                "warning: class 'spma' has 1 training example (first at " + train +
                ":9): a typo? data.labels is not set, so the classes are those the data holds; "
                "list them in data.labels to make any other an error"});
  // Listed classes are the user's choice: nothing to say.
  EXPECT_EQ(warnings(load_run_config(
                config("classification", train, valid, ", labels: [ham, spam, spma]"))),
            std::vector<std::string>{});
}

// Tags come from every split: one seen in valid only has no training example, and says where.
TEST_F(TaskSetup, RareTagsAreNamedEvenWhenTheyAreNotInTraining) {
  std::string sentence = "the\tDET\ncat\tNOUN\n\n";
  std::string rows;
  for (int i = 0; i < 3; ++i) rows += sentence;
  const std::string train = write("train.conll", rows + "the\tDET\ncat\tNUON\n\n" + rows);
  const std::string valid = write("valid.conll", sentence + "see\tVERB\n");
  const std::vector<std::string> lines =
      warnings(load_run_config(config("token_classification", train, valid)));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(lines[0].starts_with("warning: class 'NUON' has 1 training example (first at " +
                                   train + ":11): a typo?"))
      << lines[0];
  EXPECT_TRUE(lines[1].starts_with("warning: class 'VERB' has 0 training examples (first at " +
                                   valid + ":4): a typo?"))
      << lines[1];
}

// A batch larger than the training set quietly trains on all of it: that is said, with where
// the size was set.
TEST_F(TaskSetup, ABatchLargerThanTheTrainingSetIsNamed) {
  std::string rows;
  for (int i = 0; i < 3; ++i) rows += "spam\tbuy now\nham\tsee you\n";
  const std::string path = config("classification", write("train.tsv", rows),
                                  write("valid.tsv", "spam\tbuy now\nham\tsee you\n"));
  EXPECT_EQ(warnings(load_run_config(path, {"train.batch_size=1000000000000"})),
            std::vector<std::string>{
                "warning: train.batch_size 1000000000000 (--set train.batch_size=1000000000000) "
                "is more than the 6 training examples: every step trains on all 6 at once"});
  EXPECT_EQ(warnings(load_run_config(path, {"train.batch_size=6"})), std::vector<std::string>{});
}

}  // namespace
}  // namespace heed::train
