#pragma once
// What a run reads before its first step: the tokenizer, the datasets of each split and
// their collator, and a classifier's label names.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/datasets.h"
#include "data/loader.h"
#include "data/text_tokenizer.h"

namespace heed::train {

using Log = std::function<void(const std::string&)>;

struct TaskData {
  std::shared_ptr<const data::TextTokenizer> tokenizer;  // WordPiece or characters
  std::shared_ptr<const data::Dataset> train, valid, test;
  data::CollateFn collate;
  std::vector<std::string> labels;  // classification label names
};

}  // namespace heed::train
