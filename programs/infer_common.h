#pragma once
// What every `infer` subcommand shares: loading a checkpoint of the right family with its
// tokenizer, reading the input texts, checking lengths against the model's positions.
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "data/text_tokenizer.h"
#include "decode/generation.h"
#include "nn/models/bert.h"
#include "nn/models/gpt.h"
#include "nn/models/pretrained.h"
#include "programs/infer_commands.h"

namespace heed::infer {

// A loaded model directory.
struct Checkpoint {
  std::string dir;
  std::shared_ptr<nn::PretrainedModel> model;  // in eval mode
  data::TextTokenizer tokenizer;
};

// Loads args.checkpoint, with args.adapter (or the checkpoint's own adapter) applied, if the
// model's config.json names one of `architectures`; otherwise throws "checkpoint DIR is a X;
// COMMAND needs a Y". A tokenizer whose vocabulary is not config.json's vocab_size throws,
// naming both files and sizes, before any text is run.
Checkpoint load_checkpoint(const CommonArgs& args, const std::string& command,
                           const std::vector<std::string>& architectures);

// Throws "--top-k: must be at most the vocabulary size, V (checkpoint DIR), got K" when k > V.
void check_top_k(int64_t top_k, const Checkpoint& c);

// Says on stderr that a generation stopped because the sequence filled the model's `positions`
// (config field `field`), not at an eos or the requested count: "infer COMMAND: [text N:]
// stopped after K new tokens: the model's context of P positions (FIELD) is full". Text N is
// named when there are several.
void note_context_full(const std::string& command, size_t text_index, size_t num_texts,
                       size_t new_tokens, int64_t positions, const std::string& field);

// The texts to run on: `text` itself, or every line of stdin when it is "-". An empty text
// throws (naming the stdin line).
std::vector<std::string> input_texts(const std::string& text, const std::string& what);

// Throws "WHAT is N tokens; the model takes at most LIMIT (FIELD)" when n > limit.
void check_length(size_t n, int64_t limit, const std::string& what, const std::string& field);

// check_length for an encoder (BERT, RoBERTa) on `n` tokens with their special tokens.
// RoBERTa's positions start after the padding id, so its table holds fewer tokens; the message
// names the fields the limit comes from.
void check_encoder_length(size_t n, const nn::BertBase& model);

// An encoder's inputs for one encoded text (a batch of one, no padding): the ids, a mask of
// ones and the token types (zeros when the encoding has none).
nn::ModelInputs encoder_inputs(const data::Encoding& enc);

// `ids` after the GPT's bos token. A GPT conditions every text on it, which is how heed's
// causal-LM data presents a document (after the separator that ends the previous one); it also
// gives the first real token a context, so that score can rate it.
std::vector<int32_t> with_bos(const nn::GPT& model, std::vector<int32_t> ids);

// A batch of one row of token ids, [1, T] (i64), as the models take input ids.
Tensor ids_row(const std::vector<int32_t>& ids);

// Prints a probability or log-probability the way plain output shows them.
std::string fixed4(double x);

// infer score on an encoder-decoder checkpoint: each --target token's log-probability given
// --text (run_score hands it over).
void run_score_seq2seq(const ScoreArgs& args, const Checkpoint& checkpoint, std::ostream& out);

// A score: with `json`, one line of `fields` plus the scored tokens, total_log_prob, num_tokens
// and perplexity; otherwise a "token<TAB>id<TAB>log-prob" line per scored id and a perplexity
// line, after a blank line unless it is the first.
void write_score(std::ostream& out, bool json, nlohmann::json fields,
                 const data::TextTokenizer& tok, const std::vector<int32_t>& ids,
                 const decode::ScoreResult& s, bool first);

// [{"token": "▁the", "id": 5, "log_prob": -1.2}, ...] for scored or generated ids.
nlohmann::json tokens_json(const data::TextTokenizer& tok, const std::vector<int32_t>& ids,
                           const std::vector<double>& log_probs);

}  // namespace heed::infer
