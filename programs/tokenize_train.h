#pragma once
// tokenize --train-vocab: trains a tokenizer of any kind on the lines of stdin.
#include <cstdint>
#include <string>

namespace heed::programs {

struct VocabularyTraining {
  std::string type = "wordpiece";  // wordpiece, bpe or sentencepiece
  std::string output;              // vocab.txt, a BPE directory, or a .model file
  int64_t vocab_size = 30000;
  int64_t min_frequency = 2;           // wordpiece, bpe
  std::string arch = "gpt2";           // bpe: whose special tokens, gpt2 or roberta
  int64_t limit_alphabet = 1000;       // wordpiece
  bool lowercase = true;               // wordpiece
  std::string model_type = "unigram";  // sentencepiece
};

// Reads stdin to its end and writes the trained tokenizer to `t.output`.
void train_vocabulary_from_stdin(const VocabularyTraining& t);

}  // namespace heed::programs
