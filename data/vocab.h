#pragma once
// A WordPiece vocabulary in Hugging Face's vocab.txt form: one token per line, id = 0-based
// line number. Lookups are heterogeneous so the tokenizer's hot loop never allocates.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace heed::data {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class Vocab {
 public:
  Vocab() = default;
  // Throws when `tokens` is empty or lists a token twice.
  explicit Vocab(std::vector<std::string> tokens);

  // Reads vocab.txt. Line ends ("\n" or "\r\n") are stripped, nothing else: a token may be
  // any string, as in transformers' load_vocab. A missing file, a directory, an empty
  // vocabulary, invalid UTF-8 or a token listed twice throws, naming the file (and line).
  static Vocab load(const std::string& path);
  // Writes vocab.txt atomically (io/atomic_file.h): a failed write leaves the old file.
  void save(const std::string& path) const;

  std::optional<int32_t> find(std::string_view token) const {
    auto it = ids_.find(token);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }
  bool contains(std::string_view token) const { return ids_.find(token) != ids_.end(); }
  const std::string& token(int32_t id) const;
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  const std::vector<std::string>& tokens() const { return tokens_; }
  // A 64-bit FNV-1a fingerprint of the tokens in order; token caches key on it.
  uint64_t fingerprint() const;
  const std::string& source() const { return source_; }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids_;
  std::string source_ = "<memory>";
};

}  // namespace heed::data
