#pragma once
// A model directory's tokenizer, in the files Hugging Face uses: vocab.txt plus
// tokenizer_config.json ({"tokenizer_class": "BertTokenizer", "do_lower_case": ...}) for
// WordPiece; heed's character tokenizer as char_tokenizer.json (tokenizer_class
// "HeedCharTokenizer").
#include <string>

#include "data/char_tokenizer.h"
#include "data/wordpiece.h"

namespace heed::train {

void save_wordpiece(const data::WordPieceTokenizer& tokenizer, const std::string& dir,
                    int64_t model_max_length);
void save_char_tokenizer(const data::CharTokenizer& tokenizer, const std::string& dir);

// "BertTokenizer" or "HeedCharTokenizer"; throws naming the directory if there is none.
std::string tokenizer_class(const std::string& dir);
data::WordPieceTokenizer load_wordpiece(const std::string& dir);
data::CharTokenizer load_char_tokenizer(const std::string& dir);

}  // namespace heed::train
