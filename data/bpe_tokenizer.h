#pragma once
// A byte-level BPE with the special tokens of its model: GPT-2's (<|endoftext|> as bos, eos and
// unk; nothing added around a text) or RoBERTa's and BART's (<s> text </s>, <pad>, <mask>, a
// prefix space). It reads and writes the directory Hugging Face's GPT2Tokenizer and
// RobertaTokenizer read: vocab.json, merges.txt, tokenizer_config.json and
// special_tokens_map.json.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/byte_level_bpe.h"
#include "data/hf_tokenizer_json.h"
#include "data/wordpiece.h"

namespace heed::data {

// The special tokens by role, as transformers names them; unset: the model has none.
struct BpeSpecialTokens {
  std::optional<std::string> bos, eos, unk, pad, mask, cls, sep;
};

enum class BpeTemplate {
  kGpt2,     // the ids of the text alone
  kRoberta,  // <s> text </s>, and <s> a </s></s> b </s> for pairs
};

class BpeTokenizer {
 public:
  // Every special token named must be in the vocabulary (heed::Error names it otherwise).
  BpeTokenizer(ByteLevelBpe bpe, BpeSpecialTokens specials, BpeTemplate layout);
  // GPT-2's choices: <|endoftext|> as bos, eos and unk, no template.
  static BpeTokenizer gpt2(ByteLevelBpe bpe);

  // A directory holding vocab.json and merges.txt; tokenizer_config.json (tokenizer_class
  // GPT2Tokenizer, RobertaTokenizer or BartTokenizer; add_prefix_space; the *_token keys, as
  // strings or {"content": ...} objects) and special_tokens_map.json, when present, say the
  // rest; without them it is GPT-2's.
  static BpeTokenizer load(const std::string& dir);
  // The byte-level BPE of a Hugging Face tokenizer.json: RoBERTa's layout when its
  // post-processor puts tokens around a text (their cls and sep roles; <s>, </s>, <unk>,
  // <pad>, <mask> by name among its added tokens), else GPT-2's roles for <|endoftext|>.
  static BpeTokenizer from_tokenizer_json(const TokenizerJson& json);
  // Writes the files load() reads (and transformers' tokenizers read) into `dir`, and
  // tokenizer.json, which transformers' fast tokenizer reads first. tokenizer_config.json
  // records model_max_length and how inputs were cut (`truncation`), as save_wordpiece does.
  void save(const std::string& dir, int64_t model_max_length,
            Truncation truncation = Truncation::kHead) const;

  const ByteLevelBpe& bpe() const { return bpe_; }
  const BpeSpecialTokens& specials() const { return specials_; }
  BpeTemplate layout() const { return layout_; }
  // "GPT2Tokenizer" or "RobertaTokenizer".
  std::string_view class_name() const;

  std::vector<int32_t> encode(std::string_view text) const { return bpe_.encode(text); }
  // The ids with the template's special tokens around them.
  std::vector<int32_t> encode_with_specials(std::string_view text) const;
  // RoBERTa's model inputs from ids without special tokens: <s> a </s>, or <s> a </s></s> b </s>
  // (one token type), cut to max_length (0: no limit) as WordPieceTokenizer::build_inputs cuts
  // (longest first for pairs; `side` says which ids go). GPT-2's layout has no such template.
  Encoding build_inputs(std::vector<int32_t> a, std::optional<std::vector<int32_t>> b,
                        size_t max_length, Truncation side) const;
  const std::vector<int32_t>& special_ids() const { return special_ids_; }
  // The text of the ids without the special tokens, invalid UTF-8 as U+FFFD.
  std::string decode(std::span<const int32_t> ids) const;

  // The id of a role's token, or nothing when the model has no such token.
  std::optional<int32_t> bos_id() const { return bos_; }
  std::optional<int32_t> eos_id() const { return eos_; }
  std::optional<int32_t> pad_id() const { return pad_; }
  std::optional<int32_t> mask_id() const { return mask_; }
  bool is_special(int32_t id) const;
  // A fingerprint of the vocabulary, the merges and every option that changes ids.
  uint64_t fingerprint() const;

 private:
  ByteLevelBpe bpe_;
  BpeSpecialTokens specials_;
  BpeTemplate layout_;
  std::optional<int32_t> bos_, eos_, pad_, mask_, cls_, sep_;
  std::vector<int32_t> special_ids_;  // sorted
};

}  // namespace heed::data
