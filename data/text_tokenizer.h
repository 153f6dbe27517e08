#pragma once
// A run's or a checkpoint's tokenizer, whichever kind it is (WordPiece, byte-level BPE,
// SentencePiece or characters), behind one set of questions, so that code serving every kind
// asks instead of branching. Code that needs WordPiece itself (masked-LM, classification,
// fill-mask) asks for it, and another kind gets a clear error.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "data/bpe_tokenizer.h"
#include "data/char_tokenizer.h"
#include "data/sentencepiece_tokenizer.h"
#include "data/wordpiece.h"

namespace heed::data {

class TextTokenizer {
 public:
  explicit TextTokenizer(WordPieceTokenizer wordpiece) : kind_(std::move(wordpiece)) {}
  explicit TextTokenizer(CharTokenizer chars) : kind_(std::move(chars)) {}
  explicit TextTokenizer(BpeTokenizer bpe) : kind_(std::move(bpe)) {}
  explicit TextTokenizer(SentencePieceTokenizer pieces) : kind_(std::move(pieces)) {}
  // A model directory's tokenizer: tokenizer_config.json's tokenizer_class says which kind
  // (BertTokenizer, GPT2Tokenizer / RobertaTokenizer / BartTokenizer, T5Tokenizer,
  // HeedCharTokenizer); a directory with only vocab.txt is BERT's.
  static TextTokenizer load(const std::string& dir);
  // Writes the tokenizer files into a model directory, those Hugging Face's tokenizer of the
  // kind reads; `max_length` and `truncation` go to tokenizer_config.json.
  void save(const std::string& dir, int64_t max_length, Truncation truncation) const;

  // "wordpiece", "bpe", "sentencepiece" or "char": tokenizer.type's names.
  std::string_view type_name() const;
  int64_t vocab_size() const;
  // Ids of the text alone, without special tokens.
  std::vector<int32_t> encode(std::string_view text) const;
  // Ids of one line of a corpus that is read as a stream of text (a language model's): for a
  // byte-level BPE the line ends in its "\n", which the tokenizer spells, so the stream
  // reproduces the text; the other kinds have no spelling for line ends.
  std::vector<int32_t> encode_corpus_line(std::string_view line) const;
  // Ids as a model input: [CLS] text [SEP] for WordPiece, <s> text </s> for RoBERTa's BPE,
  // text </s> for SentencePiece (as T5), the plain ids for GPT-2's BPE and characters.
  std::vector<int32_t> encode_source(std::string_view text) const;
  // Ids of a target text: a character tokenizer may split targets differently.
  std::vector<int32_t> encode_target(std::string_view text) const;
  // Text of the ids, special tokens dropped; decode_source joins as sources are split.
  std::string decode(std::span<const int32_t> ids) const;
  std::string decode_source(std::span<const int32_t> ids) const;
  // The vocabulary entry of one id, in the tokenizer's own spelling ("##ing", "Ġthe", "▁the").
  std::string token(int32_t id) const;

  // The id that pads a batch: the tokenizer's pad token, else (GPT-2) its end token.
  int32_t pad_id() const;
  // Where a sequence starts and ends: [CLS] and [SEP] for WordPiece, bos and eos otherwise
  // (both <|endoftext|> for GPT-2). A tokenizer without one throws naming the role.
  int32_t start_id() const;
  int32_t end_id() const;
  bool is_special(int32_t id) const;
  // T5's sentinel ids, <extra_id_0> first (SentencePiece with extra_ids); empty for the rest.
  std::vector<int32_t> sentinel_ids() const;
  // A fingerprint of everything that decides the ids (token caches key on it).
  uint64_t fingerprint() const;

  // --- what an encoder's tasks ask (BERT's WordPiece, RoBERTa's BPE; others throw) ---
  // The [MASK] / <mask> id.
  int32_t mask_id() const;
  // Every id of a special token, sorted.
  std::vector<int32_t> special_ids() const;
  // Model inputs of a text or a pair: [CLS] a [SEP] (b [SEP]) with token types, or RoBERTa's
  // <s> a </s>(</s> b </s>); cut to max_length (0: no limit) from `side`.
  Encoding encode_inputs(std::string_view a, std::optional<std::string_view> b = std::nullopt,
                         size_t max_length = 0, Truncation side = Truncation::kHead) const;
  // The same from ids without special tokens.
  Encoding build_inputs(std::vector<int32_t> a, std::optional<std::vector<int32_t>> b = {},
                        size_t max_length = 0, Truncation side = Truncation::kHead) const;
  // The words of a text as token classification splits it (BERT's basic tokenizer; RoBERTa:
  // whitespace).
  std::vector<std::string> split_words(std::string_view text) const;
  // Appends the ids of one word of a pre-split sentence: its word pieces, or for RoBERTa the
  // word with a space before it (Hugging Face's is_split_into_words with add_prefix_space).
  void append_word_ids(std::string_view word, std::vector<int32_t>& out) const;

  // The WordPiece tokenizer; another kind throws "WHO needs a WordPiece tokenizer".
  const WordPieceTokenizer& wordpiece(std::string_view who) const;

 private:
  std::variant<WordPieceTokenizer, CharTokenizer, BpeTokenizer, SentencePieceTokenizer> kind_;
};

}  // namespace heed::data
