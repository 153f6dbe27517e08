#pragma once
// SentencePiece models (T5's, ALBERT's and mT5's spiece.model) loaded, run and trained through
// Google's libsentencepiece: the model is a serialized protobuf whose normalizer and segmenter
// only the library implements faithfully, so heed never parses or re-implements it
// (REFERENCE.md 10). The library's headers stay in the .cpp; errors it reports come back as
// heed::Error with its own reason.
//
// encode() adds no special tokens (no </s>, no <s>): as with ByteLevelBpe, they are the
// business of whoever puts the ids into a sequence.
//
// T5's sentinels: with_extra_ids(n) appends n pieces <extra_id_0>..<extra_id_{n-1}> after the
// model's own, numbered backwards as transformers' T5Tokenizer numbers them (<extra_id_0> is the
// last id, vocab_size() - 1). They are special pieces: encode() finds them in a text (dropping
// the white space around them, as T5Tokenizer's added tokens do), decode() spells them.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
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
  // This tokenizer with `count` sentinels after the model's pieces (0: none); a count over
  // kMaxExtraIds throws.
  SentencePieceTokenizer with_extra_ids(int32_t count) const;
  static constexpr int32_t kMaxExtraIds = 1000;

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
  // The model's pieces and the sentinels after them.
  int32_t vocab_size() const;
  // The model's own pieces (the ids below the sentinels).
  int32_t piece_count() const;
  int32_t extra_ids() const { return extra_ids_; }
  // The id of <extra_id_k>; throws when the tokenizer has no such sentinel.
  int32_t sentinel_id(int32_t k) const;
  bool is_sentinel(int32_t id) const { return id >= piece_count() && id < vocab_size(); }
  // The special ids as the model sets them; -1 when it has no such piece.
  int32_t pad_id() const;
  int32_t unk_id() const;
  int32_t bos_id() const;
  int32_t eos_id() const;
  // Control and unknown pieces (<s>, </s>, <pad>, <unk>) and the sentinels.
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
  std::vector<int32_t> encode_pieces(std::string_view text) const;  // the library alone
  std::string decode_pieces(std::span<const int32_t> ids) const;

  // The number k of "<extra_id_k>" at the start of `text` when this tokenizer has that
  // sentinel, with the text's length; nothing otherwise.
  std::optional<std::pair<int32_t, size_t>> sentinel_at(std::string_view text) const;

  // Shared by copies: the processor is read-only after loading.
  std::shared_ptr<const Impl> impl_;
  std::string source_;
  int32_t extra_ids_ = 0;
  // The sentinels' spellings, <extra_id_0> first (shared by copies).
  std::shared_ptr<const std::vector<std::string>> sentinel_names_;
};

}  // namespace heed::data
