#pragma once
// A tokenizer for character-level tasks (e.g. grapheme-to-phoneme): every Unicode code point
// is a token, or, in whitespace mode, every whitespace-separated symbol ("HH AH0 L OW1").
// The vocabulary is built from training text: special tokens first, then the symbols seen
// at least min_count times, sorted by their UTF-8 bytes (deterministic for a corpus).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/vocab.h"

namespace heed::data {

class CharTokenizer {
 public:
  enum class Unit { kCharacter, kWhitespaceSymbol };
  static constexpr const char* kPad = "[PAD]";
  static constexpr const char* kUnk = "[UNK]";
  static constexpr const char* kBos = "[BOS]";
  static constexpr const char* kEos = "[EOS]";

  static CharTokenizer build(const std::vector<std::string>& texts, Unit unit, int min_count = 1);
  // The JSON file written by save(): {"unit": "character"|"whitespace", "tokens": [...]}.
  static CharTokenizer load(const std::string& path);
  void save(const std::string& path) const;

  // Unknown symbols map to [UNK]; invalid UTF-8 throws.
  std::vector<int32_t> encode(std::string_view text) const;
  // Symbols joined (characters) or space-separated (whitespace mode); specials skipped.
  std::string decode(std::span<const int32_t> ids) const;
  std::vector<std::string> split(std::string_view text) const;

  const Vocab& vocab() const { return vocab_; }
  int32_t vocab_size() const { return vocab_.size(); }
  Unit unit() const { return unit_; }
  int32_t pad_id() const { return 0; }
  int32_t unk_id() const { return 1; }
  int32_t bos_id() const { return 2; }
  int32_t eos_id() const { return 3; }

 private:
  CharTokenizer(Vocab vocab, Unit unit);
  Vocab vocab_;
  Unit unit_;
};

}  // namespace heed::data
