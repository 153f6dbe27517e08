// What each task picks from a line of data.train to train a WordPiece vocabulary on.
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "train/tasks/task.h"

namespace heed::train {
namespace {

using Texts = std::vector<std::string_view>;

TEST(Tasks, VocabularyTextsAreTheTextColumnsOfEachTasksFiles) {
  EXPECT_EQ(task_for(Task::kMlm).vocabulary_texts("a line\tof text"), Texts{"a line\tof text"});
  EXPECT_EQ(task_for(Task::kClm).vocabulary_texts("plain text"), Texts{"plain text"});
  // label<TAB>text (and a pair's second text): never the label.
  EXPECT_EQ(task_for(Task::kClassification).vocabulary_texts("spam\tbuy now\tcheap"),
            (Texts{"buy now", "cheap"}));
  // word<TAB>tag: never the tag.
  EXPECT_EQ(task_for(Task::kTokenClassification).vocabulary_texts("dogs\tNNS"), Texts{"dogs"});
  // source<TAB>target: both sides share the vocabulary.
  EXPECT_EQ(task_for(Task::kSeq2Seq).vocabulary_texts("the house\tdas haus"),
            (Texts{"the house", "das haus"}));
}

}  // namespace
}  // namespace heed::train
