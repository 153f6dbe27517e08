#pragma once
// Hugging Face's one-file tokenizer, tokenizer.json (what the tokenizers library writes and
// transformers' fast tokenizers read), for the two families heed tokenizes: BERT's WordPiece and
// GPT-2's byte-level BPE (also RoBERTa's and BART's).
//
// The reader takes what heed can encode id for id and refuses everything else by name, in one
// line naming the file and the JSON path ("tokenizer.json: normalizer.type "NFKC" is not
// supported (heed's WordPiece reads BertNormalizer)"); malformed JSON, wrong types, missing keys,
// repeated keys or ids, and ids that disagree with the vocabulary are refused the same way. Nothing
// that changes ids is dropped: added tokens, the post-processor's template, truncation and padding
// are all kept in the struct.
//
// heed's WordPiece is transformers' slow BertTokenizer, which tokenizers' Rust BertNormalizer
// follows except in three places: Python normalizes to NFC first (a decomposed "e" + U+0301
// meets the vocabulary's "\u00e9"), lower-cases a word-final capital sigma to "\u03c2", and
// starts one CJK block at U+2B820 (Rust: U+2B920). On such text heed's ids differ from
// tokenizers'; tests/data/hf_tokenizer_json_test.cpp lists the cases.
//
// The writer writes what tokenizers itself writes for the same tokenizer: version "1.0", its
// keys in its order, the vocabulary by id, pretty-printed with two spaces and no final newline,
// so a heed-written file is byte for byte the file Hugging Face saves.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/byte_level_bpe.h"
#include "data/wordpiece.h"

namespace heed::data {

// An entry of added_tokens: text matched whole, before the model sees the rest, and given one
// id. heed takes only added tokens that are vocabulary entries with the same id.
struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool single_word = false;  // matched only where no word character touches it
  bool lstrip = false;       // takes the whitespace before it
  bool rstrip = false;       // takes the whitespace after it
  bool normalized = false;   // matched in the normalized text (BPE has no normalizer: the text)
  bool special = true;       // a special token, which decoding may skip
  bool operator==(const AddedToken&) const = default;
};

struct TokenWithId {
  std::string token;
  int32_t id = 0;
  bool operator==(const TokenWithId&) const = default;
};

// One step of a post-processor's template: the ids of sequence A or B, or special tokens, each
// with the token type id its ids get.
struct TemplatePiece {
  enum class Kind { kSequenceA, kSequenceB, kSpecial };
  Kind kind = Kind::kSequenceA;
  int32_t type_id = 0;
  std::string name;                 // kSpecial: its name in the template ("[CLS]")
  std::vector<TokenWithId> tokens;  // kSpecial: what it adds (one token in every common file)
  bool operator==(const TemplatePiece&) const = default;
};

// The ByteLevel component's flags. Only the pre-tokenizer's add_prefix_space changes ids (it is
// ByteLevelBpeOptions::add_prefix_space); the others are kept so a file writes back as it was.
struct ByteLevelFlags {
  bool add_prefix_space = true;
  bool trim_offsets = true;
  bool use_regex = true;
  bool operator==(const ByteLevelFlags&) const = default;
};

enum class PostProcessorType { kNone, kByteLevel, kBert, kRoberta, kTemplate };

// What the post_processor puts around one sequence and around a pair. `single` and `pair` are
// filled for every type, as Hugging Face applies it: null and ByteLevel add nothing (B's type
// id is 1); BertProcessing is [CLS] $A [SEP] and [CLS] $A [SEP] $B:1 [SEP]:1; RobertaProcessing
// <s> $A </s> and <s> $A </s> </s> $B </s> (type ids all 0).
struct PostProcessor {
  PostProcessorType type = PostProcessorType::kNone;
  std::vector<TemplatePiece> single, pair;
  ByteLevelFlags byte_level;  // kByteLevel's flags; kRoberta's trim_offsets, add_prefix_space
  bool operator==(const PostProcessor&) const = default;
};

// truncation: how Hugging Face's encode cuts a long input.
struct TokenizerJsonTruncation {
  enum class Strategy { kLongestFirst, kOnlyFirst, kOnlySecond };
  int64_t max_length = 0;
  Truncation side = Truncation::kHead;  // direction "Right" cuts the end, "Left" the start
  Strategy strategy = Strategy::kLongestFirst;
  int64_t stride = 0;
  bool operator==(const TokenizerJsonTruncation&) const = default;
};

// padding: how Hugging Face's encode pads.
struct TokenizerJsonPadding {
  std::optional<int64_t> fixed_length;  // strategy {"Fixed": n}; unset: "BatchLongest"
  bool pad_left = false;                // direction "Left"
  std::optional<int64_t> pad_to_multiple_of;
  TokenWithId pad;  // pad_token and pad_id, a vocabulary entry
  int32_t pad_type_id = 0;
  bool operator==(const TokenizerJsonPadding&) const = default;
};

struct TokenizerJson {
  // The model: exactly one is set. The WordPiece tokenizer's cls/sep are the post-processor's,
  // its pad the padding's (else "[PAD]"); it keeps "[MASK]" as its mask token.
  std::optional<WordPieceTokenizer> wordpiece;
  std::optional<ByteLevelBpe> bpe;
  std::vector<AddedToken> added_tokens;  // by id
  PostProcessor post_processor;
  std::optional<TokenizerJsonTruncation> truncation;
  std::optional<TokenizerJsonPadding> padding;
  // What the file says that changes no ids, kept so it writes back as it was.
  bool wordpiece_decoder_cleanup = true;  // decoder WordPiece's cleanup
  bool byte_level_trim_offsets = true;    // pre_tokenizer ByteLevel's trim_offsets
  ByteLevelFlags byte_level_decoder;      // decoder ByteLevel's flags

  int32_t vocab_size() const;

  // Hugging Face's encode (without truncation and padding, which the caller applies from the
  // fields above): the added tokens are split out of the text first (non-normalized ones, then
  // normalized ones, leftmost-longest, with their single_word, lstrip and rstrip), the model
  // encodes each piece between them, and with add_special_tokens the post-processor's template
  // puts its special tokens around the ids. special_tokens_mask is 1 on those only.
  //
  // Two ways this differs from the model's own encode: a byte-level BPE with add_prefix_space
  // gets a space before every piece that does not start with ' ' (tokenizers' rule; the
  // ByteLevelBpe's encode follows transformers' slow tokenizer, which adds none before any
  // leading whitespace), and added tokens are found in the text. The WordPiece tokenizer's
  // encode keeps its own special tokens whole in the text either way.
  // Text that is not valid UTF-8 throws heed::Error.
  Encoding encode(std::string_view text, bool add_special_tokens = true) const;
  Encoding encode_pair(std::string_view a, std::string_view b,
                       bool add_special_tokens = true) const;
};

// Reads `path`; every problem throws heed::Error naming the file and the JSON path. Supported:
//   model         WordPiece (unk_token, continuing_subword_prefix, max_input_chars_per_word ->
//                 WordPieceOptions), with normalizer BertNormalizer (clean_text true;
//                 handle_chinese_chars, strip_accents (null: follow lowercase), lowercase),
//                 pre_tokenizer BertPreTokenizer, decoder WordPiece (the model's prefix), a post-
//                 processor of BERT's shape, and added tokens with normalized false;
//                 or BPE (vocab an object of ids 0..N-1, merges as "a b" strings or [a, b]
//                 pairs; dropout and unk_token null; continuing_subword_prefix and
//                 end_of_word_suffix null or ""; fuse_unk, byte_fallback, ignore_merges false),
//                 with normalizer null, pre_tokenizer ByteLevel (use_regex true) and decoder
//                 ByteLevel, and any of the post-processors below.
//   added_tokens  vocabulary entries with the same id, each content and id once.
//   post_processor TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, or null.
//   truncation, padding  null or Hugging Face's parameters.
TokenizerJson read_tokenizer_json(const std::string& path);

// Writes `tokenizer` to `path` atomically (io/atomic_file.h) as tokenizers writes it.
void write_tokenizer_json(const std::string& path, const TokenizerJson& tokenizer);

// BERT's tokenizer.json for a WordPiece tokenizer: BertNormalizer with its options,
// BertPreTokenizer, the WordPiece model and decoder, TemplateProcessing "[CLS] $A [SEP]" and
// "[CLS] $A [SEP] $B:1 [SEP]:1", and added_tokens for the special tokens the vocabulary has
// ([PAD] [UNK] [CLS] [SEP] [MASK] by their option names). Throws when it lacks [CLS] or [SEP].
TokenizerJson bert_tokenizer_json(const WordPieceTokenizer& tokenizer);

enum class BpePostProcessing {
  kGpt2,     // GPT-2: a ByteLevel post-processor, nothing added around the ids
  kRoberta,  // RobertaProcessing: <s> $A </s>, and <s> $A </s> </s> $B </s>
};

struct ByteLevelBpeJsonOptions {
  // added_tokens (special, matched whole in text), each a vocabulary entry: GPT-2's
  // {"<|endoftext|>"}, RoBERTa's {"<s>", "<pad>", "</s>", "<unk>", "<mask>"}.
  std::vector<std::string> special_tokens;
  BpePostProcessing post_processing = BpePostProcessing::kGpt2;
  std::string cls_token = "<s>";  // kRoberta's, each a vocabulary entry
  std::string sep_token = "</s>";
  // kRoberta's mask token, if any: its added token takes the space before it (lstrip), as
  // RoBERTa's own tokenizer.json has it, so "a <mask> b" gives "a", "<mask>", "Ġb".
  std::optional<std::string> mask_token;
};

// A byte-level BPE's tokenizer.json: no normalizer, the ByteLevel pre-tokenizer (add_prefix_space
// from the BPE's options) and decoder, the BPE model, and the chosen post-processing. Throws
// naming a special token the vocabulary lacks.
TokenizerJson byte_level_bpe_tokenizer_json(const ByteLevelBpe& bpe,
                                            const ByteLevelBpeJsonOptions& options);

// The two together, for a model directory: write_tokenizer_json(dir + "/tokenizer.json", ...)
// beside the vocab.txt (or vocab.json and merges.txt) that the tokenizer saved.
void write_tokenizer_json(const std::string& path, const WordPieceTokenizer& tokenizer);
void write_tokenizer_json(const std::string& path, const ByteLevelBpe& bpe,
                          const ByteLevelBpeJsonOptions& options);

}  // namespace heed::data
