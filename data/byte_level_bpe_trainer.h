#pragma once
// Trains a byte-level BPE the way Hugging Face tokenizers' BpeTrainer does under a ByteLevel
// pre-tokenizer (ByteLevelBPETokenizer.train, Tokenizer::train_from_files), merge for merge:
// each line of the corpus (with its "\n") is cut into words by GPT-2's pattern and spelled in
// the 256 byte symbols; the vocabulary starts with the special tokens and the alphabet (sorted
// by code point), then grows by the most frequent adjacent pair (ties: the pair of smaller ids)
// until it has vocab_size tokens or the best pair occurs fewer than max(1, min_frequency)
// times. Hugging Face's quirks are kept, so that the files it would write come out byte for
// byte; the .cpp says which and why.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace heed::data {

struct ByteLevelBpeTrainOptions {
  int32_t vocab_size = 30000;  // Hugging Face's default
  // ByteLevelBPETokenizer.train's default; BpeTrainer's own is 0 (which acts as 1).
  int64_t min_frequency = 2;
  std::vector<std::string> special_tokens;  // ids 0.. in this order; never merged
  // As the ByteLevel pre-tokenizer's: a space before each line that does not start with one.
  bool add_prefix_space = false;
  // All 256 byte symbols in the vocabulary (ByteLevel.alphabet(), as ByteLevelBPETokenizer
  // passes), so that any text has a spelling; false: only the symbols the corpus uses.
  bool initial_alphabet = true;
};

struct TrainedByteLevelBpe {
  std::vector<std::string> tokens;  // in id order, spelled as in vocab.json ("Ġthe")
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order, as in merges.txt
};

// Trains on text files, read line by line as Hugging Face reads them. A file that cannot be
// read, or a line that is not valid UTF-8, throws heed::Error naming the file (and line); so
// does a vocab_size below the special tokens plus the alphabet, naming that minimum.
TrainedByteLevelBpe train_byte_level_bpe(std::span<const std::string> files,
                                         const ByteLevelBpeTrainOptions& options);
// Trains on texts in memory, each pre-tokenized whole as train_from_iterator feeds them (a
// text is not cut at its newlines; pass lines with their "\n" to match training on a file).
TrainedByteLevelBpe train_byte_level_bpe_on_texts(std::span<const std::string> texts,
                                                  const ByteLevelBpeTrainOptions& options);

// Writes dir/vocab.json (one compact JSON object, tokens in id order) and dir/merges.txt
// ("#version: 0.2", then "left right" per line), byte for byte as Hugging Face's BPE
// model.save writes them, each atomically (io/atomic_file.h). Creates `dir` if needed.
void save_byte_level_bpe(const TrainedByteLevelBpe& bpe, const std::string& dir);

}  // namespace heed::data
