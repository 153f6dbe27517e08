#pragma once
// A model directory's tokenizer, in the files Hugging Face uses: vocab.txt plus
// tokenizer_config.json ({"tokenizer_class": "BertTokenizer", "do_lower_case": ...}) for
// WordPiece; heed's character tokenizer as char_tokenizer.json (tokenizer_class
// "HeedCharTokenizer"). A WordPiece directory also records how training cut long inputs:
// model_max_length and truncation_side ("right" keeps the head, "left" the tail), the keys
// transformers reads, plus heed_truncation for the side transformers has no name for
// (head_tail).
#include <cstdint>
#include <optional>
#include <string>

#include "data/char_tokenizer.h"
#include "data/sentencepiece_tokenizer.h"
#include "data/wordpiece.h"

namespace heed::data {

void save_wordpiece(const data::WordPieceTokenizer& tokenizer, const std::string& dir,
                    int64_t model_max_length,
                    data::Truncation truncation = data::Truncation::kHead);
void save_char_tokenizer(const data::CharTokenizer& tokenizer, const std::string& dir);
// spiece.model, a tokenizer_config.json that transformers' T5Tokenizer reads (extra_ids: the
// tokenizer's sentinels, 0 for none; its special pieces as the *_token keys) and
// special_tokens_map.json.
void save_sentencepiece(const data::SentencePieceTokenizer& tokenizer, const std::string& dir,
                        int64_t model_max_length);
// A T5Tokenizer directory's: spiece.model with tokenizer_config.json's extra_ids sentinels (100,
// T5Tokenizer's default, when it names none).
data::SentencePieceTokenizer load_sentencepiece(const std::string& dir);

// "BertTokenizer" or "HeedCharTokenizer"; throws naming the directory if there is none.
std::string tokenizer_class(const std::string& dir);
data::WordPieceTokenizer load_wordpiece(const std::string& dir);
data::CharTokenizer load_char_tokenizer(const std::string& dir);

// How inputs were cut for the model in `dir`: model_max_length when the directory gives a
// usable one (transformers writes a huge sentinel when there is none), and the side.
struct TruncationSettings {
  std::optional<int64_t> max_length;
  data::Truncation side = data::Truncation::kHead;
};
TruncationSettings load_truncation(const std::string& dir);

}  // namespace heed::data
