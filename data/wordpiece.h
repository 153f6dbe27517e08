#pragma once
// BERT's tokenizer, step for step as transformers' BertTokenizer (tokenization_bert.py):
// clean text, isolate CJK ideographs, NFC, split on whitespace, lower-case and strip accents
// (uncased), split punctuation, then greedy longest-match-first WordPiece with "##".
// Special tokens are looked up in the vocabulary by name, never assumed to have fixed ids.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/vocab.h"

namespace heed::data {

struct WordPieceOptions {
  bool lowercase = true;
  // Unset: follow `lowercase`, as BertTokenizer's strip_accents=None does.
  std::optional<bool> strip_accents;
  bool tokenize_chinese_chars = true;
  int max_input_chars_per_word = 100;
  std::string continuation_prefix = "##";
  std::string unk_token = "[UNK]";
  std::string pad_token = "[PAD]";
  std::string cls_token = "[CLS]";
  std::string sep_token = "[SEP]";
  std::string mask_token = "[MASK]";
};

// Which ids a too-long sequence keeps: its first ones (head, the default, as Hugging Face's
// truncation_side="right"), its last ones (tail), or the first half and the last half of the
// budget, the first rounded up (head_tail: Sun et al. 2019, "How to Fine-Tune BERT for Text
// Classification?", found it best for long documents, whose ends carry signatures and footers).
enum class Truncation { kHead, kTail, kHeadTail };
// Their names in configs (data.truncation), in tokenizer_config.json and on infer's command line.
inline constexpr std::array<std::pair<Truncation, std::string_view>, 3> kTruncationNames{
    {{Truncation::kHead, "head"},
     {Truncation::kTail, "tail"},
     {Truncation::kHeadTail, "head_tail"}}};
// The name of `side` above, and transformers' truncation_side for it: "left" for tail, else
// "right" (transformers cuts one end only, so head_tail reads there as head). A checkpoint's
// tokenizer_config.json records both (heed_truncation, truncation_side).
std::string_view truncation_name(Truncation side);
std::string_view hf_truncation_side(Truncation side);

// Shortens ids to keep_count ids (no-op if it is not longer), dropping from the side that
// `side` gives up.
void truncate_ids(std::vector<int32_t>& ids, size_t keep_count, Truncation side);
// Shortens a text (b null) or a pair to `budget` ids in all, longest first as Hugging Face's
// default: one id at a time from whichever is longer (a's on a tie); `side` says which ids go.
void truncate_longest_first(std::vector<int32_t>& a, std::vector<int32_t>* b, size_t budget,
                            Truncation side);

// What encode() returns: the model inputs for one text or pair, before padding.
struct Encoding {
  std::vector<int32_t> input_ids;
  std::vector<int32_t> token_type_ids;       // 0 through the first [SEP], 1 after
  std::vector<int32_t> special_tokens_mask;  // 1 on [CLS]/[SEP] added here
};

class WordPieceTokenizer {
 public:
  // Throws when the vocabulary has no unk token: every unknown word maps to it.
  explicit WordPieceTokenizer(Vocab vocab, WordPieceOptions options = {});
  static WordPieceTokenizer from_file(const std::string& vocab_path, WordPieceOptions options = {});

  // BasicTokenizer: the words WordPiece sees (normalized, punctuation split). Special token
  // strings present in the text (e.g. "[MASK]") pass through whole, as transformers does.
  // Text must be valid UTF-8 (else heed::Error).
  std::vector<std::string> basic_tokenize(std::string_view text) const;
  // Word pieces of `text` (no [CLS]/[SEP]).
  std::vector<std::string> tokenize(std::string_view text) const;
  // Ids of tokenize(text), no special tokens added.
  std::vector<int32_t> encode_ids(std::string_view text) const;
  // Appends the word-piece ids of one already-normalized word (basic_tokenize output).
  void wordpiece_ids(std::string_view word, std::vector<int32_t>& out) const;

  // [CLS] A [SEP], truncating A so the result has at most max_length ids (0 = no limit).
  Encoding encode(std::string_view text, size_t max_length = 0,
                  Truncation side = Truncation::kHead) const;
  // [CLS] A [SEP] B [SEP] with longest-first truncation: one id at a time from the longer
  // sequence, from B on ties (the slow BertTokenizer's rule). `side` says where in each
  // sequence its lost ids are taken from.
  Encoding encode_pair(std::string_view a, std::string_view b, size_t max_length = 0,
                       Truncation side = Truncation::kHead) const;
  // Same, from ids that have no special tokens yet.
  Encoding build_inputs(std::vector<int32_t> a, std::optional<std::vector<int32_t>> b,
                        size_t max_length, Truncation side = Truncation::kHead) const;

  // BertTokenizer.decode: pieces joined with spaces, "##" continuations glued on, special
  // tokens dropped (or kept as their own words), and the tokenization-space clean-up.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = true,
                     bool clean_up_tokenization_spaces = true) const;

  const Vocab& vocab() const { return vocab_; }
  const WordPieceOptions& options() const { return options_; }
  int32_t vocab_size() const { return vocab_.size(); }
  int32_t unk_id() const { return unk_id_; }
  // These throw, naming the vocabulary file, when the token is not in the vocabulary.
  int32_t pad_id() const;
  int32_t cls_id() const;
  int32_t sep_id() const;
  int32_t mask_id() const;
  // Ids of the special tokens that are present ([PAD] [UNK] [CLS] [SEP] [MASK]).
  const std::vector<int32_t>& special_ids() const { return special_ids_; }
  bool is_special(int32_t id) const;
  // A fingerprint of the vocabulary and every option that changes ids (token cache key).
  uint64_t fingerprint() const;

 private:
  void basic_tokenize_chunk(std::string_view text, std::vector<std::string>& out) const;
  int32_t require(const std::optional<int32_t>& id, const std::string& name) const;

  Vocab vocab_;
  WordPieceOptions options_;
  bool strip_accents_;
  int32_t unk_id_;
  std::optional<int32_t> pad_id_, cls_id_, sep_id_, mask_id_;
  std::vector<int32_t> special_ids_;
  std::vector<std::string> special_strings_;  // present specials, longest first
};

// transformers' clean_up_tokenization: " ." -> "." and friends.
std::string clean_up_tokenization(std::string text);

}  // namespace heed::data
