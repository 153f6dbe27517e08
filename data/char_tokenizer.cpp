#include "data/char_tokenizer.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "autograd/error.h"
#include "data/unicode.h"

namespace heed::data {

CharTokenizer::CharTokenizer(Vocab vocab, Unit unit) : vocab_(std::move(vocab)), unit_(unit) {
  const char* specials[] = {kPad, kUnk, kBos, kEos};
  for (int32_t i = 0; i < 4; ++i)
    HEED_CHECK(vocab_.size() > i && vocab_.token(i) == specials[i],
               "{}: character vocabulary must start with [PAD] [UNK] [BOS] [EOS]", vocab_.source());
}

std::vector<std::string> CharTokenizer::split(std::string_view text) const {
  std::vector<std::string> symbols;
  std::u32string cps = decode_utf8(text, "text");
  if (unit_ == Unit::kCharacter) {
    for (char32_t c : cps) symbols.push_back(encode_utf8(std::u32string_view(&c, 1)));
    return symbols;
  }
  std::u32string current;
  for (char32_t c : cps) {
    if (is_split_whitespace(c)) {
      if (!current.empty()) symbols.push_back(encode_utf8(current));
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty()) symbols.push_back(encode_utf8(current));
  return symbols;
}

CharTokenizer CharTokenizer::build(const std::vector<std::string>& texts, Unit unit,
                                   int min_count) {
  CharTokenizer splitter(Vocab(std::vector<std::string>{kPad, kUnk, kBos, kEos}), unit);
  std::map<std::string, int64_t> counts;  // ordered by bytes: deterministic ids
  for (const std::string& text : texts)
    for (std::string& s : splitter.split(text)) ++counts[std::move(s)];
  std::vector<std::string> tokens{kPad, kUnk, kBos, kEos};
  for (const auto& [symbol, count] : counts)
    if (count >= min_count && std::find(tokens.begin(), tokens.end(), symbol) == tokens.end())
      tokens.push_back(symbol);
  return CharTokenizer(Vocab(std::move(tokens)), unit);
}

CharTokenizer CharTokenizer::load(const std::string& path) {
  std::ifstream in(path);
  HEED_CHECK(in.good(), "{}: cannot open character vocabulary", path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
  HEED_CHECK(j.is_object() && j.contains("unit") && j["unit"].is_string() && j.contains("tokens") &&
                 j["tokens"].is_array(),
             "{}: expected {{\"unit\": ..., \"tokens\": [...]}}", path);
  const std::string unit = j["unit"];
  HEED_CHECK(unit == "character" || unit == "whitespace",
             "{}: key 'unit' must be \"character\" or \"whitespace\", got \"{}\"", path, unit);
  std::vector<std::string> tokens;
  for (const auto& t : j["tokens"]) {
    HEED_CHECK(t.is_string(), "{}: key 'tokens' must hold strings", path);
    tokens.push_back(t.get<std::string>());
  }
  HEED_CHECK(!tokens.empty(), "{}: key 'tokens' is empty", path);
  return CharTokenizer(Vocab(std::move(tokens)),
                       unit == "character" ? Unit::kCharacter : Unit::kWhitespaceSymbol);
}

void CharTokenizer::save(const std::string& path) const {
  nlohmann::json j;
  j["unit"] = unit_ == Unit::kCharacter ? "character" : "whitespace";
  j["tokens"] = vocab_.tokens();
  std::ofstream out(path, std::ios::trunc);
  HEED_CHECK(out.good(), "{}: cannot open for writing", path);
  out << j.dump(1) << '\n';
  HEED_CHECK(out.good(), "{}: write failed", path);
}

std::vector<int32_t> CharTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  for (const std::string& s : split(text)) ids.push_back(vocab_.find(s).value_or(unk_id()));
  return ids;
}

std::string CharTokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  for (int32_t id : ids) {
    if (id >= 0 && id < 4) continue;
    if (unit_ == Unit::kWhitespaceSymbol && !out.empty()) out.push_back(' ');
    out += vocab_.token(id);
  }
  return out;
}

}  // namespace heed::data
