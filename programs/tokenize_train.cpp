#include "programs/tokenize_train.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "base/error.h"
#include "data/bpe_tokenizer.h"
#include "data/byte_level_bpe_trainer.h"
#include "data/sentencepiece_tokenizer.h"
#include "data/tokenizer_io.h"
#include "data/wordpiece_trainer.h"
#include "io/atomic_file.h"

namespace heed::programs {
namespace {

namespace fs = std::filesystem;

void train_wordpiece(const VocabularyTraining& t) {
  data::WordPieceTrainer trainer({.vocab_size = static_cast<size_t>(t.vocab_size),
                                  .min_frequency = t.min_frequency,
                                  .limit_alphabet = static_cast<size_t>(t.limit_alphabet),
                                  .lowercase = t.lowercase});
  std::string text;
  size_t n = 0;
  while (std::getline(std::cin, text)) {
    ++n;
    try {
      trainer.add_text(text);
    } catch (const Error& e) {
      fail("stdin:{}: {}", n, e.what());
    }
  }
  trainer.train().save(t.output);
}

// The two library trainers read files: stdin is copied into one, removed afterwards.
class SpooledStdin {
 public:
  SpooledStdin() {
    std::string pattern = (fs::temp_directory_path() / "heed-tokenize-XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    HEED_CHECK(fd >= 0, "cannot create a temporary file in {}", fs::temp_directory_path().string());
    ::close(fd);
    path_ = pattern;
    std::string all(std::istreambuf_iterator<char>(std::cin), {});
    io::write_file_atomically(path_, all);
  }
  ~SpooledStdin() {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  SpooledStdin(const SpooledStdin&) = delete;
  SpooledStdin& operator=(const SpooledStdin&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void train_bpe(const VocabularyTraining& t) {
  SpooledStdin input;
  // RoBERTa's special tokens at its ids (<s> 0, <pad> 1, </s> 2, <unk> 3, then <mask>), as
  // `train` makes them for model.arch roberta, so that RobertaConfig's defaults hold.
  const bool roberta = t.arch == "roberta";
  const data::TrainedByteLevelBpe trained = data::train_byte_level_bpe(
      std::vector<std::string>{input.path()},
      {.vocab_size = static_cast<int32_t>(t.vocab_size),
       .min_frequency = t.min_frequency,
       .special_tokens = roberta
                             ? std::vector<std::string>{"<s>", "<pad>", "</s>", "<unk>", "<mask>"}
                             : std::vector<std::string>{"<|endoftext|>"}});
  fs::create_directories(t.output);
  data::save_byte_level_bpe(trained, t.output);
  // The class names the special tokens' roles to load().
  if (roberta) {
    io::write_file_atomically((fs::path(t.output) / "tokenizer_config.json").string(),
                              R"({"tokenizer_class": "RobertaTokenizer"})");
  }
  // The roles, in the files transformers reads (RoBERTa's 512 tokens, GPT-2's 1,024).
  data::BpeTokenizer::load(t.output).save(t.output, roberta ? 512 : 1024);
}

void train_sentencepiece(const VocabularyTraining& t) {
  SpooledStdin input;
  const fs::path out(t.output);
  HEED_CHECK(out.extension() == ".model",
             "--train-vocab {}: a SentencePiece model is written as a .model file", t.output);
  if (out.has_parent_path()) fs::create_directories(out.parent_path());
  data::SentencePieceTrainOptions o{.input = input.path(),
                                    .model_prefix = (out.parent_path() / out.stem()).string(),
                                    .model_type = t.model_type,
                                    .vocab_size = static_cast<int32_t>(t.vocab_size)};
  data::use_t5_special_ids(o);
  data::SentencePieceTokenizer::train(o);
}

}  // namespace

void train_vocabulary_from_stdin(const VocabularyTraining& t) {
  HEED_CHECK(t.arch == "gpt2" || t.type == "bpe",
             "--arch {}: only a byte-level BPE (--type bpe) is trained for an arch; a {} has its "
             "own special tokens",
             t.arch, t.type);
  if (t.type == "wordpiece") return train_wordpiece(t);
  if (t.type == "bpe") return train_bpe(t);
  if (t.type == "sentencepiece") return train_sentencepiece(t);
  fail("--type {}: must be wordpiece, bpe or sentencepiece", t.type);
}

}  // namespace heed::programs
