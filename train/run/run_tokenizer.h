#pragma once
// The tokenizer a run's config names: loaded from tokenizer.vocab or init_from, or trained from
// data.train (WordPiece, byte-level BPE, SentencePiece) or built from it (characters) and
// written where with_written_vocabulary says.
#include <string>

#include "data/text_tokenizer.h"
#include "train/config/config.h"
#include "train/tasks/task_data.h"

namespace heed::train {

data::TextTokenizer tokenizer_for(const RunConfig& config, const Log& log);

// Where a trained tokenizer goes when tokenizer.vocab does not say: output_dir's vocab.txt,
// bpe/, spiece.model or char_tokenizer.json.
std::string default_vocab_path(const RunConfig& config);

}  // namespace heed::train
