#include "data/char_tokenizer.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "data/unicode.h"
#include "io/json_file.h"

namespace heed::data {

namespace {

CharTokenizer::Unit parse_unit(const nlohmann::json& j, const char* key, const std::string& path) {
  HEED_CHECK(j[key].is_string(), "{}: key '{}' must be a string", path, key);
  const std::string unit = j[key];
  HEED_CHECK(unit == "character" || unit == "whitespace",
             "{}: key '{}' must be \"character\" or \"whitespace\", got \"{}\"", path, key, unit);
  return unit == "character" ? CharTokenizer::Unit::kCharacter
                             : CharTokenizer::Unit::kWhitespaceSymbol;
}

}  // namespace

const char* CharTokenizer::unit_name(Unit unit) {
  return unit == Unit::kCharacter ? "character" : "whitespace";
}

CharTokenizer::CharTokenizer(Vocab vocab, Unit unit, Unit target_unit)
    : vocab_(std::move(vocab)), unit_(unit), target_unit_(target_unit) {
  const char* specials[] = {kPad, kUnk, kBos, kEos};
  for (int32_t i = 0; i < 4; ++i)
    HEED_CHECK(vocab_.size() > i && vocab_.token(i) == specials[i],
               "{}: character vocabulary must start with [PAD] [UNK] [BOS] [EOS]", vocab_.source());
}

std::vector<std::string> CharTokenizer::split(std::string_view text, Unit unit) {
  std::vector<std::string> symbols;
  std::u32string cps = decode_utf8(text, "text");
  if (unit == Unit::kCharacter) {
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
  return build_pair(texts, unit, {}, unit, min_count);
}

CharTokenizer CharTokenizer::build_pair(const std::vector<std::string>& sources, Unit unit,
                                        const std::vector<std::string>& targets, Unit target_unit,
                                        int min_count) {
  std::map<std::string, int64_t> counts;  // ordered by bytes: deterministic ids
  for (const std::string& text : sources)
    for (std::string& s : split(text, unit)) ++counts[std::move(s)];
  for (const std::string& text : targets)
    for (std::string& s : split(text, target_unit)) ++counts[std::move(s)];
  std::vector<std::string> tokens{kPad, kUnk, kBos, kEos};
  for (const auto& [symbol, count] : counts)
    if (count >= min_count && std::find(tokens.begin(), tokens.end(), symbol) == tokens.end())
      tokens.push_back(symbol);
  return CharTokenizer(Vocab(std::move(tokens)), unit, target_unit);
}

CharTokenizer CharTokenizer::load(const std::string& path) {
  const nlohmann::json j = io::read_json_file(path);
  HEED_CHECK(j.is_object() && j.contains("unit") && j["unit"].is_string() && j.contains("tokens") &&
                 j["tokens"].is_array(),
             "{}: expected {{\"unit\": ..., \"tokens\": [...]}}", path);
  const Unit unit = parse_unit(j, "unit", path);
  const Unit target_unit = j.contains("target_unit") ? parse_unit(j, "target_unit", path) : unit;
  std::vector<std::string> tokens;
  for (const auto& t : j["tokens"]) {
    HEED_CHECK(t.is_string(), "{}: key 'tokens' must hold strings", path);
    tokens.push_back(t.get<std::string>());
  }
  HEED_CHECK(!tokens.empty(), "{}: key 'tokens' is empty", path);
  Vocab vocab;
  try {
    vocab = Vocab(std::move(tokens));
  } catch (const Error& e) {
    fail("{}: key 'tokens': {}", path, e.what());
  }
  return CharTokenizer(std::move(vocab), unit, target_unit);
}

void CharTokenizer::save(const std::string& path) const {
  nlohmann::json j;
  j["unit"] = unit_name(unit_);
  if (target_unit_ != unit_) j["target_unit"] = unit_name(target_unit_);
  j["tokens"] = vocab_.tokens();
  io::write_json_file(path, j);
}

std::vector<int32_t> CharTokenizer::encode(std::string_view text, Unit unit) const {
  std::vector<int32_t> ids;
  for (const std::string& s : split(text, unit)) ids.push_back(vocab_.find(s).value_or(unk_id()));
  return ids;
}

std::vector<int32_t> CharTokenizer::encode(std::string_view text) const {
  return encode(text, unit_);
}

std::vector<int32_t> CharTokenizer::encode_target(std::string_view text) const {
  return encode(text, target_unit_);
}

std::string CharTokenizer::decode(std::span<const int32_t> ids, Unit unit) const {
  std::string out;
  for (int32_t id : ids) {
    if (id >= 0 && id < 4) continue;
    if (unit == Unit::kWhitespaceSymbol && !out.empty()) out.push_back(' ');
    out += vocab_.token(id);
  }
  return out;
}

}  // namespace heed::data
