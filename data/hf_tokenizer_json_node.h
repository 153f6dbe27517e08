#pragma once
// Reading tokenizer.json: a value of the file together with its JSON path, so every message
// names both. Internal to the hf_tokenizer_json_*.cpp files.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/error.h"

namespace heed::data::hf_tokenizer_json {

using Json = nlohmann::json;

// A value as a message shows it: short, since a damaged file can hold anything.
std::string shown(const Json& value);

class Node {
 public:
  Node(const Json& value, const std::string& file, std::string path)
      : value_(&value), file_(&file), path_(std::move(path)) {}

  const Json& json() const { return *value_; }
  const std::string& file() const { return *file_; }
  std::string name() const { return path_.empty() ? "the file" : path_; }

  template <typename... Args>
  [[noreturn]] void fail_here(fmt::format_string<Args...> what, Args&&... args) const {
    fail("{}: {} {}", *file_, name(), fmt::format(what, std::forward<Args>(args)...));
  }
  void expect(bool ok, std::string_view wanted) const {
    if (!ok) fail_here("is {}; it must be {}", shown(*value_), wanted);
  }
  // A value heed does not read: `why` says what it reads instead.
  [[noreturn]] void unsupported(std::string_view why) const {
    fail_here("{} is not supported ({})", shown(*value_), why);
  }

  // A member of this object that must be there (null counts as there).
  Node at(std::string_view key) const;
  // A member that may be absent or null.
  std::optional<Node> get(std::string_view key) const;
  size_t size() const;
  Node operator[](size_t i) const;

  std::string string() const;
  bool boolean() const;
  // A whole number in [low, high] (3, and also 3.0, as some writers spell integers).
  int64_t integer(int64_t low, int64_t high) const;
  int32_t id() const { return static_cast<int32_t>(integer(0, INT32_MAX)); }
  bool is_string(std::string_view s) const { return value_->is_string() && *value_ == s; }

 private:
  const Json* value_;
  const std::string* file_;
  std::string path_;
};

// Parses the file, refusing a key that appears twice in one object: JSON readers keep one of
// the two values (which one differs), and in model.vocab the other id would have no token.
Json parse_json(const std::string& path);

}  // namespace heed::data::hf_tokenizer_json
