#pragma once
// A run's or a checkpoint's tokenizer, WordPiece or characters, behind one set of questions, so
// that code serving both asks instead of branching. Code that needs WordPiece itself
// (masked-LM, classification, fill-mask) asks for it, and a character tokenizer gets a clear
// error.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/char_tokenizer.h"
#include "data/wordpiece.h"

namespace heed::data {

class TextTokenizer {
 public:
  explicit TextTokenizer(WordPieceTokenizer wordpiece) : wordpiece_(std::move(wordpiece)) {}
  explicit TextTokenizer(CharTokenizer chars) : chars_(std::move(chars)) {}
  // A model directory's tokenizer (its tokenizer_config.json says which kind).
  static TextTokenizer load(const std::string& dir);
  // Writes the tokenizer files into a model directory; `max_length` and `truncation` go to a
  // WordPiece tokenizer_config.json.
  void save(const std::string& dir, int64_t max_length, Truncation truncation) const;

  int64_t vocab_size() const;
  // Ids of the text alone, without special tokens.
  std::vector<int32_t> encode(std::string_view text) const;
  // Ids as an encoder input: [CLS] text [SEP] for WordPiece, the plain ids for characters.
  std::vector<int32_t> encode_source(std::string_view text) const;
  // Ids of a target text: a character tokenizer may split targets differently.
  std::vector<int32_t> encode_target(std::string_view text) const;
  // Text of the ids, special tokens dropped; decode_source joins as sources are split.
  std::string decode(std::span<const int32_t> ids) const;
  std::string decode_source(std::span<const int32_t> ids) const;
  // The vocabulary entry of one id.
  const std::string& token(int32_t id) const;

  int32_t pad_id() const;
  // Where a sequence starts and ends: [CLS] and [SEP] for WordPiece, bos and eos for characters.
  int32_t start_id() const;
  int32_t end_id() const;

  // The WordPiece tokenizer; for a character one throws "WHO needs a WordPiece tokenizer".
  const WordPieceTokenizer& wordpiece(std::string_view who) const;

 private:
  std::optional<WordPieceTokenizer> wordpiece_;  // exactly one of the two
  std::optional<CharTokenizer> chars_;
};

}  // namespace heed::data
