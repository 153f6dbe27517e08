#pragma once
// GPT-2's byte-level BPE, id for id as OpenAI's encoder.py (and Hugging Face's GPT2Tokenizer,
// RoBERTa's and BART's, and tiktoken's "gpt2"): text is cut into words by GPT-2's pattern run
// (data/gpt2_split.h), each word's UTF-8 bytes become visible symbols (bytes_to_unicode),
// and adjacent symbols are merged by the rank of their line in merges.txt. Every byte string
// has a spelling, so there is no unknown token and decode gives back the exact bytes.
//
// encode() reads the whole text as ordinary text, as tiktoken's encode_ordinary: a special
// token's spelling in it ("<|endoftext|>") is cut into ordinary pieces. Special tokens are the
// business of whoever adds them around the ids.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "data/byte_symbols.h"
#include "data/vocab.h"

namespace heed::data {

struct ByteLevelBpeOptions {
  // RoBERTa and BART: a space before a text that does not start with whitespace, so its first
  // word is spelled as a word inside a sentence ("Ġhello"). GPT-2: false.
  bool add_prefix_space = false;
  // How many words' ids encode() remembers; the cache is emptied when full, so memory stays
  // bounded on any corpus. 0 turns it off.
  // 131,072 words (a few MB) hold an English corpus's common words: at Hugging Face's 10,000
  // the pretraining corpus (140,000 distinct words) emptied it 65 times a pass.
  size_t cache_capacity = size_t{1} << 17;
};

class ByteLevelBpe {
 public:
  // Reads Hugging Face's vocab.json (a JSON object, token -> id, the ids 0..N-1 each once) and
  // merges.txt (an optional "#version" first line, then one merge "a b" per line, ranked by
  // order). A file that is missing or malformed, a merge naming a piece or making a token
  // that vocab.json lacks, or a byte without a symbol throws heed::Error naming the file (and
  // the line of merges.txt). A merges.txt cut at a line end cannot be told from a shorter one.
  static ByteLevelBpe load(const std::string& vocab_json, const std::string& merges_txt,
                           ByteLevelBpeOptions options = {});
  // The same from parts already in memory (what load() reads, or tokenizer.json holds): the
  // vocabulary entries by id in vocab.json's spelling, and the merges in rank order. An empty
  // vocabulary, a token listed twice or not UTF-8, a byte without a symbol, a merge naming a
  // piece or making a token that the vocabulary lacks, or a merge listed twice throws
  // heed::Error naming `source` (and the merge as "merges[i]").
  static ByteLevelBpe from_parts(std::vector<std::string> tokens_by_id,
                                 std::vector<std::pair<std::string, std::string>> merges,
                                 ByteLevelBpeOptions options = {},
                                 const std::string& source = "byte-level BPE");

  // The ids of `utf8`. Text that is not valid UTF-8 throws heed::Error naming the byte
  // offset: OpenAI's, Hugging Face's and tiktoken's encoders all take decoded text (a Python
  // str), so none of them has an answer for invalid bytes to reproduce. Safe to call from
  // several threads at once.
  std::vector<int32_t> encode(std::string_view utf8) const;
  // The words GPT-2's pattern cuts `utf8` into (after the prefix space, if added), in order;
  // they concatenate to the text. Same UTF-8 rule as encode.
  std::vector<std::string> pre_tokenize(std::string_view utf8) const;

  // The bytes the ids spell, exactly. An id outside the vocabulary throws.
  std::string decode_bytes(std::span<const int32_t> ids) const;
  // decode_bytes as text: invalid UTF-8 (ids that split a character) becomes U+FFFD, as
  // Hugging Face's errors="replace".
  std::string decode(std::span<const int32_t> ids) const;

  // The vocabulary entry of an id, in vocab.json's spelling ("Ġhello"); throws when out of range.
  const std::string& token(int32_t id) const { return vocab_.token(id); }
  std::optional<int32_t> id(std::string_view token) const { return vocab_.find(token); }
  // Writes dir/vocab.json and dir/merges.txt as Hugging Face's BPE model.save does
  // (save_byte_level_bpe).
  void save(const std::string& dir) const;
  // The merges in rank order, as (left, right) in vocab.json's spelling.
  std::vector<std::pair<std::string, std::string>> merge_list() const;
  // A fingerprint of the vocabulary and the merges (token caches key on it).
  uint64_t fingerprint() const;
  int32_t vocab_size() const { return vocab_.size(); }
  const ByteLevelBpeOptions& options() const { return options_; }

 private:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  // The compiled pattern and the word cache: shared by copies, which are equally thread-safe.
  struct Engine;

  // How messages name merge i: "merges.txt:5" (its line) or "SOURCE: merges[4]".
  struct MergeNames;

  ByteLevelBpe() = default;
  static ByteLevelBpe build(std::vector<std::string> tokens_by_id,
                            const std::vector<std::pair<std::string, std::string>>& merges,
                            ByteLevelBpeOptions options, const std::string& vocab_source,
                            const MergeNames& merge_names);
  void set_vocab(std::vector<std::string> tokens_by_id, const std::string& source);
  void check_byte_symbols(const std::string& source);
  void add_merges(const std::vector<std::pair<std::string, std::string>>& merges,
                  const MergeNames& names);
  // Checks the UTF-8 and adds the prefix space when asked (into `storage`).
  std::string_view prepare(std::string_view text, std::string& storage) const;
  std::vector<std::string_view> split_words(std::string_view text) const;
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;
  std::vector<int32_t> merge_word(std::string_view word) const;

  ByteLevelBpeOptions options_;
  Vocab vocab_;
  std::vector<std::string> token_bytes_;        // id -> the bytes it spells
  std::array<int32_t, 256> byte_ids_{};         // byte -> id of its one-symbol token
  std::unordered_map<uint64_t, Merge> merges_;  // (left id << 32 | right id) -> merge
  std::shared_ptr<Engine> engine_;
};

}  // namespace heed::data
