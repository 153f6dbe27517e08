#pragma once
// Collators: a list of examples -> one padded Batch, per training objective. Each follows
// the semantics of the transformers collator of the same job (DataCollatorForLanguage-
// Modeling, DataCollatorForSeq2Seq, DataCollatorWithPadding, DataCollatorForToken-
// Classification). Randomness comes from the Rng passed in, so the caller decides the stream.
#include <cstdint>
#include <span>
#include <vector>

#include "data/batch.h"
#include "data/rng.h"

namespace heed::data {

class WordPieceTokenizer;
class TextTokenizer;

// The ids a collator needs, looked up from the tokenizer (never hard-coded).
struct TokenIds {
  int32_t pad_id = 0;
  int32_t mask_id = -1;              // MLM only
  int32_t vocab_size = 0;            // MLM's random replacements are drawn from [0, vocab_size)
  std::vector<int32_t> special_ids;  // never selected for masking
  static TokenIds from(const WordPieceTokenizer& tokenizer);
  static TokenIds from(const TextTokenizer& tokenizer);  // an encoder's: WordPiece or RoBERTa's
};

struct MlmOptions {
  double mlm_probability = 0.15;     // share of non-special, non-pad positions selected
  double mask_replace_prob = 0.8;    // of the selected: replaced by [MASK]
  double random_replace_prob = 0.1;  // of the selected: replaced by a uniform random id
};                                   // the rest of the selected keep their token

// Masked LM: labels are the original ids at selected positions, -100 elsewhere.
Batch collate_mlm(std::span<const Example> examples, const TokenIds& ids, const MlmOptions& options,
                  Rng& rng);

// Causal LM: each example holds T+1 consecutive tokens; inputs are the first T, labels the
// last T (the next tokens). Padding gets label -100.
Batch collate_causal_lm(std::span<const Example> examples, int32_t pad_id);

struct Seq2SeqIds {
  int32_t pad_id = 0;            // encoder padding
  int32_t decoder_pad_id = 0;    // decoder padding
  int32_t decoder_start_id = 0;  // first decoder input
  int32_t eos_id = 0;            // last label
};
// Seq2seq: decoder_input_ids = [start] + target, labels = target + [eos].
Batch collate_seq2seq(std::span<const Example> examples, const Seq2SeqIds& ids);

// Sequence classification: labels [B, 1] from Example::label.
Batch collate_classification(std::span<const Example> examples, int32_t pad_id);

// Token classification: labels [B, T] from Example::token_labels, -100 on padding.
Batch collate_token_classification(std::span<const Example> examples, int32_t pad_id);

}  // namespace heed::data
