#pragma once
// Trains a WordPiece vocabulary the way Hugging Face tokenizers' BertWordPieceTokenizer does:
// words come from BERT's basic tokenizer; the vocabulary starts with the special tokens, the
// most frequent `limit_alphabet` characters (sorted by code point) and their "##"
// continuation forms, then grows by merging the most frequent adjacent pair of pieces (ties:
// the pair of smaller ids) until `vocab_size` tokens or a best pair below `min_frequency`.
// A merge of "##a" + "##b" gives "##ab"; of "a" + "##b" gives "ab". Deterministic for a corpus.
// A vocab_size below the special tokens and the alphabet (with its ## forms) throws, naming
// that minimum.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/vocab.h"
#include "data/wordpiece.h"

namespace heed::data {

struct WordPieceTrainerOptions {
  size_t vocab_size = 30000;
  int64_t min_frequency = 2;
  size_t limit_alphabet = 1000;
  std::vector<std::string> special_tokens{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  bool lowercase = true;  // the normalization of the tokenizer the vocabulary is for
};

class WordPieceTrainer {
 public:
  explicit WordPieceTrainer(WordPieceTrainerOptions options = {});
  // Counts the words of one line (or any text) of the corpus.
  void add_text(std::string_view text);
  Vocab train() const;
  const std::unordered_map<std::string, int64_t>& word_counts() const { return word_counts_; }

 private:
  WordPieceTrainerOptions options_;
  WordPieceTokenizer normalizer_;  // only its basic tokenizer is used
  std::unordered_map<std::string, int64_t> word_counts_;
};

}  // namespace heed::data
