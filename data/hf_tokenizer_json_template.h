#pragma once
// The post-processor templates that reading and writing tokenizer.json both build: BERT's,
// RoBERTa's, and the plain one that adds nothing. Internal to the hf_tokenizer_json_*.cpp files.
#include <cstdint>

#include "data/hf_tokenizer_json.h"

namespace heed::data::hf_tokenizer_json {

inline constexpr auto kA = TemplatePiece::Kind::kSequenceA;
inline constexpr auto kB = TemplatePiece::Kind::kSequenceB;

TemplatePiece sequence_piece(TemplatePiece::Kind kind, int32_t type_id);

// [CLS] $A [SEP] and [CLS] $A [SEP] $B:1 [SEP]:1, as BertProcessing applies them; RoBERTa's
// <s> $A </s> and <s> $A </s> </s> $B </s>, all of type 0.
void set_bert_like(PostProcessor& p, const TokenWithId& cls, const TokenWithId& sep, bool roberta);

// $A, and $A $B:1: what a null or ByteLevel post-processor applies.
void set_plain(PostProcessor& p);

}  // namespace heed::data::hf_tokenizer_json
