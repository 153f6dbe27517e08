#include "data/byte_level_bpe_files.h"

#include <nlohmann/json.hpp>
#include <unordered_set>

#include "base/error.h"
#include "data/unicode.h"
#include "io/text_file.h"

namespace heed::data {
namespace {

// Parses vocab.json, refusing a key that appears twice: JSON readers keep one of the two ids
// (Python's json the last), leaving the other id without a token.
nlohmann::json parse_vocab_json(const std::string& path) {
  const std::string text = io::read_text_file(path);
  std::unordered_set<std::string> keys;
  const auto on_event = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& j) {
    if (event == nlohmann::json::parse_event_t::key && depth == 1) {
      HEED_CHECK(keys.insert(j.get<std::string>()).second, "{}: the token '{}' is listed twice",
                 path, j.get<std::string>());
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, on_event);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
}

}  // namespace

std::vector<std::string> read_vocab_json(const std::string& path) {
  const nlohmann::json j = parse_vocab_json(path);
  HEED_CHECK(j.is_object(), "{}: expected a JSON object of token -> id, not {}", path,
             j.type_name());
  HEED_CHECK(!j.empty(), "{}: the vocabulary is empty", path);
  const int64_t size = static_cast<int64_t>(j.size());
  HEED_CHECK(size <= INT32_MAX, "{}: {} tokens are more than 32-bit ids can number", path, size);
  std::vector<std::string> tokens(static_cast<size_t>(size));
  std::vector<bool> taken(tokens.size(), false);
  for (const auto& [token, value] : j.items()) {
    HEED_CHECK(value.is_number_integer(), "{}: the id of '{}' is {}; it must be a whole number",
               path, token, value.dump());
    const int64_t id = value.get<int64_t>();
    // Ids index the embedding matrix, so they must fill 0..size-1: a gap would be a row that
    // no token owns.
    HEED_CHECK(id >= 0 && id < size, "{}: the id of '{}' is {}; the {} ids must run from 0 to {}",
               path, token, value.dump(), size, size - 1);
    HEED_CHECK(!taken[id], "{}: the tokens '{}' and '{}' both have id {}", path, tokens[id], token,
               id);
    taken[id] = true;
    tokens[id] = token;
  }
  return tokens;
}

std::vector<std::pair<std::string, std::string>> read_merges_txt(const std::string& path,
                                                                 std::vector<size_t>& lines) {
  const std::string text = io::read_text_file(path);
  std::vector<std::pair<std::string, std::string>> merges;
  std::string_view rest = text;
  size_t line_no = 0;
  while (!rest.empty()) {
    const size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_no == 1 && line.starts_with("#version")) continue;
    if (size_t bad = find_invalid_utf8(line); bad != std::string_view::npos)
      fail("{}:{}: invalid UTF-8 at byte {} of the line", path, line_no, bad);
    const size_t space = line.find(' ');
    HEED_CHECK(space != std::string_view::npos && space > 0 && space + 1 < line.size() &&
                   line.find(' ', space + 1) == std::string_view::npos,
               "{}:{}: '{}' is not a merge (two pieces separated by one space)", path, line_no,
               line);
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
    lines.push_back(line_no);
  }
  return merges;
}

}  // namespace heed::data
