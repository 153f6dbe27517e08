#pragma once
// A tokenizer for character-level tasks (e.g. grapheme-to-phoneme): every Unicode code point
// is a token, or, in whitespace mode, every whitespace-separated symbol ("HH AH0 L OW1").
// A seq2seq pair may split its two sides differently (characters in, phoneme symbols out)
// over one shared vocabulary: `unit` splits sources (encode), `target_unit` splits targets
// (encode_target) and joins outputs (decode). The vocabulary is built from training text:
// special tokens first, then the symbols seen at least min_count times, sorted by their
// UTF-8 bytes (deterministic for a corpus).
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
  // "character" or "whitespace", as the JSON file and the config name them.
  static const char* unit_name(Unit unit);
  static constexpr const char* kPad = "[PAD]";
  static constexpr const char* kUnk = "[UNK]";
  static constexpr const char* kBos = "[BOS]";
  static constexpr const char* kEos = "[EOS]";

  static CharTokenizer build(const std::vector<std::string>& texts, Unit unit, int min_count = 1);
  // One vocabulary over sources split by `unit` and targets split by `target_unit`.
  static CharTokenizer build_pair(const std::vector<std::string>& sources, Unit unit,
                                  const std::vector<std::string>& targets, Unit target_unit,
                                  int min_count = 1);
  // The JSON file written by save() (atomically): {"unit": "character"|"whitespace",
  // "tokens": [...]}, plus "target_unit" when it differs from "unit". A token listed twice
  // throws.
  static CharTokenizer load(const std::string& path);
  void save(const std::string& path) const;

  // Unknown symbols map to [UNK]; invalid UTF-8 throws.
  std::vector<int32_t> encode(std::string_view text) const;
  std::vector<int32_t> encode_target(std::string_view text) const;
  // Target symbols joined (characters) or space-separated (whitespace mode); specials skipped.
  std::string decode(std::span<const int32_t> ids) const { return decode(ids, target_unit_); }
  std::string decode_source(std::span<const int32_t> ids) const { return decode(ids, unit_); }
  std::vector<std::string> split(std::string_view text) const { return split(text, unit_); }
  static std::vector<std::string> split(std::string_view text, Unit unit);

  const Vocab& vocab() const { return vocab_; }
  int32_t vocab_size() const { return vocab_.size(); }
  Unit unit() const { return unit_; }
  Unit target_unit() const { return target_unit_; }
  int32_t pad_id() const { return 0; }
  int32_t unk_id() const { return 1; }
  int32_t bos_id() const { return 2; }
  int32_t eos_id() const { return 3; }

 private:
  CharTokenizer(Vocab vocab, Unit unit, Unit target_unit);
  std::vector<int32_t> encode(std::string_view text, Unit unit) const;
  std::string decode(std::span<const int32_t> ids, Unit unit) const;
  Vocab vocab_;
  Unit unit_;
  Unit target_unit_;
};

}  // namespace heed::data
