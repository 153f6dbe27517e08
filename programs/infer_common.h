#pragma once
// What every `infer` subcommand shares: loading a checkpoint of the right family with its
// tokenizer, reading the input texts, checking lengths against the model's positions.
#include <memory>
#include <string>
#include <vector>

#include "data/text_tokenizer.h"
#include "nn/models/pretrained.h"

namespace heed::infer {

// A loaded model directory.
struct Checkpoint {
  std::string dir;
  std::shared_ptr<nn::PretrainedModel> model;  // in eval mode
  data::TextTokenizer tokenizer;
};

// Loads `dir` if its config.json names one of `architectures`; otherwise throws
// "checkpoint DIR is a X; COMMAND needs a Y".
Checkpoint load_checkpoint(const std::string& dir, const std::string& command,
                           const std::vector<std::string>& architectures);

// The texts to run on: `text` itself, or every line of stdin when it is "-". An empty text
// throws (naming the stdin line).
std::vector<std::string> input_texts(const std::string& text, const std::string& what);

// Throws "WHAT is N tokens; the model takes at most LIMIT (FIELD)" when n > limit.
void check_length(size_t n, int64_t limit, const std::string& what, const std::string& field);

// Prints a probability or log-probability the way plain output shows them.
std::string fixed4(double x);

}  // namespace heed::infer
