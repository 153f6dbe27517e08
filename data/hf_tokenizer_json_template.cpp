// The post-processor templates that reading and writing tokenizer.json both build.
#include "data/hf_tokenizer_json_template.h"

namespace heed::data::hf_tokenizer_json {
namespace {

TemplatePiece special_piece(const TokenWithId& token, int32_t type_id) {
  return {.kind = TemplatePiece::Kind::kSpecial,
          .type_id = type_id,
          .name = token.token,
          .tokens = {token}};
}

}  // namespace

TemplatePiece sequence_piece(TemplatePiece::Kind kind, int32_t type_id) {
  return {.kind = kind, .type_id = type_id, .name = {}, .tokens = {}};
}

void set_bert_like(PostProcessor& p, const TokenWithId& cls, const TokenWithId& sep, bool roberta) {
  const int32_t b_type = roberta ? 0 : 1;
  p.single = {special_piece(cls, 0), sequence_piece(kA, 0), special_piece(sep, 0)};
  p.pair = {special_piece(cls, 0), sequence_piece(kA, 0), special_piece(sep, 0)};
  if (roberta) p.pair.push_back(special_piece(sep, 0));
  p.pair.push_back(sequence_piece(kB, b_type));
  p.pair.push_back(special_piece(sep, b_type));
}

void set_plain(PostProcessor& p) {
  p.single = {sequence_piece(kA, 0)};
  p.pair = {sequence_piece(kA, 0), sequence_piece(kB, 1)};
}

}  // namespace heed::data::hf_tokenizer_json
