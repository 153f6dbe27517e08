#pragma once
// The Unicode facts WordPiece needs (categories, NFD/NFC, lower-casing), answered by ICU so
// that they follow the Unicode tables rather than hand-written ranges; strict UTF-8 is io's.
#include <string>
#include <string_view>

#include "io/utf8.h"

namespace heed::data {

using io::append_utf8;
using io::decode_utf8;
using io::encode_utf8;
using io::find_invalid_utf8;

// BERT's character classes (tokenization_bert.py / tokenizers' bert normalizer).
bool is_bert_whitespace(char32_t cp);   // \t \n \r and category Zs
bool is_bert_control(char32_t cp);      // category C* except \t \n \r
bool is_bert_punctuation(char32_t cp);  // ASCII 33-47, 58-64, 91-96, 123-126, or category P*
bool is_cjk_ideograph(char32_t cp);     // the CJK Unified Ideograph blocks BERT isolates
bool is_split_whitespace(char32_t cp);  // what Python's str.split() splits on (White_Space)
bool is_nonspacing_mark(char32_t cp);   // category Mn

std::u32string to_nfd(std::u32string_view text);
std::u32string to_nfc(std::u32string_view text);
// Full Unicode lower-casing (one code point may become several; final sigma handled), as
// Python's str.lower() does.
std::u32string to_lower(std::u32string_view text);
// NFD, then every Mn code point dropped (BertTokenizer._run_strip_accents).
std::u32string strip_accents(std::u32string_view text);

}  // namespace heed::data
