#pragma once
// SentencePiece models (T5's, ALBERT's and mT5's spiece.model) loaded, run and trained through
// Google's libsentencepiece: the model is a serialized protobuf whose normalizer and segmenter
// only the library implements faithfully, so heed never parses or re-implements it
// (REFERENCE.md 10). The library's headers stay in the .cpp; errors it reports come back as
// heed::Error with its own reason.
//
// encode() adds no special tokens (no </s>, no <s>): as with ByteLevelBpe, they are the
// business of whoever puts the ids into a sequence.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace heed::data {

// What SentencePieceTrainer is told, under the library's own option names. The defaults are
// the library's, except the seed and thread count, fixed so that a training is repeatable.
struct SentencePieceTrainOptions {
  std::string input;                   // the corpus, one sentence per line
  std::string model_prefix;            // writes <prefix>.model (and the readable <prefix>.vocab)
  std::string model_type = "unigram";  // "unigram" or "bpe"
  int32_t vocab_size = 8000;
  double character_coverage = 0.9995;
  // Pieces the encoder never splits ("<sep>"). None may contain a comma: the library takes
  // them as one comma-separated list.
  std::vector<std::string> user_defined_symbols;
  int32_t pad_id = -1;  // -1: the model has no such piece
  int32_t unk_id = 0;   // every model needs one
  int32_t bos_id = 1;
  int32_t eos_id = 2;
  // The library draws random numbers (sentence sampling, EM initialisation) from one global
  // generator: seeding it and training on one thread gives the same model run after run.
  uint32_t seed = 1234;
  int32_t num_threads = 1;
  bool log_progress = false;  // the library's INFO lines on stderr
};

// T5's special pieces (<pad> 0, </s> 1, <unk> 2) and a <s> 3: the layout of the models heed
// trains for a run or `tokenize --train-vocab`, which transformers' T5Tokenizer reads.
inline void use_t5_special_ids(SentencePieceTrainOptions& options) {
  options.pad_id = 0;
  options.eos_id = 1;
  options.unk_id = 2;
  options.bos_id = 3;
}

class SentencePieceTokenizer {
 public:
  // Loads a serialized ModelProto. A missing file, a directory, or a file the library cannot
  // read as a model (truncated, empty, not a model at all) throws heed::Error naming the file
  // with the library's reason.
  static SentencePieceTokenizer load(const std::string& spiece_model);

  // Trains a model with the library's trainer and writes it to options.model_prefix + ".model".
  // Options the library refuses (a vocabulary larger than the corpus allows, a coverage
  // outside [0.98, 1], two specials on one id, a missing input) throw heed::Error naming the
  // input, the options and the library's reason.
  static void train(const SentencePieceTrainOptions& options);

  // The ids of `text`, exactly as the library's Encode (and Python's sp.encode) gives them.
  // Thread-safe.
  std::vector<int32_t> encode(std::string_view text) const;
  // The text the ids spell, as the library's Decode: "▁" becomes a space, the leading one is
  // dropped, control pieces vanish and unknown ones read " ⁇ ". An id outside the
  // vocabulary throws.
  std::string decode(std::span<const int32_t> ids) const;

  // The piece of an id in the model's spelling ("▁the"); throws when out of range.
  const std::string& token(int32_t id) const;
  // The id of a piece, or nothing when the model lacks it (the library would answer unk_id).
  std::optional<int32_t> id(std::string_view piece) const;
  int32_t vocab_size() const;
  // The special ids as the model sets them; -1 when it has no such piece.
  int32_t pad_id() const;
  int32_t unk_id() const;
  int32_t bos_id() const;
  int32_t eos_id() const;
  // Control and unknown pieces (<s>, </s>, <pad>, <unk>): what decode drops or marks.
  bool is_special(int32_t id) const;
  // The model file's bytes, as loaded (what a checkpoint copies as spiece.model).
  const std::string& serialized() const;
  // A fingerprint of the model's bytes (token caches key on it).
  uint64_t fingerprint() const;
  const std::string& source() const { return source_; }

 private:
  struct Impl;  // the library's processor

  SentencePieceTokenizer() = default;
  void check_id(int32_t id) const;

  // Shared by copies: the processor is read-only after loading.
  std::shared_ptr<const Impl> impl_;
  std::string source_;
};

}  // namespace heed::data
