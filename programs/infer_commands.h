#pragma once
// The `infer` subcommands. Each writes plain text, or one JSON object per input text (JSON
// Lines) with --json, to `out`, and throws heed::Error on bad input.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "data/wordpiece.h"

namespace heed::infer {

struct CommonArgs {
  std::string checkpoint;
  // A LoRA adapter directory (PEFT's files) to apply to the checkpoint; empty: the checkpoint's
  // own adapter_config.json when it has one (a LoRA run's checkpoint), else none.
  std::string adapter;
  bool json = false;
};

struct FillMaskArgs : CommonArgs {
  std::string text;
  int64_t top_k = 5;  // at most the vocabulary size
};
void run_fill_mask(const FillMaskArgs& args, std::ostream& out);

struct ClassifyArgs : CommonArgs {
  std::string text;
  std::string text_pair;  // empty: a single text
  // Unset: as the checkpoint's training cut its inputs (tokenizer_config.json's
  // model_max_length and side). max_length 0: no truncation.
  std::optional<int64_t> max_length;
  std::optional<data::Truncation> truncation;
};
void run_classify(const ClassifyArgs& args, std::ostream& out);

// Writes the checkpoint with its adapter merged (W + lora_alpha / r * B A) as a plain model
// directory: config.json, model.safetensors and the tokenizer's files.
struct MergeArgs : CommonArgs {
  std::string out;
};
void run_merge(const MergeArgs& args, std::ostream& out);

struct GenerateArgs : CommonArgs {
  std::string prompt;
  // Generation also stops when the model's context is full, and says so on stderr.
  int64_t max_new_tokens = 50;
  double temperature = 1.0;
  int64_t top_k = 0;  // 0: off; at most the vocabulary size
  double top_p = 1.0;
  uint64_t seed = 0;
  bool greedy = false;
};
void run_generate(const GenerateArgs& args, std::ostream& out);

struct ScoreArgs : CommonArgs {
  std::string text;
  std::string target;  // an encoder-decoder's: the output to score given --text
};
void run_score(const ScoreArgs& args, std::ostream& out);

struct TranslateArgs : CommonArgs {
  static constexpr int64_t kDefaultMaxNewTokens = 100;
  std::string text;
  int64_t num_beams = 1;
  // At most the model's positions but one (the decoder start token takes one). Unset: the
  // default, or what the positions allow if fewer.
  std::optional<int64_t> max_new_tokens;
  // Sampling instead of greedy or beam search (Hugging Face's do_sample), after temperature,
  // top-k and top-p.
  bool do_sample = false;
  double temperature = 1.0;
  int64_t top_k = 0;
  double top_p = 1.0;
  uint64_t seed = 0;
};
void run_translate(const TranslateArgs& args, std::ostream& out);

struct AttentionArgs : CommonArgs {
  std::string text;
  std::string text_pair;  // BERT: the second text of a pair
  std::string target;     // encoder-decoder: the decoder's text; empty: the model's own output
  // The page (viz/attention.html filled in); with --json the probabilities as JSON, to this
  // file or, when empty, to `out`.
  std::string out;
};
void run_attention(const AttentionArgs& args, std::ostream& out);

}  // namespace heed::infer
