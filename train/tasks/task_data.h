#pragma once
// What a run reads before its first step: the tokenizer, the datasets of each split and
// their collator, and a classifier's label names.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/char_tokenizer.h"
#include "data/datasets.h"
#include "data/loader.h"
#include "data/wordpiece.h"

namespace heed::train {

using Log = std::function<void(const std::string&)>;

struct TaskData {
  // Exactly one of the two, as tokenizer.type says.
  std::optional<data::WordPieceTokenizer> wordpiece;
  std::optional<data::CharTokenizer> chars;
  std::shared_ptr<const data::Dataset> train, valid, test;
  data::CollateFn collate;
  std::vector<std::string> labels;  // classification label names

  int64_t vocab_size() const { return wordpiece ? wordpiece->vocab_size() : chars->vocab_size(); }
};

}  // namespace heed::train
